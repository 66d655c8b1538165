// make-merges.cjs - writes data/llama3-merges.bin from the npm package
// llama3-tokenizer-js (MIT), which bundles Llama 3's 280,147 BPE merges in
// rank order (its `merges` map: "Ġ t" -> priority, in insertion order).
//
// Each merge joins two tokens of the vocabulary; we store the pair as the
// two token ids (the ids of llama3-vocab.bin, the same in both files), so
// the file stays small and never needs the byte-level spelling to be read.
//
// Output (little-endian):
//   8 bytes  "LLMERGE1"
//   u32      count of merges (280147)
//   u32      count of tokens the ids refer to (128256)
//   u32      pairs[count][2]: left id, right id; merge r (from 0) has rank r
//
// Usage: node make-merges.cjs PATH/TO/commonjs-llama3-tokenizer-with-baked-data.cjs OUT.bin
'use strict';
const fs = require('fs');

const [, , bundle, out] = process.argv;
if (!bundle || !out) {
    console.error('usage: node make-merges.cjs BUNDLE.cjs OUT.bin');
    process.exit(2);
}
const tokenizer = require(bundle).llama3Tokenizer;
const ids = tokenizer.vocabByString;
const merges = [...tokenizer.merges.entries()];
if (merges.length !== 280147) throw new Error(`expected 280147 merges, got ${merges.length}`);

const buf = Buffer.alloc(16 + 8 * merges.length);
buf.write('LLMERGE1', 0, 'ascii');
buf.writeUInt32LE(merges.length, 8);
buf.writeUInt32LE(tokenizer.vocabById.length, 12);
merges.forEach(([pair, priority], rank) => {
    // The package numbers merge r as 2r + 1; check that its order is the rank.
    if (priority !== 2 * rank + 1) throw new Error(`merge ${rank} has priority ${priority}`);
    // Byte-level token strings never hold a space (a space is spelled Ġ), so
    // the pair splits at its only space; a first token of one space would
    // still split right, since the search starts after the first character.
    const cut = pair.indexOf(' ', 1);
    const left = ids.get(pair.slice(0, cut));
    const right = ids.get(pair.slice(cut + 1));
    if (left === undefined || right === undefined || !ids.has(pair.slice(0, cut) + pair.slice(cut + 1)))
        throw new Error(`merge ${rank} '${pair}' does not join two tokens into a token`);
    buf.writeUInt32LE(left, 16 + 8 * rank);
    buf.writeUInt32LE(right, 20 + 8 * rank);
});
fs.writeFileSync(out, buf);
console.log(`${out}: ${merges.length} merges`);
