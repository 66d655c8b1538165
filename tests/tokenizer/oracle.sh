#!/bin/sh
# Regenerates the tokenizer's expected ids from the npm packages
# llama3-tokenizer-js and llama-tokenizer-js (both MIT, versions pinned
# below): tests/golden/tokenizer-llama3.txt and tokenizer-llama2.txt, or the
# same two files in DIR. Needs node and npm and the network; make test never
# runs it (make test-oracle does). Run from anywhere:
#   tests/tokenizer/oracle.sh [DIR]
set -eu
L3=1.2.0
L2=1.2.2
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(cd "${1:-$top/tests/golden}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "llama3-tokenizer-js@$L3" "llama-tokenizer-js@$L2" >/dev/null
mkdir l3 l2
tar xzf "llama3-tokenizer-js-$L3.tgz" -C l3
tar xzf "llama-tokenizer-js-$L2.tgz" -C l2
node "$top/tests/tokenizer/oracle.mjs" \
    "$tmp/l3/package/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs" \
    "$tmp/l2/package/llama-tokenizer.js" "$top/tests/tokenizer/corpus.txt" "$out"
