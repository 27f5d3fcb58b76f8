// The library's pieces for a pre-tokenizer, compared with ordo's:
//   node hf_pretok_reference.mjs MODULES CONFIG.json INPUT.jsonl ORDO.jsonl
// MODULES holds `tokenizers`; CONFIG.json is {"pre_tokenizer": ...}. For
// each input line {"text": ...}, the library's preTokenizeString pieces
// are compared with ordo's line (a JSON array of pieces). Prints the first
// differences and "same N, differ N"; exits 1 when any differ.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
const [modules, config, input, ordo] = process.argv.slice(2);
const require = createRequire(path.resolve(modules) + '/');
const { Tokenizer } = require('tokenizers');
const pre = JSON.parse(fs.readFileSync(config, 'utf8')).pre_tokenizer;
const json = { version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
  pre_tokenizer: pre, post_processor: null, decoder: null,
  model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab: { a: 0 }, merges: [] } };
const p = Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
const texts = fs.readFileSync(input, 'utf8').split('\n').filter(Boolean);
const got = fs.readFileSync(ordo, 'utf8').split('\n').filter(Boolean);
let same = 0, differ = 0;
texts.forEach((line, k) => {
  const text = JSON.parse(line).text;
  const want = p ? p.preTokenizeString(text).map((x) => x[0]) : [text].filter(Boolean);
  const have = k < got.length ? JSON.parse(got[k]) : null;
  if (JSON.stringify(want) === JSON.stringify(have)) { same++; return; }
  if (++differ <= 3) {
    let i = 0;
    while (have && i < want.length && want[i] === have[i]) i++;
    console.log(`line ${k + 1}: piece ${i}: library ${JSON.stringify(want.slice(i, i + 3))}, ` +
      `ordo ${JSON.stringify(have ? have.slice(i, i + 3) : 'nothing')}`);
  }
});
console.log(`same ${same}, differ ${differ}`);
process.exit(differ ? 1 : 0);
