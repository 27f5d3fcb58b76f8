// The Parquet conformance suite's cases (tests/parquet_conformance.sh):
// writes DIR/spec.json for parquet_write.mjs — unfriendly rows (empty and
// null texts, multi-byte UTF-8, texts longer than a page, nulls in every
// column, a struct column with a nested struct, integers at their limits)
// in files over every codec × dictionary on/off × data page v1/v2 with
// several row groups, one file per value encoding, and one row group far
// larger than a chunk — and DIR/cross.jsonl, rows to write both as JSON
// lines and as Parquet. Deterministic (no clock, no Math.random).
//
//   node parquet_cases.mjs DIR
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
let seed = 7;
const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);

const columns = [
  { name: 'text', type: 'utf8' },
  { name: 'id', type: 'int64' },
  { name: 'n32', type: 'int32' },
  { name: 'flag', type: 'bool' },
  { name: 'f32', type: 'float32' },
  { name: 'score', type: 'float64' },
  { name: 'meta', type: 'struct', fields: [
    { name: 'text', type: 'utf8' },
    { name: 'lang', type: 'utf8' },
    { name: 'quality', type: 'struct', fields: [{ name: 'score', type: 'float64' }] },
  ] },
];

const pieces = ['plain ascii', 'é日本語 \u{1F600} ünïcödé', 'tab\tnew\nline "quoted" back\\slash',
  'Ελληνικά και русский', '\u{10FFFF}\u{1F4A9}'];

function text(i) {
  if (i % 11 === 3) return '';
  if (i % 13 === 5) return null;
  if (i % 37 === 9) return `long ${i} ` + 'абв где 日本 '.repeat(1500); // ~30 KB, past any page
  return `${pieces[i % pieces.length]} ${i}`;
}

function row(i) {
  const r = { text: text(i) };
  r.id = i % 17 === 4 ? null : i === 7 ? '-9223372036854775808' : i === 8 ? '9223372036854775807'
    : i === 9 ? '9007199254740993' : (i * 1000003 - 50000000);
  r.n32 = i % 19 === 2 ? null : [2147483647, -2147483648, 0, -1][i % 4] + (i % 4 > 1 ? i : 0);
  r.flag = i % 7 === 0 ? null : i % 3 === 0;
  r.f32 = i % 23 === 1 ? null : (next() / 65536 - 32768) / 8;
  r.score = i % 29 === 6 ? null : next() / 4294967296;
  if (i % 31 === 10) r.meta = null;
  else {
    r.meta = { text: i % 5 === 1 ? null : i % 9 === 0 ? '' : `méta ${text(i + 1) ?? 'x'}`.slice(0, 200),
      lang: ['en', 'fr', null, 'ja'][i % 4],
      quality: i % 6 === 2 ? null : { score: i % 8 === 3 ? null : (i % 100) / 100 } };
  }
  return r;
}

const rows = Array.from({ length: 240 }, (_, i) => row(i));
const files = [];
for (const codec of ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD']) {
  for (const dictionary of [true, false]) {
    for (const page of [1, 2]) {
      files.push({ path: path.join(dir, `${codec.toLowerCase()}_${dictionary ? 'dict' : 'plain'}_v${page}.parquet`),
        codec, dictionary, page_version: page, row_group_rows: 64, page_bytes: 2048, batch_rows: 16 });
    }
  }
}
const encoded = (name, codec, page, encodings) => files.push({ path: path.join(dir, `enc_${name}.parquet`),
  codec, dictionary: false, page_version: page, row_group_rows: 100, page_bytes: 4096, batch_rows: 32, encodings });
encoded('delta_binary_packed', 'SNAPPY', 1, { id: 'DELTA_BINARY_PACKED', n32: 'DELTA_BINARY_PACKED' });
encoded('delta_length_byte_array', 'ZSTD', 1, { text: 'DELTA_LENGTH_BYTE_ARRAY' });
encoded('delta_byte_array', 'UNCOMPRESSED', 2, { text: 'DELTA_BYTE_ARRAY' });
encoded('byte_stream_split', 'GZIP', 1, { f32: 'BYTE_STREAM_SPLIT', score: 'BYTE_STREAM_SPLIT',
  id: 'BYTE_STREAM_SPLIT', n32: 'BYTE_STREAM_SPLIT' });
encoded('plain', 'ZSTD', 2, { text: 'PLAIN', id: 'PLAIN', n32: 'PLAIN', score: 'PLAIN' });

// One row group of ~1 MB of text: far more than the suite's chunk limit.
const bigRows = Array.from({ length: 700 }, (_, i) => ({ ...row(i), text: i % 50 === 7 ? '' : `${i} ` + 'x é '.repeat(300 + (i % 40)) }));
files.push({ path: path.join(dir, 'big_row_group.parquet'), rows: bigRows, codec: 'ZSTD', dictionary: false,
  page_version: 1, row_group_rows: 1 << 20, page_bytes: 8192, batch_rows: 8 });
// ... with a dictionary that outgrows its page: the writer goes on in
// plain pages within the same column chunk.
files.push({ path: path.join(dir, 'big_row_group_snappy_v2.parquet'), rows: bigRows, codec: 'SNAPPY', dictionary: true,
  page_version: 2, row_group_rows: 1 << 20, page_bytes: 8192, batch_rows: 8, dictionary_page_bytes: 16384 });

fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify({ columns, rows, files }));

// The same documents as JSON lines (text and metadata, no nulls where a
// JSON reader and a Parquet reader could differ on a missing key).
const cross = rows.map((r, i) => JSON.stringify({ text: r.text ?? '', meta: { lang: ['en', 'fr', 'ja'][i % 3],
  quality: { score: (i % 100) / 100 + 0.5 } } }));
fs.writeFileSync(path.join(dir, 'cross.jsonl'), `${cross.join('\n')}\n`);
