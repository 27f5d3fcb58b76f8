// Writes tests/parquet_vectors.h: the value bytes of real data pages, as the
// Rust `parquet` writer (parquet-wasm) encodes them, with the values they
// hold, for the unit tests of the value decoders (DELTA_BINARY_PACKED on
// INT32 and INT64, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
// BYTE_STREAM_SPLIT on FLOAT, DOUBLE, INT32 and INT64). Required columns,
// no compression, data pages v2: a page's values are its bytes after the
// header. Each page is checked against hyparquet's reading of the file.
//
//   node tests/peers/parquet_vectors.mjs [NODE_MODULES] > tests/parquet_vectors.h
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.dirname(new URL(import.meta.url).pathname);
const modules = process.argv[2] || path.join(root, 'node_modules');
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const arrow = await load('apache-arrow/Arrow.node.mjs');
const pq = await load('parquet-wasm/node/parquet_wasm.js');
const { parquetMetadata, parquetReadObjects } = await load('hyparquet/src/node.js');
const { parquetHeader } = await load('hyparquet/src/column.js');

// Deterministic values (no Math.random): a 32-bit LCG.
let seed = 12345;
const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);

const ints64 = [];
for (let i = 0; i < 150; i++) ints64.push(BigInt(i * 3));
for (let i = 0; i < 100; i++) ints64.push(BigInt.asIntN(64, (BigInt(next()) << 32n) | BigInt(next())));
ints64.push(-(1n << 63n), (1n << 63n) - 1n, -(1n << 63n), 0n, (1n << 63n) - 1n);
for (let i = 0; i < 100; i++) ints64.push(BigInt(next() % 7) - 3n);

const ints32 = [];
for (let i = 0; i < 140; i++) ints32.push(1000 - i);
ints32.push(-2147483648, 2147483647, -2147483648, 2147483647, 0, -1);
for (let i = 0; i < 100; i++) ints32.push((next() | 0) >> (next() % 32));

const words = ['', 'a', 'é', '日本語', 'the', 'https://example.org/', 'x'.repeat(300), '\u{1F600}'];
const strings = [];
for (let i = 0; i < 140; i++) strings.push(words[next() % words.length] + (i % 5 ? String(i) : ''));
const urls = [];
for (let i = 0; i < 160; i++) urls.push(`https://example.org/path/${Math.floor(i / 10)}/${'é'.repeat(i % 4)}${i}`);
urls.push('', '', 'h', 'https://example.org/path/');

const floats = [];
for (let i = 0; i < 100; i++) floats.push((next() / 4294967296 - 0.5) * 1e6);
floats.push(0, -0, Infinity, -Infinity, 1e-40);

const specs = [
  { name: 'delta_binary_int64', type: new arrow.Int64(), values: ints64, encoding: 'DELTA_BINARY_PACKED', kind: 'int', int32: 0 },
  { name: 'delta_binary_int32', type: new arrow.Int32(), values: ints32, encoding: 'DELTA_BINARY_PACKED', kind: 'int', int32: 1 },
  { name: 'delta_length', type: new arrow.Utf8(), values: strings, encoding: 'DELTA_LENGTH_BYTE_ARRAY', kind: 'bytes' },
  { name: 'delta_byte_array', type: new arrow.Utf8(), values: urls, encoding: 'DELTA_BYTE_ARRAY', kind: 'bytes' },
  { name: 'split_float', type: new arrow.Float32(), values: floats, encoding: 'BYTE_STREAM_SPLIT', kind: 'raw', width: 4 },
  { name: 'split_double', type: new arrow.Float64(), values: floats, encoding: 'BYTE_STREAM_SPLIT', kind: 'raw', width: 8 },
  { name: 'split_int32', type: new arrow.Int32(), values: ints32, encoding: 'BYTE_STREAM_SPLIT', kind: 'raw', width: 4 },
  { name: 'split_int64', type: new arrow.Int64(), values: ints64, encoding: 'BYTE_STREAM_SPLIT', kind: 'raw', width: 8 },
];

// PLAIN bytes of a fixed-width value, as the decoder must give it back.
function plain(spec, v) {
  const b = Buffer.alloc(spec.width);
  if (spec.type instanceof arrow.Float32) b.writeFloatLE(v);
  else if (spec.type instanceof arrow.Float64) b.writeDoubleLE(v);
  else if (spec.type instanceof arrow.Int32) b.writeInt32LE(v);
  else b.writeBigInt64LE(v);
  return b;
}

// The value bytes of every data page of the file's one column.
function pages(bytes) {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const meta = parquetMetadata(buffer);
  const out = [];
  for (const group of meta.row_groups) {
    const m = group.columns[0].meta_data;
    const reader = { view: new DataView(buffer), offset: Number(m.data_page_offset) };
    const end = Number(m.data_page_offset) + Number(m.total_compressed_size);
    while (reader.offset < end) {
      const header = parquetHeader(reader);
      const body = bytes.subarray(reader.offset, reader.offset + header.compressed_page_size);
      reader.offset += header.compressed_page_size;
      if (header.type !== 'DATA_PAGE_V2') continue;
      const v2 = header.data_page_header_v2;
      if (v2.encoding !== m.encodings.find((e) => e !== 'RLE') || v2.num_nulls) throw new Error('unexpected page');
      const skip = v2.repetition_levels_byte_length + v2.definition_levels_byte_length;
      out.push({ count: v2.num_values, body: body.subarray(skip) });
    }
  }
  return out;
}

const hex = (buf) => {
  const parts = [];
  for (let i = 0; i < buf.length; i += 24) parts.push(`    ${[...buf.subarray(i, i + 24)].join(',')},`);
  return parts.join('\n');
};

const lines = ['/* Generated by tests/peers/parquet_vectors.mjs from pages the Rust parquet',
  ' * writer (parquet-wasm) wrote: do not edit. */', '/* clang-format off */', ''];
const table = [];
for (const spec of specs) {
  const schema = new arrow.Schema([new arrow.Field('v', spec.type, false)]);
  const vector = arrow.vectorFromArray(spec.values, spec.type);
  const table0 = new arrow.Table(schema, { v: vector.data[0] });
  const props = new pq.WriterPropertiesBuilder().setCompression(pq.Compression.UNCOMPRESSED)
    .setWriterVersion(pq.WriterVersion.V2).setDictionaryEnabled(false)
    .setEncoding(pq.Encoding[spec.encoding]).setDataPageSizeLimit(2048).setWriteBatchSize(128)
    .setStatisticsEnabled(pq.EnabledStatistics.None).build();
  const bytes = pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table0, 'stream')), props);
  const back = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
  back.forEach((row, i) => {
    const want = spec.values[i];
    const same = typeof want === 'number' && spec.width === 4 && spec.type instanceof arrow.Float32
      ? Object.is(Math.fround(want), row.v) : Object.is(want, row.v) || want === row.v;
    if (!same) throw new Error(`${spec.name}: row ${i} reads back ${row.v}, ${want} written`);
  });
  let first = 0;
  pages(bytes).forEach((page, p) => {
    const id = `${spec.name}_${p}`;
    const values = spec.values.slice(first, first + page.count);
    first += page.count;
    lines.push(`static const unsigned char ${id}_in[] = {\n${hex(page.body)}\n};`);
    let expect;
    if (spec.kind === 'int') expect = values.map((v) => (BigInt(v) === -(1n << 63n) ? '-INT64_MAX - 1' : `INT64_C(${v})`)).join(', ');
    else if (spec.kind === 'bytes') {
      const blob = Buffer.concat(values.map((v) => Buffer.from(v, 'utf8')));
      lines.push(`static const unsigned char ${id}_blob[] = {\n${hex(blob)}\n    0};`);
      lines.push(`static const size_t ${id}_lens[] = {${values.map((v) => Buffer.byteLength(v)).join(', ')}};`);
    } else {
      lines.push(`static const unsigned char ${id}_raw[] = {\n${hex(Buffer.concat(values.map((v) => plain(spec, v))))}\n};`);
    }
    if (expect) lines.push(`static const int64_t ${id}_ints[] = {${expect}};`);
    table.push(`    {"${id}", "${spec.encoding}", ${spec.int32 ?? 0}, ${spec.width ?? 0}, ${page.count}, ${id}_in, sizeof ${id}_in, ` +
      `${spec.kind === 'int' ? `${id}_ints` : 'NULL'}, ${spec.kind === 'bytes' ? `${id}_blob, ${id}_lens` : 'NULL, NULL'}, ` +
      `${spec.kind === 'raw' ? `${id}_raw` : 'NULL'}},`);
  });
  if (first !== spec.values.length) throw new Error(`${spec.name}: pages hold ${first} of ${spec.values.length} values`);
}
lines.push('', 'typedef struct pq_vector {', '    const char *name, *encoding;', '    int int32, width;',
  '    size_t count;', '    const unsigned char *in;', '    size_t len;', '    const int64_t *ints;',
  '    const unsigned char *blob;', '    const size_t *lens;', '    const unsigned char *raw;', '} pq_vector;', '',
  'static const pq_vector pq_vectors[] = {', ...table, '};', '/* clang-format on */', '');
process.stdout.write(lines.join('\n'));
