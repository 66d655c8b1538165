#!/bin/sh
# Regenerates the tokenizer's expected ids, tests/golden/tokenizer-llama3.txt
# and tokenizer-llama2.txt (or the same two files in DIR), from the npm
# packages llama3-tokenizer-js and llama-tokenizer-js (both MIT, versions
# pinned below) and from llama.cpp itself, which must agree with the packages
# on valid UTF-8 and alone gives the lines with invalid bytes (oracle.mjs
# says which source gives which line). Needs node, npm and the network, and
# llama.cpp's oracle program build/oracle/llama_oracle (tests/oracle/
# fetch-llama.sh then build-oracle.sh, as make test-oracle runs them) and
# build/gen_model, which writes the two small models with the real
# vocabularies that llama.cpp tokenizes with. make test never runs it.
#   tests/tokenizer/oracle.sh [DIR]
set -eu
L3=1.2.0
L2=1.2.2
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(cd "${1:-$top/tests/golden}" && pwd)
oracle=${LLAMA_ORACLE:-$top/build/oracle/llama_oracle}
gen=${GEN_MODEL:-$top/build/gen_model}
for f in "$oracle" "$gen"; do
    [ -x "$f" ] || { echo "oracle.sh: $f is missing (see this script's comment)" >&2; exit 3; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The weights do not matter to the tokenizer: the smallest shapes will do.
for arch in llama3 llama2; do
    "$gen" --arch $arch --type F32 --layers 1 --embd 64 --heads 2 --kv-heads 1 --ff 64 \
        --vocab-data "$top/data" -o "$tmp/$arch.gguf" >/dev/null
done
cd "$tmp"
npm pack --silent "llama3-tokenizer-js@$L3" "llama-tokenizer-js@$L2" >/dev/null
mkdir l3 l2
tar xzf "llama3-tokenizer-js-$L3.tgz" -C l3
tar xzf "llama-tokenizer-js-$L2.tgz" -C l2
node "$top/tests/tokenizer/oracle.mjs" \
    "$tmp/l3/package/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs" \
    "$tmp/l2/package/llama-tokenizer.js" "$top/tests/tokenizer/corpus.txt" "$out" \
    "$oracle" "$tmp/llama3.gguf" "$tmp/llama2.gguf"
