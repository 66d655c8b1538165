// make-llama2-vocab.mjs - writes data/llama2-vocab.bin from the npm package
// llama-tokenizer-js (MIT), which bundles Llama 2's SentencePiece vocabulary
// (32,000 pieces, "▁the" for " the", <0x0A> for a byte) and the merge list
// that Hugging Face's converter derived from it. It has no scores.
//
// SentencePiece BPE merges the adjacent pair whose joined piece has the best
// score, and the converter wrote the merge list sorted by that score, so the
// package's merge order is the score order. We derive each piece's score from
// it: the k-th distinct piece the list produces (k from 0) gets score -k.
// Pieces that no merge produces get 0 when they are <unk>, <s>, </s> or a
// byte piece (as SentencePiece gives them), and scores below every merged
// piece, in id order, when they are single characters (the tokenizer never
// reads those: a single character is where merging starts, not a result).
//
// Types as llama.cpp's converter writes them: <unk> 2 (unknown), <s> and
// </s> 3 (control), <0x00>..<0xFF> 6 (byte), the rest 1 (normal).
//
// Output (little-endian):
//   8 bytes  "LLSPVOC1"
//   u32      count (32000)
//   u32      blob size in bytes
//   u32      offsets[count + 1] into the blob (piece i is blob[off[i] .. off[i+1]))
//   f32      scores[count]
//   u8       types[count]
//   u8       blob[blob size]: the pieces as UTF-8, back to back
//
// Usage: node make-llama2-vocab.mjs PATH/TO/llama-tokenizer.js OUT.bin
import fs from 'fs';

const [, , module, out] = process.argv;
if (!module || !out) {
    console.error('usage: node make-llama2-vocab.mjs llama-tokenizer.js OUT.bin');
    process.exit(2);
}
const tokenizer = (await import(module)).default;
const vocab = tokenizer.vocabById;
const ids = tokenizer.vocabByString;
if (vocab.length !== 32000) throw new Error(`expected 32000 pieces, got ${vocab.length}`);

const types = vocab.map((p, id) =>
    id === 0 ? 2 : id <= 2 ? 3 : /^<0x[0-9A-F]{2}>$/.test(p) ? 6 : 1);
if (vocab[0] !== '<unk>' || vocab[1] !== '<s>' || vocab[2] !== '</s>' || types[3] !== 6 || types[258] !== 6)
    throw new Error('unexpected special or byte pieces');

const scores = new Array(vocab.length).fill(null);
let k = 0;
for (const pair of tokenizer.merges.keys()) {
    const id = ids.get(pair.replace(' ', ''));
    if (id === undefined) throw new Error(`merge '${pair}' makes no piece`);
    if (scores[id] === null) scores[id] = 0 - k++; // 0 - 0 is +0, not -0
}
const merged = k;
for (let id = 0; id < vocab.length; id++)
    if (scores[id] === null) scores[id] = types[id] === 1 ? -k++ : 0;

const pieces = vocab.map((p) => Buffer.from(p, 'utf8'));
const blob = Buffer.concat(pieces);
const n = vocab.length;
const head = Buffer.alloc(16 + 4 * (n + 1) + 4 * n + n);
head.write('LLSPVOC1', 0, 'ascii');
head.writeUInt32LE(n, 8);
head.writeUInt32LE(blob.length, 12);
let off = 0;
for (let id = 0; id <= n; id++) {
    head.writeUInt32LE(off, 16 + 4 * id);
    if (id < n) off += pieces[id].length;
}
const sc = 16 + 4 * (n + 1);
for (let id = 0; id < n; id++) {
    head.writeFloatLE(scores[id], sc + 4 * id);
    head.writeUInt8(types[id], sc + 4 * n + id);
}
fs.writeFileSync(out, Buffer.concat([head, blob]));
console.log(`${out}: ${n} pieces, ${merged} of them made by merges, ${blob.length} bytes of text`);
