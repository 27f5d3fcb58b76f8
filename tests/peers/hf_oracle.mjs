// The Hugging Face conformance oracle: the library's own Rust `tokenizers`
// (npm, native bindings). Loads a tokenizer.json with its special added
// tokens removed from added_tokens (special tokens are never produced from
// document text), reads JSON lines ({"text": ...}) and prints, per line,
// the ids of encoding the text with add_special_tokens false. The library
// numbers added tokens afresh when it loads them (the "id" in the file is
// only checked), so with the specials gone a non-special added token that
// is not in the model's vocabulary (Qwen3's <tool_call>: 151657) would get
// another id (151643): its ids are mapped back to the file's.
// Usage: node hf_oracle.mjs NODE_MODULES TOKENIZER.json CORPUS.jsonl > IDS
// One thread (RAYON_NUM_THREADS=1): the texts go through encodeBatch in
// batches, which gives the ids encode gives, text by text.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

process.env.RAYON_NUM_THREADS ??= '1';
process.env.TOKENIZERS_PARALLELISM ??= 'false';
const [modules, tokenizerPath, corpusPath] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { Tokenizer } = require('tokenizers');

const json = JSON.parse(fs.readFileSync(tokenizerPath, 'utf8'));
json.added_tokens = (json.added_tokens || []).filter((t) => !t.special);
const tokenizer = Tokenizer.fromString(JSON.stringify(json));
const remap = new Map();
for (const t of json.added_tokens) {
  const id = tokenizer.tokenToId(t.content);
  if (id !== t.id) remap.set(id, t.id);
}
const ids = (e) => Array.from(e.getIds(), (id) => remap.get(id) ?? id);

const texts = fs.readFileSync(corpusPath, 'utf8').split('\n').filter((l) => l)
  .map((l) => JSON.parse(l).text);
const out = fs.openSync('/dev/stdout', 'w');
const BATCH = 256;
for (let i = 0; i < texts.length; i += BATCH) {
  const encodings = await tokenizer.encodeBatch(texts.slice(i, i + BATCH), { addSpecialTokens: false });
  fs.writeSync(out, encodings.map((e) => ids(e).join(' ') + '\n').join(''));
}
