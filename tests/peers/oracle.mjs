// The conformance oracle: OpenAI's tiktoken (its Rust core compiled to
// wasm). Reads JSON lines ({"text": ...}) and prints, per line, the ids of
// encode_ordinary(text) for the encoding named by argv[2]. llama3 is not
// built into tiktoken: it is tiktoken's core given Llama 3's rank file
// (argv[4]) and the split pattern of Meta's reference tokenizer.
import fs from 'node:fs';
import { get_encoding, Tiktoken } from 'tiktoken';

const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?" +
  "[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function open(name, ranksPath) {
  if (name !== 'llama3') return get_encoding(name);
  const specials = {};
  for (let i = 0; i < 256; i++) specials[`<|llama3_special_${i}|>`] = 128000 + i;
  return new Tiktoken(fs.readFileSync(ranksPath, 'utf8'), specials, LLAMA3_PATTERN);
}

const encoding = open(process.argv[2], process.argv[4]);
const lines = fs.readFileSync(process.argv[3], 'utf8').split('\n');
const out = [];
for (const line of lines) {
  if (!line) continue;
  out.push(Array.from(encoding.encode_ordinary(JSON.parse(line).text)).join(' '));
}
encoding.free();
process.stdout.write(out.join('\n') + '\n');
