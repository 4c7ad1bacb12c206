// Parquet tables as inputs and outputs of the command line, through hyparquet (reading) and hyparquet-writer
// (writing): pure JavaScript, no native code, the same readers in Node and the browser, and optional peer
// dependencies loaded on first use (the library itself depends on nothing). A table is read a row group at a time,
// only its text and id columns; the deduplicated table is written a row group at a time with the input's schema
// (and two added columns when annotated), so memory holds one row group, not the table. A file is a Parquet table
// when it starts and ends with "PAR1".
import fs from 'node:fs';
import type { AtomicFile } from './atomic-file.js';
import { zlibZstd } from './compression.js';
import { escapeName } from './output.js';
import { InputError } from './report.js';

type Hyparquet = typeof import('hyparquet');
type HyparquetWriter = typeof import('hyparquet-writer');
type FileMetaData = import('hyparquet').FileMetaData;
type SchemaElement = import('hyparquet').SchemaElement;
type AsyncBuffer = import('hyparquet').AsyncBuffer;

const MAGIC = 0x31524150; // "PAR1", little-endian

/** Whether the regular file at `name` starts and ends with Parquet's magic bytes. */
export function isParquetFile(name: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(name, 'r');
    const size = fs.fstatSync(fd).size;
    if (size < 12) return false;
    const b = Buffer.alloc(4);
    fs.readSync(fd, b, 0, 4, 0);
    if (b.readUInt32LE(0) !== MAGIC) return false;
    fs.readSync(fd, b, 0, 4, size - 4);
    return b.readUInt32LE(0) === MAGIC;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

let modules: Promise<{ read: Hyparquet; compressors: Record<string, unknown> }> | undefined;

/**
 * A Zstandard page decoder for hyparquet that refuses a page not at the length its header says. Through Node's
 * decoder (22.15 on), which checks the frame and runs natively, or zstddec: 200 MB of text from 5 pages of 40 MB
 * took fzstd (JavaScript) 2.05 s of a 5.1 s run.
 */
function checkedZstd(decode: (bytes: Uint8Array, outputLength: number) => Uint8Array) {
  return (input: Uint8Array, outputLength: number): Uint8Array => {
    const out = decode(input, outputLength);
    if (out.length !== outputLength)
      throw new Error(`a Zstandard page gave ${out.length} bytes where its header says ${outputLength}`);
    return out;
  };
}

/**
 * Zstandard pages through zstddec (the reference decoder compiled to WebAssembly) where Node has no native decoder
 * (before 22.15), or null when it is not installed or does not start (fzstd then). Its decode returns the bytes the
 * decoder reports, so an error code comes back short, and the length check catches it.
 */
async function zstddecPages(): Promise<((input: Uint8Array, outputLength: number) => Uint8Array) | null> {
  try {
    const decoder = new (await import('zstddec')).ZSTDDecoder();
    await decoder.init();
    return checkedZstd((bytes, outputLength) => decoder.decode(bytes, outputLength));
  } catch {
    return null;
  }
}

/** hyparquet and its codecs (Zstandard, gzip, Brotli, LZ4 besides its own Snappy), loaded once. */
function readerModules(): Promise<{ read: Hyparquet; compressors: Record<string, unknown> }> {
  modules ??= (async () => {
    try {
      const read = await import('hyparquet');
      const { compressors } = await import('hyparquet-compressors');
      const codecs = { ...(compressors as Record<string, unknown>) };
      const { zstdDecompressSync } = zlibZstd;
      if (typeof zstdDecompressSync === 'function') codecs.ZSTD = checkedZstd(zstdDecompressSync);
      else {
        const wasmZstd = await zstddecPages();
        if (wasmZstd) codecs.ZSTD = wasmZstd;
      }
      return { read, compressors: codecs };
    } catch {
      throw new Error(
        'reading Parquet needs the hyparquet and hyparquet-compressors packages (npm install hyparquet hyparquet-compressors)',
      );
    }
  })();
  return modules;
}

/** A file as hyparquet reads it: byte ranges on demand. */
function fileBuffer(name: string): AsyncBuffer {
  const fd = fs.openSync(name, 'r');
  const byteLength = fs.fstatSync(fd).size;
  return {
    byteLength,
    slice(start: number, end = byteLength): ArrayBuffer {
      const out = new Uint8Array(end - start);
      let got = 0;
      while (got < out.length) {
        const n = fs.readSync(fd, out, got, out.length - got, start + got);
        if (n === 0) throw new Error(`${name}: changed while it was read (now shorter)`);
        got += n;
      }
      return out.buffer;
    },
  };
}

export interface ParquetTable {
  /** The file's name as messages show it. */
  shown: string;
  metadata: FileMetaData;
  /** Top-level column names, in schema order. */
  columns: string[];
  file: AsyncBuffer;
  rowGroups: Array<{ start: number; end: number }>;
}

/** Opens a table: its footer, its columns, its row groups. */
export async function openParquet(name: string): Promise<ParquetTable> {
  const { read } = await readerModules();
  const file = fileBuffer(name);
  const shown = escapeName(name);
  let metadata: FileMetaData;
  let columns: string[];
  try {
    metadata = await read.parquetMetadataAsync(file);
    columns = read.parquetSchema(metadata).children.map((c) => c.element.name);
  } catch (error) {
    throw new InputError(`${shown}: not a readable Parquet table (its footer: ${(error as Error).message})`);
  }
  const rowGroups: Array<{ start: number; end: number }> = [];
  let at = 0;
  for (const g of metadata.row_groups) {
    const end = at + Number(g.num_rows);
    rowGroups.push({ start: at, end });
    at = end;
  }
  return { shown, metadata, columns, file, rowGroups };
}

/** Rows [start, end) of the given columns, as arrays in the columns' order. */
export async function readRows(t: ParquetTable, columns: string[], start: number, end: number): Promise<unknown[][]> {
  const { read, compressors } = await readerModules();
  let rows: unknown[][] = [];
  try {
    await read.parquetRead({
      file: t.file,
      metadata: t.metadata,
      columns,
      rowStart: start,
      rowEnd: end,
      compressors: compressors as never,
      onComplete: (r: unknown[][]) => {
        rows = r;
      },
    });
  } catch (error) {
    // A damaged page: a codec's error, or (where a page decompressed to garbage of the right length, as Zstandard
    // frames without checksums can) the decoder's. Either way a message naming where, not a stack trace.
    const group = t.rowGroups.findIndex((g) => start < g.end);
    throw new InputError(
      `${t.shown}: row group ${group} (rows ${start} to ${end - 1}) cannot be read, the table is damaged: ${(error as Error).message}`,
    );
  }
  return rows;
}

/**
 * Writes a table with `schema` a row group at a time to `to`: `write` takes rows as arrays in the schema's
 * top-level column order.
 */
export async function parquetWriter(
  to: AtomicFile,
  schema: SchemaElement[],
): Promise<{ write(rows: unknown[][]): void; finish(): void }> {
  let writerModule: HyparquetWriter;
  try {
    writerModule = await import('hyparquet-writer');
  } catch {
    throw new Error('writing Parquet needs the hyparquet-writer package (npm install hyparquet-writer)');
  }
  const bytes = new writerModule.ByteWriter();
  // Flush to the target past 1 MB, as hyparquet-writer's own file writer does.
  const ensure = bytes.ensure.bind(bytes);
  const flush = () => {
    to.write(new Uint8Array(bytes.buffer, 0, bytes.index));
    bytes.index = 0;
  };
  bytes.ensure = (size: number) => {
    if (bytes.index > 1 << 20) flush();
    ensure(size);
  };
  bytes.finish = flush;
  // hyparquet-writer pins its own hyparquet: the same schema type, another copy of its declaration.
  const writer = new writerModule.ParquetWriter({ writer: bytes, schema: schema as never });
  const names = topLevelNames(schema);
  return {
    write(rows: unknown[][]) {
      if (rows.length === 0) return;
      const columnData = names.map((name, c) => ({ name, data: rows.map((row) => row[c]) }));
      writer.write({ columnData: columnData as never, rowGroupSize: rows.length });
    },
    finish() {
      writer.finish();
    },
  };
}

/** The top-level column names of a flat schema (the root's children). */
function topLevelNames(schema: SchemaElement[]): string[] {
  return schema.slice(1).map((e) => e.name);
}

/** Whether every column of the table is a top-level primitive (nested columns are not written back). */
export function isFlat(schema: SchemaElement[]): boolean {
  return schema.slice(1).every((e) => !e.num_children) && schema[0]!.num_children === schema.length - 1;
}

/** The schema with two optional UTF-8 columns added (cluster, duplicate_of). */
export function withAnnotations(schema: SchemaElement[]): SchemaElement[] {
  const utf8 = (name: string): SchemaElement =>
    ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' }) as SchemaElement;
  return [
    { ...schema[0]!, num_children: (schema[0]!.num_children ?? 0) + 2 },
    ...schema.slice(1),
    utf8('cluster'),
    utf8('duplicate_of'),
  ];
}
