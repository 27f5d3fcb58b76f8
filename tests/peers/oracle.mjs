// The conformance oracle: OpenAI's tiktoken (its Rust core compiled to
// wasm). Reads JSON lines ({"text": ...}) and prints, per line, the ids of
// encode_ordinary(text) for the encoding named by argv[2].
import fs from 'node:fs';
import { get_encoding } from 'tiktoken';

const encoding = get_encoding(process.argv[2]);
const lines = fs.readFileSync(process.argv[3], 'utf8').split('\n');
const out = [];
for (const line of lines) {
  if (!line) continue;
  out.push(Array.from(encoding.encode_ordinary(JSON.parse(line).text)).join(' '));
}
encoding.free();
process.stdout.write(out.join('\n') + '\n');
