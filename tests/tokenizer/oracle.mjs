// oracle.mjs - the expected ids of tests/tokenizer/corpus.txt, from the npm
// packages llama3-tokenizer-js (Llama 3) and llama-tokenizer-js (Llama 2),
// written as tests/golden/tokenizer-llama3.txt and tokenizer-llama2.txt.
// Run by oracle.sh, which fetches the pinned versions; see it for usage.
//
// Output lines: "L<line> plain: ids" (special-token text is plain text) and,
// for Llama 3, "L<line> special: ids" (special tokens matched). No BOS.
//
// What the packages do, and what this script adds:
//   - llama3-tokenizer-js's encode adds <|begin_of_text|> and <|end_of_text|>
//     unless told not to: we pass { bos: false, eos: false }. It always
//     matches special tokens; for "plain" we give it a special-token
//     expression that never matches.
//   - JavaScript strings cannot hold invalid UTF-8, so for Llama 3 a line is
//     cut into runs of whole characters, which the package encodes one by
//     one, and runs of invalid bytes, which this script merges itself with
//     the package's own merge ranks (bpeBytes below: the lowest rank first,
//     the leftmost of equal ones; a run that is a whole token stays whole).
//     That is the rule src/data/tokenizer_bpe.c follows; llama.cpp instead
//     turns such bytes into U+FFFD.
//   - llama-tokenizer-js (SentencePiece) has no special tokens and the same
//     limit on bytes: Llama 2 gets only plain lines that are valid UTF-8,
//     encoded with add_bos false and its leading space on (as llama.cpp).
import fs from 'fs';
import { createRequire } from 'module';

const [, , l3path, l2path, corpusPath, outDir] = process.argv;
if (!outDir) {
    console.error('usage: node oracle.mjs LLAMA3_BUNDLE.cjs LLAMA2.js CORPUS OUTDIR');
    process.exit(2);
}
const llama3 = createRequire(import.meta.url)(l3path).llama3Tokenizer;
const llama2 = (await import(l2path)).default;

// The corpus's escapes: \n \t \r \\ \xNN \u{HEX}; anything else is an error.
function unescape(text, no) {
    const line = Array.from(text); // by code point: an emoji is two UTF-16 units
    const out = [];
    for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (c !== '\\') {
            out.push(...Buffer.from(c, 'utf8'));
            continue;
        }
        const d = line[++i];
        if (d === 'n') out.push(10);
        else if (d === 't') out.push(9);
        else if (d === 'r') out.push(13);
        else if (d === '\\') out.push(92);
        else if (d === 'x' && /^[0-9A-Fa-f]{2}$/.test(line.slice(i + 1, i + 3).join(''))) {
            out.push(parseInt(line.slice(i + 1, i + 3).join(''), 16));
            i += 2;
        } else if (d === 'u' && line[i + 1] === '{' && line.indexOf('}', i) > i + 2) {
            const end = line.indexOf('}', i);
            const cp = parseInt(line.slice(i + 2, end).join(''), 16);
            out.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
            i = end;
        } else throw new Error(`corpus line ${no}: bad escape \\${d}`);
    }
    return Buffer.from(out);
}

// Length of the well-formed UTF-8 character at b[i] (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0.
function charLen(b, i) {
    const c = b[i];
    if (c < 0x80) return 1;
    const n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n || i + n > b.length) return 0;
    for (let k = 1; k < n; k++) if ((b[i + k] & 0xc0) !== 0x80) return 0;
    const d = b[i + 1];
    if ((c === 0xe0 && d < 0xa0) || (c === 0xed && d > 0x9f) || (c === 0xf0 && d < 0x90) || (c === 0xf4 && d > 0x8f))
        return 0;
    return n;
}

// Alternating runs of valid and invalid UTF-8: [{ valid, bytes }].
function runs(b) {
    const out = [];
    for (let i = 0; i < b.length; ) {
        const valid = charLen(b, i) > 0;
        let j = i;
        while (j < b.length && (charLen(b, j) > 0) === valid) j += valid ? charLen(b, j) : 1;
        out.push({ valid, bytes: b.subarray(i, j) });
        i = j;
    }
    return out;
}

// GPT-2's printable spelling of each byte (as the package's BYTES_TO_UNICODE).
const SPELL = (() => {
    const keep = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    const s = [];
    let moved = 0;
    for (let b = 0; b < 256; b++) s.push(String.fromCodePoint(keep(b) ? b : 0x100 + moved++));
    return s;
})();

// Byte-level BPE of a run of bytes with the package's vocabulary and ranks.
function bpeBytes(bytes) {
    const whole = [...bytes].map((b) => SPELL[b]).join('');
    if (llama3.vocabByString.has(whole)) return [llama3.vocabByString.get(whole)];
    const sym = [...bytes].map((b) => SPELL[b]);
    for (;;) {
        let best = -1, rank = Infinity;
        for (let i = 0; i + 1 < sym.length; i++) {
            const r = llama3.merges.get(sym[i] + ' ' + sym[i + 1]);
            if (r !== undefined && r < rank) {
                rank = r;
                best = i;
            }
        }
        if (best < 0) break;
        sym.splice(best, 2, sym[best] + sym[best + 1]);
    }
    return sym.map((s) => llama3.vocabByString.get(s));
}

const NEVER = /(?!)/g; // a special-token expression that matches nothing
function llama3Ids(bytes, special) {
    const ids = [];
    for (const r of runs(bytes)) {
        if (!r.valid) ids.push(...bpeBytes(r.bytes));
        else
            ids.push(...llama3.encode(r.bytes.toString('utf8'),
                special ? { bos: false, eos: false } : { bos: false, eos: false, specialTokenRegex: NEVER }));
    }
    return ids;
}

const l3 = ['# tokenizer-llama3.txt - written by tests/tokenizer/oracle.sh (llama3-tokenizer-js); do not edit'];
const l2 = ['# tokenizer-llama2.txt - written by tests/tokenizer/oracle.sh (llama-tokenizer-js); do not edit'];
fs.readFileSync(corpusPath, 'utf8').split('\n').forEach((line, i) => {
    const no = i + 1;
    if (line === '' || line.startsWith('#')) return;
    const bytes = unescape(line, no);
    l3.push(`L${no} plain: ${llama3Ids(bytes, false).join(' ')}`);
    l3.push(`L${no} special: ${llama3Ids(bytes, true).join(' ')}`);
    if (runs(bytes).every((r) => r.valid))
        l2.push(`L${no} plain: ${llama2.encode(bytes.toString('utf8'), false, true).join(' ')}`);
});
fs.writeFileSync(`${outDir}/tokenizer-llama3.txt`, l3.join('\n') + '\n');
fs.writeFileSync(`${outDir}/tokenizer-llama2.txt`, l2.join('\n') + '\n');
console.log(`${outDir}: ${l3.length - 1} Llama 3 lines, ${l2.length - 1} Llama 2 lines`);
