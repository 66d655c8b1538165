// make-vocab.cjs - writes data/llama3-vocab.bin from the npm package
// llama3-tokenizer-js (MIT), which bundles the Llama 3 vocabulary as
// byte-level BPE strings (vocabById: 128,000 tokens, then 256 special ones).
//
// Byte-level BPE spells every byte as a printable character: bytes that are
// printable Latin-1 stand for themselves, the others are moved to U+0100 and
// up, in byte order. So " Paris" is stored as "ĠParis" (Ġ = U+0120 = byte 0x20).
// This script undoes that spelling and stores each token's raw bytes.
//
// Output (little-endian):
//   8 bytes  "LLVOCAB1"
//   u32      count (128256)
//   u32      first special id (128000)
//   u32      blob size in bytes
//   u32      offsets[count + 1] into the blob (token i is blob[off[i] .. off[i+1]))
//   u8       blob[blob size]
//
// Usage: node make-vocab.cjs PATH/TO/commonjs-llama3-tokenizer-with-baked-data.cjs OUT.bin
'use strict';
const fs = require('fs');

const [, , bundle, out] = process.argv;
if (!bundle || !out) {
    console.error('usage: node make-vocab.cjs BUNDLE.cjs OUT.bin');
    process.exit(2);
}
const tokenizer = require(bundle).llama3Tokenizer;
const vocab = tokenizer.vocabById;
const FIRST_SPECIAL = 128000;
if (vocab.length !== 128256) throw new Error(`expected 128256 tokens, got ${vocab.length}`);

// The byte that each printable stand-in character means.
const charToByte = new Map();
const kept = [];
for (let b = 0x21; b <= 0x7e; b++) kept.push(b);
for (let b = 0xa1; b <= 0xac; b++) kept.push(b);
for (let b = 0xae; b <= 0xff; b++) kept.push(b);
const keptSet = new Set(kept);
for (const b of kept) charToByte.set(b, b);
let moved = 0;
for (let b = 0; b < 256; b++) {
    if (!keptSet.has(b)) {
        charToByte.set(0x100 + moved, b);
        moved++;
    }
}

const pieces = [];
for (let id = 0; id < vocab.length; id++) {
    const text = vocab[id];
    if (id >= FIRST_SPECIAL) {
        pieces.push(Buffer.from(text, 'utf8')); // "<|eot_id|>" and friends, as written
        continue;
    }
    const bytes = [];
    for (const ch of text) {
        const b = charToByte.get(ch.codePointAt(0));
        if (b === undefined) throw new Error(`token ${id}: ${JSON.stringify(text)} is not byte-level`);
        bytes.push(b);
    }
    pieces.push(Buffer.from(bytes));
}

const blob = Buffer.concat(pieces);
const header = Buffer.alloc(8 + 12 + 4 * (vocab.length + 1));
header.write('LLVOCAB1', 0, 'ascii');
header.writeUInt32LE(vocab.length, 8);
header.writeUInt32LE(FIRST_SPECIAL, 12);
header.writeUInt32LE(blob.length, 16);
let off = 0;
for (let id = 0; id <= vocab.length; id++) {
    header.writeUInt32LE(off, 20 + 4 * id);
    if (id < vocab.length) off += pieces[id].length;
}
fs.writeFileSync(out, Buffer.concat([header, blob]));
console.log(`${out}: ${vocab.length} tokens, ${blob.length} bytes of text`);
