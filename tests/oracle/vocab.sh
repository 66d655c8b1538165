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
# file; a file without vectors is only opened. Then the llama-bpe and llama-spm vectors are
# copied to tests/golden/vocab/, which `make test` runs on the in-tree vocabularies (the same
# as those two files: data/README.md), saying whether they changed.
# Exit status 0 when every file logitlab opens gives llama.cpp's ids on every text and the
# REQUIRED ones open.
set -u
LOGITLAB=${1:-build/logitlab}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODELS=${2:-$ROOT/build/oracle/llama.cpp/models}
GOLD=$ROOT/tests/golden/vocab
REQUIRED="llama-bpe llama-spm gpt-2 starcoder qwen2 phi-3 gemma-4"
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
