#!/bin/sh
# make test-oracle: llama.cpp's tokenizer test vectors against `logitlab tokenize`.
#
#   tests/oracle/vocab.sh LOGITLAB [MODELS]
#
# MODELS (default build/oracle/llama.cpp/models, fetched by fetch-llama.sh) holds llama.cpp's
# vocabulary-only files ggml-vocab-NAME.gguf, most with NAME.gguf.inp (texts, each followed
# by a line __ggml_vocab_test__) and NAME.gguf.out (llama.cpp's ids for each, add_special and
# parse_special off: its tests/test-tokenizer-0.cpp). For each file this prints how many
# texts logitlab tokenizes as llama.cpp does (tests/vocab.sh), or why logitlab refuses the
# file; a file without vectors is only opened. A pre-tokenizer llama.cpp ships no file of is
# checked on the tokens of one it ships (DERIVED, PRE:BASE): ggml-vocab-BASE.gguf copied with
# tokenizer.ggml.pre PRE, and llama.cpp's ids under it for BASE's texts and for
# tests/oracle/split-texts.inp (cases, camelCase, contractions, marks, blanks, slashes after
# punctuation, scripts, then 40 random strings over such characters: texts where splits
# differ), both made now by build/oracle/llama_tokenize (built by build-oracle.sh from
# llama.cpp's static libraries), as llama.cpp has no .out for them. Then the llama-bpe and
# llama-spm vectors are copied to tests/golden/vocab/, which `make test` runs on the in-tree
# vocabularies (the same as those two files: data/README.md), saying whether they changed.
# Exit status 0 when every file logitlab opens gives llama.cpp's ids on every text and the
# REQUIRED ones open.
set -u
LOGITLAB=${1:-build/logitlab}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODELS=${2:-$ROOT/build/oracle/llama.cpp/models}
GOLD=$ROOT/tests/golden/vocab
REQUIRED="llama-bpe llama-spm gpt-2 starcoder qwen2 phi-3 gemma-4"
DERIVED="gpt-4o:llama-bpe"
if [ ! -d "$MODELS" ]; then
	"$ROOT/tests/oracle/fetch-llama.sh" || exit 3
fi
echo "== llama.cpp's tokenizer tests ($MODELS) against $LOGITLAB tokenize --no-bos"
failed=""
for f in "$MODELS"/ggml-vocab-*.gguf; do
	name=$(basename "$f" .gguf)
	name=${name#ggml-vocab-}
	if [ -f "$f.inp" ] && [ -f "$f.out" ]; then
		if out=$("$ROOT/tests/vocab.sh" "$LOGITLAB" "$f" "$f.inp" "$f.out" "$name"); then
			echo "$out"
			continue
		fi
		echo "$out"
		case $out in
		*": refused: "*) case " $REQUIRED " in *" $name "*) failed="$failed $name" ;; esac ;;
		*) failed="$failed $name" ;;
		esac
	elif ids=$("$LOGITLAB" tokenize -m "$f" --no-bos -p "Hello world" 2>&1); then
		echo "$name: no test vectors; opens ('Hello world': $ids)"
	else
		echo "$name: no test vectors; refused: $ids"
	fi
done

echo "== pre-tokenizers on a vocabulary llama.cpp ships ($DERIVED)"
if "$ROOT/tests/oracle/build-oracle.sh"; then
	WORK=$(mktemp -d)
	trap 'rm -rf "$WORK"' EXIT
	TOK=$ROOT/build/oracle/llama_tokenize
	for pair in $DERIVED; do
		pre=${pair%%:*}
		base=$MODELS/ggml-vocab-${pair#*:}.gguf
		f=$WORK/ggml-vocab-$pre.gguf
		if ! "$TOK" --pre "$pre" "$base" "$f"; then
			failed="$failed $pre"
			continue
		fi
		for inp in "$base.inp" "$ROOT/tests/oracle/split-texts.inp"; do
			what="$pre (${pair#*:}'s vocabulary, $(basename "$inp"))"
			if ! "$TOK" "$f" "$inp" >"$f.out"; then
				echo "$what: llama.cpp gave no ids"
				failed="$failed $pre"
			elif ! "$ROOT/tests/vocab.sh" "$LOGITLAB" "$f" "$inp" "$f.out" "$what"; then
				failed="$failed $pre"
			fi
		done
	done
else
	failed="$failed $DERIVED"
fi

echo "== goldens (tests/golden/vocab/)"
mkdir -p "$GOLD"
for name in llama-bpe llama-spm; do
	for ext in inp out; do
		if ! cmp -s "$MODELS/ggml-vocab-$name.gguf.$ext" "$GOLD/$name.$ext" 2>/dev/null; then
			cp "$MODELS/ggml-vocab-$name.gguf.$ext" "$GOLD/$name.$ext"
			echo "  written: $name.$ext"
		else
			echo "  $name.$ext: as committed"
		fi
	done
done

if [ -n "$failed" ]; then
	echo "vocab: FAILED:$failed"
	exit 1
fi
echo "vocab: every vocabulary logitlab opens gives llama.cpp's ids"
