// The reference for tokenizer.json's normalizers: Hugging Face tokenizers
// (npm `tokenizers`, the library's native binding) applying a normalizer.
//   node hf_normalize_oracle.mjs cases FILE        the conformance cases, one JSON
//       string per line: every code point (64 a line, each followed by a space),
//       every mark after several bases, marks in and out of canonical order
//       against one mark of each common class, long runs of marks, Hangul
//       jamo and syllables, every decomposable character decomposed (with
//       marks after it), random strings of all those characters, and the
//       strings of FILE (normalization_cases.json)
//   node hf_normalize_oracle.mjs normalize JSON    reads such lines, prints the
//       hexadecimal UTF-8 of each line normalized by the normalizer JSON
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));

function normalizer(json) {
  const { Tokenizer } = require('tokenizers');
  const file = {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: JSON.parse(json),
    pre_tokenizer: null, post_processor: null, decoder: null,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab: { a: 0 }, merges: [] },
  };
  return Tokenizer.fromString(JSON.stringify(file)).getNormalizer();
}

function* cases(file) {
  const chars = [];
  for (let c = 0; c < 0x110000; c++) if (c < 0xd800 || c > 0xdfff) chars.push(String.fromCodePoint(c));
  for (let i = 0; i < chars.length; i += 64) yield chars.slice(i, i + 64).map((c) => c + ' ').join('');
  const marks = chars.filter((c) => /\p{M}/u.test(c));
  const group = function* (list) {
    for (let i = 0; i < list.length; i += 32) yield list.slice(i, i + 32).join(' ');
  };
  const bases = ['a', 'A', 'e', 'o', 'u', 'i', 'z', '\u03b1', '\u03c9', '\u0915', '\u1100', '\u3046'];
  yield* group(marks.flatMap((m) => bases.map((b) => b + m)));
  // one mark of classes 1, 7, 9, 10, 103, 129, 202, 216, 220, 230, 232, 233, 240
  const reps = ['\u0334', '\u093c', '\u094d', '\u05b0', '\u0e38', '\u0f71', '\u0327', '\u031b',
    '\u0316', '\u0301', '\u302c', '\u035c', '\u0345'];
  yield* group(marks.flatMap((m) => reps.flatMap((r) => ['a' + m + r, 'a' + r + m, 'e' + r + m + r])));
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let k = 0; k < 40; k++) {
    let s = 'a';
    const n = 20 + (next() % 200);
    for (let i = 0; i < n; i++) s += marks[next() % marks.length];
    yield s;
  }
  const L = [], V = [], T = [''];
  for (let i = 0; i < 19; i++) L.push(String.fromCodePoint(0x1100 + i));
  for (let i = 0; i < 21; i++) V.push(String.fromCodePoint(0x1161 + i));
  for (let i = 0; i < 28; i++) T.push(String.fromCodePoint(0x11a7 + i));
  const hangul = [];
  for (const l of L) for (const v of V) for (const t of T) hangul.push(l + v + t);
  for (let s = 0xac00; s <= 0xd7a3; s += 1) hangul.push(String.fromCodePoint(s) + T[1 + (s % 28)]);
  hangul.push('\u1100\u0301\u1161', '\uac00\u0301\u11a8', '\u1112\u1175\u11c2\u11c2', '\u1113\u1161');
  yield* group(hangul);
  const decomposed = chars.filter((c) => c.normalize('NFKD') !== c);
  yield* group(decomposed.flatMap((c) => {
    const d = c.normalize('NFD');
    return [d, d + '\u0301', d + '\u0316', d + '\u0323\u0307', c + '\u0323\u0307', c + '\u0334'];
  }));
  // random strings over the characters that interact, without separators
  const pool = [...marks, ...decomposed, ...L, ...V, ...T.slice(1), ...bases, '\uac00', '\uac01', 'a', ' '];
  for (let k = 0; k < 3000; k++) {
    let s = '';
    const n = 2 + (next() % 24);
    for (let i = 0; i < n; i++) s += pool[next() % pool.length];
    yield s;
  }
  yield* group(JSON.parse(fs.readFileSync(file, 'utf8')));
}

const [mode, arg] = process.argv.slice(2);
if (mode === 'cases') {
  const out = [];
  for (const line of cases(arg)) out.push(JSON.stringify(line));
  process.stdout.write(out.join('\n') + '\n');
} else if (mode === 'normalize') {
  const n = normalizer(arg);
  const out = [];
  for (const line of fs.readFileSync(0, 'utf8').split('\n')) {
    if (!line) continue;
    out.push(Buffer.from(n.normalizeString(JSON.parse(line)), 'utf8').toString('hex'));
  }
  process.stdout.write(out.join('\n') + '\n');
} else {
  console.error('usage: node hf_normalize_oracle.mjs cases FILE | normalize NORMALIZER_JSON');
  process.exit(2);
}
