#!/bin/sh
# Regenerates data/llama2-vocab.bin from the npm package llama-tokenizer-js
# (MIT, version pinned below). Needs node and npm; logitlab itself never does.
set -eu
VERSION=1.2.2
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "llama-tokenizer-js@$VERSION" >/dev/null &&
    tar xzf "llama-tokenizer-js-$VERSION.tgz")
node make-llama2-vocab.mjs "$tmp/package/llama-tokenizer.js" llama2-vocab.bin
