#!/bin/sh
# Regenerates data/llama3-vocab.bin and data/llama3-merges.bin from the npm
# package llama3-tokenizer-js (MIT, version pinned below). Needs node and
# npm; logitlab itself never does.
set -eu
VERSION=1.2.0
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "llama3-tokenizer-js@$VERSION" >/dev/null &&
    tar xzf "llama3-tokenizer-js-$VERSION.tgz")
bundle="$tmp/package/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs"
node make-vocab.cjs "$bundle" llama3-vocab.bin
node make-merges.cjs "$bundle" llama3-merges.bin
