// Writes the Hugging Face conformance's edge-case corpus as JSON lines
// ({"text": ...}) on stdout, from the tokenizer.json files named on the
// command line: every added token's string (special or not) inside
// ordinary text — alone, before, after and between words, next to
// itself and to the next token, with spaces and newlines around, cut to
// prefixes, with one character changed, in upper case — runs of the
// whitespace and "▁" tokens, U+0000 in text, and normalization cases (combining marks in
// and out of canonical order, compositions, Hangul, marks whose class
// changed between Unicode versions, those of
// tests/peers/normalization_cases.json if present). Deterministic.
// Usage: node hf_cases.mjs TOKENIZER.json... > CASES.jsonl
import fs from 'node:fs';
import path from 'node:path';

const root = path.dirname(new URL(import.meta.url).pathname);
const out = [];
const emit = (text) => out.push(JSON.stringify({ text }));

const tokens = [];
for (const file of process.argv.slice(2)) {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const t of json.added_tokens || []) if (!tokens.includes(t.content)) tokens.push(t.content);
}

// One token in many contexts; `next` is the following token of the list.
function contexts(s, next) {
  emit(s);
  emit(`hello ${s} world`);
  emit(`hello${s}world`);
  emit(`${s}hello`);
  emit(`hello${s}`);
  emit(`${s}${s}`);
  emit(`${s} ${s}`);
  emit(`${s}${next}`);
  emit(`a ${s}${next} b`);
  emit(`  ${s}  \n${s}\n\n`);
  emit(`x\n${s}\ty`);
  emit(`Ünïcödé ${s}日本語${s}١٢٣`);
  emit(`'s ${s}'ll ${s}123`);
  const chars = Array.from(s);
  for (let k = 1; k < chars.length; k++) emit(`the ${chars.slice(0, k).join('')} end`);
  if (chars.length > 1) {
    emit(`${chars.slice(0, -1).join('')}${s}`);
    emit(`${chars.slice(0, -1).join('')}x ${chars.slice(1).join('')}`);
  }
  if (s.toUpperCase() !== s) emit(`an ${s.toUpperCase()} here`);
}
// Gemma 3 has thousands of <unusedN>: a few in full, the rest alone.
const many = (s) => /^<unused\d+>$/.test(s) && !/^<unused\d>$/.test(s);
tokens.forEach((s, i) => {
  if (many(s)) emit(`x${s}y`);
  else contexts(s, tokens[(i + 1) % tokens.length]);
});
emit(tokens.filter((s) => !many(s)).join(''));
emit(tokens.filter((s) => !many(s)).join(' '));

// Runs of whitespace and of U+2581 (Gemma 3 has tokens for runs of "\n",
// "\t" and "▁"; the longest match must win), mixed runs.
for (let n = 1; n <= 40; n++) {
  for (const c of ['\n', '\t', '\u2581', ' ', '\r\n'])
    emit(`a${c.repeat(n)}b`);
  emit(`\n${' '.repeat(n)}\n`);
}
emit('\n \n\t\n\u2581\n\u2581\u2581 \u2581\u2581\u2581\t\t \t\n\n\n ');
emit('\u2581hello\u2581\u2581world \u2581 \u2581\u2581');
// U+0000 in text (InternLM2's vocab has it as a token; a JSON key with it
// is read through hf_json_keys.c), and U+FDD0 beside it.
for (const s of ['\u0000', 'a\u0000b', ' \u0000\u0000 ', 'x\u0000\n\u0000y', '\uFDD0\u0000\uFDD0'])
  emit(s);

// Normalization: NFC composes, reorders marks by combining class, leaves
// singletons and exclusions decomposed; Hangul syllables compose.
const norm = [
  'e\u0301', 'cafe\u0301 re\u0301sume\u0301', 'A\u030A\u0301', 'a\u0328\u0301', 'a\u0301\u0328',
  'q\u0307\u0323', 'q\u0323\u0307', '\u1E0B\u0323', '\u1E9B\u0323', 'o\u0308\u0304\u0301',
  '\u212B \u2126 \u212A', '\u0344 \u0F73 \u0958', '\u1100\u1161 \u1100\u1161\u11A8 \uAC00\u11A8',
  '\u1100\u1161\u11C3\u11A8', '\u0B47\u0B3E \u0BC6\u0BBE \u0CBF\u0CD5 \u0DD9\u0DCF',
  '\u05D0\u05B7\u05BC\u05B8', '\u0627\u0653\u0654 \u0648\u0654', 'ｶﾞ ｶ\u3099 \u304B\u3099',
  // class of U+1DF8/U+1DF9 and U+1AC1..U+1AC3 after other marks
  'a\u0316\u1DF8', 'a\u1DF8\u0316', 'a\u0301\u1DF8', 'a\u1DF8\u0301', 'a\u0316\u1DF9', 'a\u1DF9\u0316',
  'a\u0301\u1DF9', 'a\u1DF9\u0301', 'a\u0323\u1DF9\u0307', 'a\u1DF8\u1DF9',
  'a\u1AC1\u0316', 'a\u0316\u1AC1', 'a\u1AC1\u0301', 'a\u0301\u1AC1', 'a\u1AC3\u0301', 'a\u0301\u1AC3',
  'a\u1AC3\u0316', 'a\u0316\u1AC3', 'a\u1AC2\u1AC1\u1AC3', 'x\u05B0\u1AC1\u0591',
  // Dives Akuru: U+11935 U+11930 composes to U+11938 (Unicode 13)
  '\u{11935}\u{11930}', 'a\u{11935}\u{11930}b', '\u{11935}\u{1193B}\u{11930}', '\u{11938}',
  '\u{11935}\u{11930}\u{11935}\u{11930}', '\u{11099}\u{110BA} \u{11131}\u{11127} \u{11347}\u{1133E}',
  '\u{115B8}\u{115AF} \u{114B9}\u{114BA}',
];
const casesFile = path.join(root, 'normalization_cases.json');
if (fs.existsSync(casesFile)) {
  const more = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
  for (const c of Array.isArray(more) ? more : more.cases || [])
    norm.push(typeof c === 'string' ? c : c.text ?? c.input);
}
for (const s of norm) {
  emit(s);
  emit(`word ${s} word${s}\n${s}${s}`);
}
process.stdout.write(out.join('\n') + '\n');
