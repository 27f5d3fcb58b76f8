// The tokenizer benchmark's peers on the same texts as bench_tokenizer:
// OpenAI's tiktoken (npm; its Rust core compiled to wasm) and Hugging Face
// tokenizers (npm; native bindings), each on one thread, timing encoding
// only. For tokenizers a tokenizer.json is built from the same .tiktoken
// rank file (vocabulary by rank, merges recovered from the ranks, the
// encoding's split pattern, byte-level alphabet), as Hugging Face's own
// tiktoken converter does. A spec NAME:FILE.json is a Hugging Face
// tokenizer.json (its special added tokens removed, add_special_tokens
// false, as ordo reads it): tokenizers, then transformers.js's tokenizers
// (@lenml/tokenizers) on the same file, "agree" its share of texts whose
// ids equal those of tokenizers.
// Usage: node tokenizer_peers.mjs NODE_MODULES CORPUS.jsonl ROUNDS ENC:RANKS...
// Prints "median PEER ENC MB/s tokens/s tokens agree%" lines. With
// PEERS=main in the environment only the peer ordo is held to runs
// (tiktoken for a rank file, tokenizers for a tokenizer.json).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [modules, corpusPath, roundsArg, ...encodings] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { get_encoding } = require('tiktoken');
const { Tokenizer } = require('tokenizers');
const rounds = Number(roundsArg) || 3;
const mainOnly = process.env.PEERS === 'main';

const texts = fs.readFileSync(corpusPath, 'utf8').split('\n').filter((l) => l)
  .map((l) => JSON.parse(l).text);
const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0);

const cpuSeconds = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const median = (xs) => { /* as bench/tokenizer_summary.awk takes it */
  const v = [...xs].sort((a, b) => a - b), h = Math.floor(v.length / 2);
  return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
};

async function measure(label, encodeAll, roundCount = rounds) {
  const mbs = [], tps = [];
  let tokens = 0, ids = null;
  for (let r = 0; r < roundCount; r++) {
    const wall0 = process.hrtime.bigint(), cpu0 = cpuSeconds();
    ids = await encodeAll();
    const wall = Number(process.hrtime.bigint() - wall0) / 1e9, cpu = cpuSeconds() - cpu0;
    tokens = ids.reduce((n, x) => n + x.length, 0);
    /* wall time, as ordo is timed (the process's CPU time also counts
     * Node's own helper threads); a round that kept more than 1.1 cores
     * busy is named, as the comparison is of one thread, and its wall
     * time is used all the same (in the peer's favour) */
    const seconds = wall;
    if (cpu > 1.1 * wall)
      console.error(`${label} round ${r + 1}: ${(cpu / wall).toFixed(2)} cores busy ` +
                    '(timed by wall time all the same)');
    mbs.push(bytes / 1e6 / seconds);
    tps.push(tokens / seconds);
    console.log(`${label} round ${r + 1}: ${(bytes / 1e6 / seconds).toFixed(2)} MB/s ` +
                `${Math.round(tokens / seconds)} tokens/s (wall ${wall.toFixed(2)} s, cpu ${cpu.toFixed(2)} s)`);
  }
  return { mbs: median(mbs), tps: median(tps), tokens, ids };
}

const PATTERNS = {
  cl100k_base: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

function bytesToUnicode() {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  const map = new Array(256);
  bs.forEach((b, i) => { map[b] = String.fromCodePoint(cs[i]); });
  return map;
}

// tokenizer.json for a .tiktoken rank file: merges recovered by running BPE
// on each token's bytes with the ranks below its own.
function hfTokenizer(enc, ranksPath) {
  const byteMap = bytesToUnicode();
  const ranks = new Map(), tokens = [];
  for (const line of fs.readFileSync(ranksPath, 'utf8').split('\n')) {
    if (!line) continue;
    const [b64, rank] = line.split(' ');
    const buf = Buffer.from(b64, 'base64');
    ranks.set(buf.toString('latin1'), Number(rank));
    tokens.push([buf, Number(rank)]);
  }
  const vocab = {}, merges = [];
  const show = (buf) => Array.from(buf, (b) => byteMap[b]).join('');
  for (const [buf, rank] of tokens) vocab[show(buf)] = rank;
  for (const [buf, rank] of tokens) {
    if (buf.length < 2) continue;
    let parts = Array.from(buf, (b) => String.fromCharCode(b));
    for (;;) {
      let best = -1, bestRank = Infinity;
      for (let i = 0; i + 1 < parts.length; i++) {
        const r = ranks.get(parts[i] + parts[i + 1]);
        if (r !== undefined && r < rank && r < bestRank) { best = i; bestRank = r; }
      }
      if (best < 0) break;
      parts.splice(best, 2, parts[best] + parts[best + 1]);
    }
    if (parts.length === 2)
      merges.push([show(Buffer.from(parts[0], 'latin1')), show(Buffer.from(parts[1], 'latin1')), rank]);
  }
  merges.sort((a, b) => a[2] - b[2]);
  const json = {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: PATTERNS[enc] }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
             end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: true,
             vocab, merges: merges.map((m) => [m[0], m[1]]) },
  };
  return Tokenizer.fromString(JSON.stringify(json));
}

console.log(`corpus: ${texts.length} texts, ${(bytes / 1e6).toFixed(1)} MB`);
for (const spec of encodings) {
  const [enc, ranksPath] = spec.split(':');
  if (ranksPath.endsWith('.json')) {
    const json = JSON.parse(fs.readFileSync(ranksPath, 'utf8'));
    json.added_tokens = (json.added_tokens || []).filter((t) => !t.special);
    const hf = Tokenizer.fromString(JSON.stringify(json));
    const res = await measure(`tokenizers ${enc}`, async () =>
      (await hf.encodeBatch(texts, { addSpecialTokens: false })).map((e) => e.getIds()));
    console.log(`median tokenizers ${enc} ${res.mbs.toFixed(2)} ${Math.round(res.tps)} ${res.tokens} -`);
    // transformers.js's tokenizers (@lenml/tokenizers, pure JavaScript,
    // the same file through @lenml/tokenizer-NAME): one round, it is slow;
    // "agree" against tokenizers.
    let pkg = null;
    try { pkg = require(`@lenml/tokenizer-${enc}`); } catch { /* not installed */ }
    if (pkg && !mainOnly) {
      const tjs = pkg.fromPreTrained({ tokenizerJSON: { added_tokens: json.added_tokens } });
      const res2 = await measure(`transformers.js ${enc}`, async () =>
        texts.map((t) => tjs.encode(t, { add_special_tokens: false })), 1);
      let same = 0;
      res2.ids.forEach((ids, i) => { const t = res.ids[i];
        if (ids.length === t.length && ids.every((x, j) => x === t[j])) same++; });
      console.log(`median transformers.js ${enc} ${res2.mbs.toFixed(2)} ${Math.round(res2.tps)} ` +
                  `${res2.tokens} ${(100 * same / texts.length).toFixed(2)}`);
    }
    continue;
  }
  const tk = get_encoding(enc);
  const tt = await measure(`tiktoken   ${enc}`, async () => texts.map((t) => tk.encode_ordinary(t)));
  console.log(`median tiktoken ${enc} ${tt.mbs.toFixed(2)} ${Math.round(tt.tps)} ${tt.tokens} 100.00`);
  if (PATTERNS[enc] && !mainOnly) {
    const hf = hfTokenizer(enc, ranksPath);
    const res = await measure(`tokenizers ${enc}`, async () =>
      (await hf.encodeBatch(texts, { addSpecialTokens: false })).map((e) => e.getIds()));
    let same = 0;
    res.ids.forEach((ids, i) => { const t = tt.ids[i];
      if (ids.length === t.length && ids.every((x, j) => x === t[j])) same++; });
    console.log(`median tokenizers ${enc} ${res.mbs.toFixed(2)} ${Math.round(res.tps)} ${res.tokens} ` +
                `${(100 * same / texts.length).toFixed(2)}`);
  }
  tk.free();
}
