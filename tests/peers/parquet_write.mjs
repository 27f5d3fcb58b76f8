// Writes Parquet files with a real writer (parquet-wasm: the Rust `parquet`
// crate) from a JSON spec, reads each back with an independent reader
// (hyparquet) and checks it holds exactly the rows it was given.
//
//   node parquet_write.mjs write SPEC.json     writes every file of the spec
//   node parquet_write.mjs jsonl IN.jsonl OUT.parquet [OPTIONS.json]
//                                              a JSON-lines file as Parquet
//   node parquet_write.mjs read FILE.parquet COLUMN...
//                                              hyparquet's rows as JSON lines
//                                              ([value, ...] of dotted leaves)
//   node parquet_write.mjs read-each COLUMN,COLUMN FILE.parquet...
//                                              the same into each FILE.hyparquet
//
// A spec: {"columns": [COLUMN...], "rows": [ROW...], "files": [FILE...]}.
// A column is {"name", "type"}, type one of utf8, int32, int64, float32,
// float64, bool, or struct with "fields": [COLUMN...]. Rows are JSON
// objects (nested objects for struct columns; null or a missing key is a
// null; int64 values as numbers or decimal strings). Without "columns" the
// schema is inferred from the rows (strings utf8, integers int64, other
// numbers float64, booleans bool, objects structs). A file is {"path",
// "codec": UNCOMPRESSED|SNAPPY|GZIP|ZSTD, "dictionary": bool,
// "page_version": 1|2, "row_group_rows", "page_bytes", "batch_rows",
// "dictionary_page_bytes",
// "encoding": ENCODING for every column, "encodings": {"top_level_column":
// ENCODING}} with ENCODING one of PLAIN, DELTA_BINARY_PACKED,
// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT (parquet-wasm
// addresses a column by one name, so a struct's leaves take the file's
// "encoding" or the writer's default: with page version 2 and no
// dictionary, DELTA_BYTE_ARRAY for strings and DELTA_BINARY_PACKED for
// integers); it may carry its own "rows" and "columns". Each
// file written prints one JSON line: path, rows, row groups, and per leaf
// column the encodings and codecs its chunks hold. A requested encoding the
// file's chunks do not hold is an error (exit 1), as is any difference
// between what hyparquet reads and the rows.
import fs from 'node:fs';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

const fail = (message) => {
  process.stderr.write(`parquet_write: ${message}\n`);
  process.exit(1);
};

// --- schema -------------------------------------------------------------
function arrowType(column) {
  switch (column.type) {
    case 'utf8': return new arrow.Utf8();
    case 'int32': return new arrow.Int32();
    case 'int64': return new arrow.Int64();
    case 'float32': return new arrow.Float32();
    case 'float64': return new arrow.Float64();
    case 'bool': return new arrow.Bool();
    case 'struct':
      return new arrow.Struct(column.fields.map((f) => new arrow.Field(f.name, arrowType(f), true)));
    default: return fail(`column ${column.name}: unknown type ${column.type}`);
  }
}

function inferType(values, name) {
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length === 0) return { name, type: 'utf8' };
  if (present.every((v) => typeof v === 'string')) return { name, type: 'utf8' };
  if (present.every((v) => typeof v === 'boolean')) return { name, type: 'bool' };
  if (present.every((v) => typeof v === 'number')) {
    return { name, type: present.every(Number.isInteger) ? 'int64' : 'float64' };
  }
  if (present.every((v) => typeof v === 'object' && !Array.isArray(v))) {
    return { name, type: 'struct', fields: inferColumns(present) };
  }
  return fail(`column ${name}: values of mixed or unsupported types`);
}

function inferColumns(rows) {
  const names = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!names.includes(key)) names.push(key);
  return names.map((name) => inferType(rows.map((r) => r[name]), name));
}

// The value a row holds for a column, as Arrow's builders take it.
function toArrow(column, value) {
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case 'int64': return BigInt(value);
    case 'struct': {
      const out = {};
      for (const f of column.fields) out[f.name] = toArrow(f, value[f.name]);
      return out;
    }
    default: return value;
  }
}

function buildTable(columns, rows) {
  const vectors = {};
  for (const column of columns) {
    vectors[column.name] = arrow.vectorFromArray(rows.map((r) => toArrow(column, r[column.name])),
      arrowType(column));
  }
  return new arrow.Table(vectors);
}

// Leaf columns as dotted paths with their types.
function leaves(columns, prefix = '') {
  const out = [];
  for (const c of columns) {
    const path = prefix + c.name;
    if (c.type === 'struct') out.push(...leaves(c.fields, `${path}.`));
    else out.push({ path, type: c.type });
  }
  return out;
}

// --- writing ------------------------------------------------------------
const codecs = { UNCOMPRESSED: pq.Compression.UNCOMPRESSED, SNAPPY: pq.Compression.SNAPPY,
  GZIP: pq.Compression.GZIP, ZSTD: pq.Compression.ZSTD };
const encodings = { PLAIN: pq.Encoding.PLAIN, DELTA_BINARY_PACKED: pq.Encoding.DELTA_BINARY_PACKED,
  DELTA_LENGTH_BYTE_ARRAY: pq.Encoding.DELTA_LENGTH_BYTE_ARRAY,
  DELTA_BYTE_ARRAY: pq.Encoding.DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT: pq.Encoding.BYTE_STREAM_SPLIT };

function writerProperties(file) {
  let b = new pq.WriterPropertiesBuilder();
  const codec = file.codec ?? 'UNCOMPRESSED';
  if (!(codec in codecs)) fail(`${file.path}: unknown codec ${codec}`);
  b = b.setCompression(codecs[codec]);
  b = b.setDictionaryEnabled(file.dictionary ?? false);
  b = b.setWriterVersion((file.page_version ?? 1) === 2 ? pq.WriterVersion.V2 : pq.WriterVersion.V1);
  if (file.row_group_rows) b = b.setMaxRowGroupSize(file.row_group_rows);
  if (file.page_bytes) b = b.setDataPageSizeLimit(file.page_bytes);
  // A small dictionary page limit makes the writer fall back to the
  // column's plain encoding within a column chunk.
  if (file.dictionary_page_bytes) b = b.setDictionaryPageSizeLimit(file.dictionary_page_bytes);
  // Pages are cut where a batch ends: small batches let small page limits hold.
  if (file.batch_rows) b = b.setWriteBatchSize(file.batch_rows);
  b = b.setStatisticsEnabled(pq.EnabledStatistics.None);
  if (file.encoding) {
    if (!(file.encoding in encodings)) fail(`${file.path}: unknown encoding ${file.encoding}`);
    b = b.setEncoding(encodings[file.encoding]);
    if (!file.dictionary) b = b.setDictionaryEnabled(false);
  }
  for (const [leaf, name] of Object.entries(file.encodings ?? {})) {
    if (!(name in encodings)) fail(`${file.path}: unknown encoding ${name} for ${leaf}`);
    if (leaf.includes('.')) fail(`${file.path}: the writer sets encodings of top-level columns only (${leaf})`);
    b = b.setColumnEncoding(leaf, encodings[name]);
    b = b.setColumnDictionaryEnabled(leaf, false);
  }
  return b.build();
}

// --- reading back and comparing -----------------------------------------
// A leaf's value in a row as JSON would hold it (int64 as a number when
// exact, else a decimal string; float32 rounded as the file stores it).
function normal(type, value) {
  if (value === null || value === undefined) return null;
  if (type === 'int64') {
    const big = BigInt(value);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(big) : big.toString();
  }
  if (type === 'float32') return Math.fround(value);
  return value;
}

function at(row, path) {
  let v = row;
  for (const key of path.split('.')) {
    if (v === null || v === undefined || typeof v !== 'object') return null;
    v = v[key];
  }
  return v === undefined ? null : v;
}

function same(a, b) {
  if (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a)) return Number.isNaN(b);
  return Object.is(a, b) || a === b;
}

async function readRows(bytes) {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return parquetReadObjects({ file: buffer, compressors });
}

async function verify(path, bytes, leafList, rows) {
  const got = await readRows(bytes);
  if (got.length !== rows.length) fail(`${path}: hyparquet reads ${got.length} rows, ${rows.length} written`);
  for (let i = 0; i < rows.length; i++) {
    for (const { path: leaf, type } of leafList) {
      const want = normal(type, at(rows[i], leaf));
      const have = normal(type, at(got[i], leaf));
      if (!same(want, have)) {
        fail(`${path}: row ${i} column ${leaf}: hyparquet reads ${JSON.stringify(have)}, ` +
          `${JSON.stringify(want)} written`);
      }
    }
  }
}

function describe(path, bytes) {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const meta = parquetMetadata(buffer);
  const columns = {};
  for (const group of meta.row_groups) {
    for (const chunk of group.columns) {
      const m = chunk.meta_data;
      const leaf = m.path_in_schema.join('.');
      const entry = columns[leaf] ??= { encodings: [], codecs: [] };
      for (const e of m.encodings) if (!entry.encodings.includes(e)) entry.encodings.push(e);
      if (!entry.codecs.includes(m.codec)) entry.codecs.push(m.codec);
    }
  }
  return { path, rows: Number(meta.num_rows), row_groups: meta.row_groups.length, columns };
}

async function writeOne(file, columns, rows) {
  const table = buildTable(columns, rows);
  const wasmTable = pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
  const bytes = pq.writeParquet(wasmTable, writerProperties(file));
  fs.writeFileSync(file.path, bytes);
  const leafList = leaves(columns);
  await verify(file.path, bytes, leafList, rows);
  const summary = describe(file.path, bytes);
  for (const [leaf, name] of Object.entries(file.encodings ?? {})) {
    const held = summary.columns[leaf]?.encodings ?? [];
    if (!held.includes(name)) {
      fail(`${file.path}: column ${leaf} asked for ${name}, the writer used ${held.join(', ')}`);
    }
  }
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

async function write(specPath) {
  const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));
  for (const file of spec.files) {
    const rows = file.rows ?? spec.rows;
    const columns = file.columns ?? spec.columns ?? inferColumns(rows);
    await writeOne(file, columns, rows);
  }
}

async function jsonl(input, output, optionsPath) {
  const options = optionsPath ? JSON.parse(fs.readFileSync(optionsPath, 'utf8')) : {};
  const rows = fs.readFileSync(input, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  await writeOne({ codec: 'SNAPPY', ...options, path: output }, options.columns ?? inferColumns(rows), rows);
}

// Many files in one run: each FILE.parquet's rows into FILE.hyparquet.
async function readEach(columnList, files) {
  const columns = columnList.split(',');
  for (const file of files) {
    const lines = await rowsAsJson(file, columns);
    fs.writeFileSync(file.replace(/\.parquet$/, '.hyparquet'), lines);
  }
}

async function read(path, columns) {
  process.stdout.write(await rowsAsJson(path, columns));
}

async function rowsAsJson(path, columns) {
  const rows = await readRows(new Uint8Array(fs.readFileSync(path)));
  const buffer = fs.readFileSync(path);
  const meta = parquetMetadata(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength));
  const types = {};
  const typeOf = { INT32: 'int32', INT64: 'int64', FLOAT: 'float32', DOUBLE: 'float64', BOOLEAN: 'bool' };
  for (const group of meta.row_groups.slice(0, 1)) {
    for (const chunk of group.columns) {
      types[chunk.meta_data.path_in_schema.join('.')] = typeOf[chunk.meta_data.type] ?? 'utf8';
    }
  }
  // int64 values as exact decimal numbers (JSON.stringify cannot write a BigInt)
  const json = (type, v) => (v === null || v === undefined ? 'null'
    : type === 'int64' ? BigInt(v).toString() : JSON.stringify(normal(type, v)));
  const out = [];
  for (const row of rows) out.push(`[${columns.map((c) => json(types[c], at(row, c))).join(',')}]`);
  return out.length ? `${out.join('\n')}\n` : '';
}

const [mode, ...args] = process.argv.slice(2);
try {
  if (mode === 'write' && args.length === 1) await write(args[0]);
  else if (mode === 'jsonl' && (args.length === 2 || args.length === 3)) await jsonl(...args);
  else if (mode === 'read' && args.length >= 2) await read(args[0], args.slice(1));
  else if (mode === 'read-each' && args.length >= 2) await readEach(args[0], args.slice(1));
  else fail('usage: parquet_write.mjs write SPEC.json | jsonl IN.jsonl OUT.parquet [OPTIONS.json] | read FILE COLUMN... | read-each COLUMNS FILE...');
} catch (e) {
  fail(e.stack || String(e));
}
