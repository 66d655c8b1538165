#!/bin/sh
# llama.cpp's tokenizer test vectors against `logitlab tokenize`: INP holds
# the texts, each followed by a line "__ggml_vocab_test__"; OUT the ids
# llama.cpp gives each (one line a text, space-separated), tokenized with
# add_special and parse_special off (its tests/test-tokenizer-0.cpp), which
# is `logitlab tokenize --no-bos`. Prints "NAME: P/N texts as llama.cpp"
# and the first texts that differ; the status is 0 only when all agree.
# Run by `make test` on the in-tree vocabularies (tests/golden/vocab/) and
# by `make test-oracle` on llama.cpp's own files (tests/oracle/vocab.sh).
# Usage: tests/vocab.sh LOGITLAB FILE.gguf INP OUT [NAME]
set -u
BIN=${1:?usage: tests/vocab.sh LOGITLAB FILE.gguf INP OUT [NAME]}
GGUF=${2:?usage: tests/vocab.sh LOGITLAB FILE.gguf INP OUT [NAME]}
INP=${3:?usage: tests/vocab.sh LOGITLAB FILE.gguf INP OUT [NAME]}
OUT=${4:?usage: tests/vocab.sh LOGITLAB FILE.gguf INP OUT [NAME]}
NAME=${5:-$(basename "$INP" .inp)}
HERE=$(dirname "$0")
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
mkdir "$TMP/text"
# One file a text, byte for byte (awk in the C locale: the texts hold
# invalid UTF-8 too); a text that is empty is an empty file.
LC_ALL=C awk -v dir="$TMP/text" 'BEGIN { RS = "\n__ggml_vocab_test__\n" }
    { f = sprintf("%s/%04d", dir, NR); printf "%s", $0 > f; close(f) }' "$INP"
sed 's/^ *//; s/ *$//' "$OUT" >"$TMP/want"
texts=$(find "$TMP/text" -type f | wc -l)
lines=$(wc -l <"$TMP/want")
if [ "$texts" -ne "$lines" ]; then
    echo "$NAME: $INP has $texts texts but $OUT $lines lines"
    exit 1
fi
n=0
shown=0
for f in "$TMP"/text/*; do
    n=$((n + 1))
    want=$(sed -n "${n}p" "$TMP/want")
    if ! got=$("$BIN" tokenize -m "$GGUF" --no-bos -f "$f" 2>"$TMP/err"); then
        if [ "$n" -eq 1 ]; then # the file itself is refused: say why, once
            echo "$NAME: refused: $(cat "$TMP/err")"
            exit 1
        fi
        got="(error) $(cat "$TMP/err")"
    fi
    if [ "$got" = "$want" ]; then
        ok
        continue
    fi
    fail=$((fail + 1))
    if [ "$shown" -lt 3 ]; then
        shown=$((shown + 1))
        printf '  text %d (%s): got [%s], llama.cpp [%s]\n' "$n" \
            "$(head -c 60 "$f" | od -An -c | tr -s ' \n' ' ')" "$got" "$want"
    fi
done
echo "$NAME: $pass/$n texts as llama.cpp"
[ "$fail" -eq 0 ]
