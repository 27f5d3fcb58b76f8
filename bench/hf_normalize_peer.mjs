// The library's side of bench/hf_normalize.sh: MB/s of Hugging Face
// tokenizers' normalizeString (npm tokenizers, native) over the texts of a
// JSON-lines file, median of ROUNDS passes, one normalizer per argument.
//   node bench/hf_normalize_peer.mjs NODE_MODULES CORPUS.jsonl ROUNDS NAME=JSON...
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [modules, corpusPath, roundsArg, ...specs] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { Tokenizer } = require('tokenizers');
const texts = fs.readFileSync(corpusPath, 'utf8').split('\n').filter(Boolean)
  .map((l) => JSON.parse(l).text).filter((t) => typeof t === 'string');
const bytes = texts.reduce((a, t) => a + Buffer.byteLength(t), 0);
const rounds = Number(roundsArg);
for (const spec of specs) {
  const eq = spec.indexOf('=');
  const file = {
    version: '1.0', truncation: null, padding: null, added_tokens: [],
    normalizer: JSON.parse(spec.slice(eq + 1)), pre_tokenizer: null, post_processor: null,
    decoder: null, model: { type: 'BPE', dropout: null, unk_token: null,
      continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false,
      byte_fallback: false, ignore_merges: false, vocab: { a: 0 }, merges: [] },
  };
  const n = Tokenizer.fromString(JSON.stringify(file)).getNormalizer();
  const mbs = [];
  for (const t of texts) n.normalizeString(t); // warm-up, unmeasured
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (const t of texts) n.normalizeString(t);
    mbs.push(bytes / 1e6 / (Number(process.hrtime.bigint() - start) / 1e9));
  }
  mbs.sort((a, b) => a - b);
  const m = rounds % 2 ? mbs[(rounds - 1) / 2] : (mbs[rounds / 2 - 1] + mbs[rounds / 2]) / 2;
  console.log(`${spec.slice(0, eq)} ${m.toFixed(2)}`);
}
