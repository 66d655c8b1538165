#!/bin/sh
# make test-oracle: llama.cpp and the exact reference on the generated test models.
#
#   tests/oracle/run.sh LOGITLAB GEN_MODEL
#
# 1. builds llama.cpp (fetch-llama.sh, once) and llama_oracle (build-oracle.sh);
# 2. generates the models of tests/oracle/models.txt with GEN_MODEL into build/oracle/models/;
# 3. checks that llama.cpp's gguf-py reads each file as ref.py does (check_dequant.py);
# 4. runs llama_oracle and ref.py (exact, and once more rounding activations as llama.cpp
#    does, to show what explains the difference) on the prompts of tests/oracle/prompts.txt;
# 5. compares them (compare.py: token ids, logits within the type's tolerance, greedy
#    continuations equal on F32) and writes the goldens tests/golden/model/NAME.llama.txt and
#    NAME.ref.txt, saying whether they changed;
# 6. compares logitlab's own rows with the exact reference (the HOOK below).
# Exit status 0 only if every comparison passed.
set -eu
# newer A B: A was modified after B (POSIX sh has no -nt).
newer() { [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]; }
LOGITLAB=${1:-build/logitlab}
GEN=${2:-build/gen_model}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/oracle
OUT=$ROOT/build/oracle
MODELS=$OUT/models
RES=$OUT/out
GOLD=$ROOT/tests/golden/model
PY=/usr/bin/python3 # Debian's, with numpy
# llama.cpp's results do not depend on its thread count (each output of a product is one
# thread's work; run with 1 and 2, the files are identical), but on a loaded 2-core machine
# its spinning threads make 2 about nine times slower than 1.
THREADS=${ORACLE_THREADS:-1}
cd "$ROOT"

if ! $PY -c 'import numpy' 2>/dev/null; then
	echo "run.sh: $PY has no numpy (apt-get install python3-numpy)" >&2
	exit 3
fi
[ -x "$GEN" ] || make --no-print-directory "$GEN"
"$HERE/fetch-llama.sh"
"$HERE/build-oracle.sh"
COMMIT=$(cut -c1-12 "$OUT/llama-commit.txt")
mkdir -p "$MODELS" "$RES" "$GOLD"

# The model list without comments: NAME TYPE ARGS... (ORACLE_ONLY, an extended regular
# expression, keeps the rows whose name it matches: a quicker run while working on a few).
models() {
	grep -v '^#' "$HERE/models.txt" | grep -v '^[[:space:]]*$' | grep -E "^(${ORACLE_ONLY:-.*})[[:space:]]"
}

echo "== generating $(models | wc -l) models with $GEN"
QUANTIZE=$OUT/llama-build/bin/llama-quantize
models | while read -r name type args; do
	f=$MODELS/$name.gguf
	case $args in
	"quantize "*) # llama.cpp's own mix, from an F32 model listed above it
		src=$MODELS/${args#quantize }.gguf
		if [ ! -f "$f" ] || newer "$src" "$f"; then
			"$QUANTIZE" "$src" "$f" "$type" >"$RES/$name.quantize.log" 2>&1 ||
				{ echo "llama-quantize $type failed: see $RES/$name.quantize.log" >&2; exit 3; }
		fi
		;;
	*)
		if [ ! -f "$f" ] || newer "$GEN" "$f" || newer "$HERE/models.txt" "$f"; then
			# shellcheck disable=SC2046 # args is a list of options; @ORACLE: this folder
			"$GEN" $(printf '%s' "$args" | sed "s|@ORACLE|$OUT|g") --type "$type" -o "$f"
		fi
		;;
	esac
done

echo "== gguf-py (llama.cpp's reader) against ref.py's parser and dequantization"
# shellcheck disable=SC2046
$PY "$HERE/check_dequant.py" "$OUT/llama.cpp/gguf-py" $(models | awk -v d="$MODELS" '{print d "/" $1 ".gguf"}')

rm -f "$RES/failed"
# A model that puts no BOS first (qwen2's conventions) has no token to run for the empty
# prompt, in llama.cpp as in logitlab (which refuses it in one line): its prompts are the
# others.
grep -v '^""$' "$HERE/prompts.txt" >"$RES/prompts-nobos.txt"
prompts_for() { # gen_model's arguments
	case " $1 " in
	*" --arch qwen2 "* | *" --arch qwen3 "*) echo "$RES/prompts-nobos.txt" ;;
	*) echo "$HERE/prompts.txt" ;;
	esac
}

echo "== llama.cpp $COMMIT and the exact reference, $(grep -vc '^#' "$HERE/prompts.txt") prompts"
models | while read -r name type args; do
	f=$MODELS/$name.gguf
	gen="$args --type $type"
	"$OUT/llama_oracle" -m "$f" --prompts "$(prompts_for "$args")" --name "$name" --gen "$gen" \
		--threads "$THREADS" --commit "$COMMIT" --save-logits "$RES/$name.llama.npy" >"$RES/$name.llama.txt"
	$PY "$HERE/ref.py" -m "$f" --oracle "$RES/$name.llama.txt" --name "$name" --gen "$gen" \
		--save-logits "$RES/$name.ref.npy" >"$RES/$name.ref.txt"
	$PY "$HERE/ref.py" -m "$f" --oracle "$RES/$name.llama.txt" --name "$name" --gen "$gen" \
		--mimic-llama --no-greedy --save-logits "$RES/$name.mimic.npy" >"$RES/$name.mimic.txt"
done

echo "== llama.cpp against the exact reference (dev: largest |difference| / sd of the row)"
models | while read -r name type args; do
	greedy=""
	[ "$type" = F32 ] && greedy=--exact-greedy
	$PY "$HERE/compare.py" --type "$type" $greedy --npy "$RES/$name.llama.npy" "$RES/$name.ref.npy" \
		"$RES/$name.llama.txt" "$RES/$name.ref.txt" || echo "$name" >>"$RES/failed"
done

echo "== the same, the reference rounding activations as llama.cpp does (informative)"
models | while read -r name type args; do
	$PY "$HERE/compare.py" --type "$type" --tol 1 --name "$name~llama" \
		--npy "$RES/$name.llama.npy" "$RES/$name.mimic.npy" \
		"$RES/$name.llama.txt" "$RES/$name.mimic.txt" | head -n 1
done

# ===================================================================================== HOOK
# logitlab's own numbers against the exact reference, to float rounding (LOGITLAB_TOL, in sd
# of the row): logitlab_row writes one float32 row (the V logits of the prompt's last
# position, `show --save-logits`) to $3 and the prompt's token ids (the JSON report's
# context), on one line, to stdout.
LOGITLAB_TOL=${LOGITLAB_TOL:-1e-4}
logitlab_row() { # MODEL SPECIAL(0|1) OUT.npy, the prompt's bytes on stdin
	special=""
	[ "$2" = 1 ] && special=--special
	# -f /dev/stdin keeps the prompt byte for byte (trailing newlines too)
	# shellcheck disable=SC2086 # $special is one word or none
	"$LOGITLAB" show --model "$1" -f /dev/stdin $special --save-logits "$3" --force \
		--format json --top 1 | $PY -c 'import json,sys; print(*json.load(sys.stdin)["context"])'
}
# ========================================================================== end of the HOOK

echo "== logitlab ($LOGITLAB) against the exact reference"
models | while read -r name type args; do
	# The model's prompts as bytes, one file each: NAME.prompt.K, and NAME.prompt.K.special.
	rm -f "$RES/$name.logitlab.ids" "$RES/$name".prompt.*
	$PY "$HERE/prompt_bytes.py" "$(prompts_for "$args")" "$RES/$name.prompt" >/dev/null
	k=0
	ok=1
	rows=""
	while [ -f "$RES/$name.prompt.$k" ]; do
		if ! logitlab_row "$MODELS/$name.gguf" "$(cat "$RES/$name.prompt.$k.special")" \
			"$RES/$name.logitlab.$k.npy" <"$RES/$name.prompt.$k" >>"$RES/$name.logitlab.ids"; then
			ok=0
			break
		fi
		rows="$rows $RES/$name.logitlab.$k.npy"
		k=$((k + 1))
	done
	if [ $ok = 0 ]; then
		echo "$name: logitlab failed on prompt $k (logitlab_row)"
		echo "$name~logitlab" >>"$RES/failed"
		continue
	fi
	# shellcheck disable=SC2086
	$PY -c 'import sys, numpy as np; np.save(sys.argv[1], np.stack([np.load(f).reshape(-1) for f in sys.argv[2:]]))' \
		"$RES/$name.logitlab.npy" $rows
	$PY "$HERE/summarize.py" --oracle "$RES/$name.llama.txt" --rows "$RES/$name.logitlab.npy" \
		--tokens "$RES/$name.logitlab.ids" --source "logitlab" >"$RES/$name.logitlab.txt"
	$PY "$HERE/compare.py" --type "$type" --tol "$LOGITLAB_TOL" --name "$name~logitlab" \
		--npy "$RES/$name.logitlab.npy" "$RES/$name.ref.npy" \
		"$RES/$name.logitlab.txt" "$RES/$name.ref.txt" || echo "$name~logitlab" >>"$RES/failed"
done

echo "== the tokenizer corpus: llama.cpp and the npm tokenizers (tests/tokenizer/oracle.sh)"
mkdir -p "$OUT/tokenizer"
if GEN_MODEL="$GEN" "$ROOT/tests/tokenizer/oracle.sh" "$OUT/tokenizer" >"$OUT/tokenizer.log" 2>&1; then
	for f in tokenizer-llama3.txt tokenizer-llama2.txt; do
		if cmp -s "$OUT/tokenizer/$f" "$ROOT/tests/golden/$f"; then
			echo "  $f: as committed"
		else
			cp "$OUT/tokenizer/$f" "$ROOT/tests/golden/$f"
			echo "  written: $f"
		fi
	done
else
	echo "tokenizer oracle failed: $(tail -n 3 "$OUT/tokenizer.log")"
	echo tokenizer >>"$RES/failed"
fi

echo "== goldens (tests/golden/model/)"
# (not the rows made from llama.cpp's files, which tests/model.sh could not remake)
models | grep -v ' quantize ' | grep -v -- '--vocab-gguf' | while read -r name type args; do
	for side in llama ref; do
		if ! cmp -s "$RES/$name.$side.txt" "$GOLD/$name.$side.txt" 2>/dev/null; then
			cp "$RES/$name.$side.txt" "$GOLD/$name.$side.txt"
			echo "  written: $name.$side.txt"
		fi
	done
done
git -C "$ROOT" status --short -- tests/golden/model | sed 's/^/  git: /'

if [ -f "$RES/failed" ]; then
	echo "test-oracle: FAILED: $(sort -u "$RES/failed" | tr '\n' ' ')"
	rm -f "$RES/failed"
	exit 1
fi
echo "test-oracle: all comparisons passed"
