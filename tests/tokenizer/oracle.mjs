// oracle.mjs - the expected ids of tests/tokenizer/corpus.txt, written as
// tests/golden/tokenizer-llama3.txt and tokenizer-llama2.txt, from two
// sources: the npm packages llama3-tokenizer-js (Llama 3) and
// llama-tokenizer-js (Llama 2), and llama.cpp itself (llama_oracle, from
// tests/oracle, run on two generated models with the real vocabularies).
// Run by oracle.sh, which fetches the pinned versions; see it for usage.
//
// Output lines: "L<line> plain: ids" (special-token text is plain text) and
// "L<line> special: ids" (special tokens matched). No BOS.
//
// Which source gives which line:
//   - Valid UTF-8 lines: the package's ids, and llama.cpp's must be the
//     same (the script stops when they are not: then a human decides).
//     llama-tokenizer-js has no special tokens, so Llama 2's "special"
//     lines are llama.cpp's alone.
//   - Lines with invalid UTF-8: llama.cpp's ids. JavaScript strings cannot
//     hold such bytes, and what a tokenizer does with them is llama.cpp's
//     rule (tokenizer.h says which); llama.cpp is the reference.
//   - Llama 3 has no line for text where llama.cpp's BPE aborts (a four-byte
//     form above U+10FFFF: its UTF-8 writer throws out of llama_tokenize);
//     check_tokenizer.c tests what logitlab does there by hand.
//   - llama3-tokenizer-js's encode adds <|begin_of_text|> and
//     <|end_of_text|> unless told not to: we pass { bos: false, eos: false }.
//     It always matches special tokens; for "plain" we give it a
//     special-token expression that never matches. llama_oracle puts the
//     model's BOS first, which is taken off.
import fs from 'fs';
import os from 'os';
import path from 'path';
import { execFileSync } from 'child_process';
import { createRequire } from 'module';

const [, , l3path, l2path, corpusPath, outDir, oracle, model3, model2] = process.argv;
if (!model2) {
    console.error('usage: node oracle.mjs LLAMA3_BUNDLE.cjs LLAMA2.js CORPUS OUTDIR LLAMA_ORACLE LLAMA3.gguf LLAMA2.gguf');
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

// Is b well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF)? Node's own decoder is that strict.
function valid(b) {
    try {
        new TextDecoder('utf-8', { fatal: true }).decode(b);
        return true;
    } catch {
        return false;
    }
}

// Does llama.cpp's BPE abort on b? Its reader takes a lead byte 11110xxx
// and three continuation bytes as whatever code point they spell, and its
// writer then throws on one above U+10FFFF.
function llamaAborts(b) {
    for (let i = 0; i + 3 < b.length; i++) {
        const cont = (k) => (b[i + k] & 0xc0) === 0x80;
        if ((b[i] & 0xf8) === 0xf0 && cont(1) && cont(2) && cont(3)) {
            const cp = ((b[i] & 7) << 18) | ((b[i + 1] & 0x3f) << 12) | ((b[i + 2] & 0x3f) << 6) | (b[i + 3] & 0x3f);
            if (cp > 0x10ffff) return true;
        }
    }
    return false;
}

// A prompt as llama_oracle's prompts file quotes it.
function quote(b) {
    let s = '';
    for (const x of b) {
        if (x === 0x5c) s += '\\\\';
        else if (x === 0x22) s += '\\"';
        else if (x >= 0x20 && x < 0x7f) s += String.fromCharCode(x);
        else s += '\\x' + x.toString(16).padStart(2, '0');
    }
    return `"${s}"`;
}

// llama.cpp's ids for each of items ({ bytes, special }), BOS taken off.
function llamaIds(model, bos, items) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tok-oracle-'));
    const file = path.join(dir, 'prompts.txt');
    fs.writeFileSync(file, items.map((it) => (it.special ? 'special ' : '') + quote(it.bytes)).join('\n') + '\n');
    const out = execFileSync(oracle, ['-m', model, '--prompts', file, '--greedy', '0', '--top', '1', '--threads', '1'],
        { encoding: 'latin1', maxBuffer: 1 << 26 });
    fs.rmSync(dir, { recursive: true });
    const ids = out.split('\n').filter((l) => l.startsWith('tokens ')).map((l) => l.split(' ').slice(2).map(Number));
    if (ids.length !== items.length) throw new Error(`${model}: ${ids.length} answers for ${items.length} prompts`);
    for (const x of ids) if (x[0] !== bos) throw new Error(`${model}: the ids do not start with BOS ${bos}`);
    return ids.map((x) => x.slice(1));
}

const NEVER = /(?!)/g; // a special-token expression that matches nothing
function packageIds3(bytes, special) {
    const text = bytes.toString('utf8');
    return llama3.encode(text, special ? { bos: false, eos: false } : { bos: false, eos: false, specialTokenRegex: NEVER });
}

const lines = [];
fs.readFileSync(corpusPath, 'utf8').split('\n').forEach((line, i) => {
    if (line !== '' && !line.startsWith('#')) lines.push({ no: i + 1, bytes: unescape(line, i + 1) });
});
const items = (keep) => lines.filter(keep).flatMap((l) => [false, true].map((special) => ({ ...l, special })));
const items3 = items((l) => !llamaAborts(l.bytes)), items2 = items(() => true);
const got3 = llamaIds(model3, 128000, items3), got2 = llamaIds(model2, 1, items2);

let disagree = 0;
function entry(out, it, llama, pkg) {
    const mode = it.special ? 'special' : 'plain';
    if (pkg && pkg.join(' ') !== llama.join(' ')) {
        console.error(`corpus line ${it.no} (${mode}): the package says ${pkg.join(' ')}, llama.cpp ${llama.join(' ')}`);
        disagree++;
    }
    out.push(`L${it.no} ${mode}: ${llama.join(' ')}`);
}
const commit = fs.readFileSync(path.join(path.dirname(oracle), 'llama-commit.txt'), 'utf8').slice(0, 12);
// "name@version" of the package file f belongs to.
function pkgName(f) {
    let d = path.dirname(f);
    while (!fs.existsSync(path.join(d, 'package.json'))) d = path.dirname(d);
    const j = JSON.parse(fs.readFileSync(path.join(d, 'package.json'), 'utf8'));
    return `${j.name}@${j.version}`;
}
const head = (name, pkg, more) => [
    `# ${name} - written by tests/tokenizer/oracle.sh; do not edit.`,
    `# Valid UTF-8 lines: ${pkg}'s ids, and llama.cpp ${commit}'s (the same: checked`,
    "# when written). Lines with invalid UTF-8: llama.cpp's ids.",
    ...more,
];
const l3 = head('tokenizer-llama3.txt', pkgName(l3path), [
    '# No line for text llama.cpp aborts on (a four-byte form above U+10FFFF).',
]);
const l2 = head('tokenizer-llama2.txt', pkgName(l2path), [
    "# The package has no special tokens: the special lines are llama.cpp's alone.",
]);
items3.forEach((it, k) => entry(l3, it, got3[k], valid(it.bytes) ? packageIds3(it.bytes, it.special) : null));
items2.forEach((it, k) =>
    entry(l2, it, got2[k], valid(it.bytes) && !it.special ? llama2.encode(it.bytes.toString('utf8'), false, true) : null));
if (disagree) {
    console.error(`oracle.mjs: the package and llama.cpp disagree on ${disagree} lines; nothing written`);
    process.exit(1);
}
fs.writeFileSync(`${outDir}/tokenizer-llama3.txt`, l3.join('\n') + '\n');
fs.writeFileSync(`${outDir}/tokenizer-llama2.txt`, l2.join('\n') + '\n');
console.log(`${outDir}: ${items3.length} Llama 3 lines, ${items2.length} Llama 2 lines`);
