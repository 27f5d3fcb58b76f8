// The library's pieces for pre-tokenizers, compared with ordo's:
//   node hf_pretok_reference.mjs MODULES INPUT.jsonl NAME CONFIG.json ORDO.jsonl [NAME ...]
// MODULES holds `tokenizers`; each CONFIG.json is {"pre_tokenizer": ...}
// and ORDO.jsonl ordo's pieces of each INPUT line (a JSON array per line).
// Per NAME, the library's preTokenizeString pieces of each input line
// {"text": ...} are compared with ordo's; prints "ok   NAME: same N lines"
// or "FAIL NAME: ..." with the first differences, one verdict per NAME.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
const [modules, input, ...rest] = process.argv.slice(2);
const require = createRequire(path.resolve(modules) + '/');
const { Tokenizer } = require('tokenizers');
const texts = fs.readFileSync(input, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
for (let r = 0; r + 2 < rest.length; r += 3) {
  const [name, config, ordo] = rest.slice(r, r + 3);
  const pre = JSON.parse(fs.readFileSync(config, 'utf8')).pre_tokenizer;
  const json = { version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: pre, post_processor: null, decoder: null,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab: { a: 0 }, merges: [] } };
  let p;
  try {
    p = Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
  } catch (e) {
    console.log(`FAIL ${name}: the library refuses it: ${String(e).slice(0, 200)}`);
    continue;
  }
  const got = fs.readFileSync(ordo, 'utf8').split('\n').filter(Boolean);
  let same = 0, differ = 0;
  const notes = [];
  texts.forEach((text, k) => {
    const want = p ? p.preTokenizeString(text).map((x) => x[0]) : [text].filter(Boolean);
    const have = k < got.length ? JSON.parse(got[k]) : null;
    if (JSON.stringify(want) === JSON.stringify(have)) { same++; return; }
    if (++differ <= 3) {
      let i = 0;
      while (have && i < want.length && want[i] === have[i]) i++;
      notes.push(`line ${k + 1}: piece ${i}: library ${JSON.stringify(want.slice(i, i + 3))}, ` +
        `ordo ${JSON.stringify(have ? have.slice(i, i + 3) : 'nothing')}`);
    }
  });
  console.log(differ ? `FAIL ${name}: ${differ} of ${texts.length} lines differ; ${notes.join('; ')}`
    : `ok   ${name}: same ${same} lines`);
}
