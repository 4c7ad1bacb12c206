// Reading documents for the command line as streams of any size: each source (sources.ts) is read in chunks of
// bytes, whole (one document per file), split into lines on the bytes (--lines), or parsed a line at a time
// (--jsonl). Per document only its locator (source, byte offset, length) and name parts are kept, in typed
// arrays; `reread` reads the documents of candidate pairs again for verification. Standard input, FIFOs and
// devices cannot be read twice: for dedup their bytes are copied to a temporary spool file as they stream by.
// A file whose first 8 KB hold a NUL byte is skipped as binary unless --binary; a document over the size limit
// (MAX_DOCUMENT_BYTES, 1 GiB) is a bad input.
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_DOCUMENT_BYTES } from '../dedup/stream-hash.js';
import { MAX_VERIFIED_DOCUMENT_BYTES } from '../dedup/document-size.js';
import type { Locators, StreamDocument } from '../dedup/stream.js';
import { escapeName } from './output.js';
import type { Progress } from './progress.js';
import { InputError, type Reporter, UsageError, errorCode } from './report.js';
import { type Source, listSources } from './sources.js';
import { corruptMessage, decompressed } from './compression.js';
import { type ParquetTable, isParquetFile, openParquet, readRows } from './parquet.js';
import { ID_PLAIN, readJsonFields } from '../runtime/json-field.js';

export interface ReadOptions {
  jsonl: boolean;
  /** --field or --id-field was given. */
  fieldsNamed: boolean;
  /** CSV (",": RFC 4180 quoting) or TSV ("\t": no quoting) with a header row; null for neither. */
  delimiter: ',' | '\t' | null;
  field: string;
  idField: string;
  lines: boolean;
  strict: boolean;
  followSymlinks: boolean;
  binary: boolean;
  /**
   * Every text is handed on as UTF-8 bytes, whatever the format, so that --keep longest / shortest (which compare a
   * Uint8Array's bytes and a string's UTF-16 units) measure the same two texts alike in every format.
   */
  byteTexts?: boolean;
  /** --id-field was given: a CSV header or Parquet table without that column is then an error, not FILE:LINE names. */
  idFieldNamed?: boolean;
  /**
   * dedup verifies pairs: a document over MAX_VERIFIED_DOCUMENT_BYTES (64 MiB of UTF-8), which dedupStream would
   * refuse for the whole run, is reported instead and never handed on: a record is passed through like one without
   * a text, a whole file skipped.
   */
  verify?: boolean;
}

const CHUNK = 4 << 20;
const SNIFF = 8192;
/** Ranges closer than this are read again in one read. */
const GAP = 64 << 10;
const SPAN = 8 << 20;
/** Repeated JSON ids reported one by one; more are counted. */
const REPEATS_SHOWN = 10;
/** Names of files that usually hold one record per line or row (compressed or not). */
const RECORD_FILE_NAME = /\.(jsonl|ndjson|csv|tsv)(\.(gz|zst|zstd))?$/i;

const GIB = 2 ** 30;
export const LIMIT_TEXT =
  MAX_DOCUMENT_BYTES % GIB === 0 ? `${MAX_DOCUMENT_BYTES / GIB} GiB` : `${MAX_DOCUMENT_BYTES} bytes`;
const MIB = 2 ** 20;
const VERIFIED_LIMIT_TEXT =
  MAX_VERIFIED_DOCUMENT_BYTES % MIB === 0
    ? `${MAX_VERIFIED_DOCUMENT_BYTES / MIB} MiB`
    : `${MAX_VERIFIED_DOCUMENT_BYTES} bytes`;

class U32s {
  data = new Uint32Array(1024);
  push(at: number, x: number): void {
    if (at >= this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[at] = x;
  }
}

class F64s {
  data = new Float64Array(1024);
  push(at: number, x: number): void {
    if (at >= this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[at] = x;
  }
}

/**
 * JSON lines are read a chunk at a time, and a line across two chunks alone: the small chunks of pipes (64 KiB)
 * and decompressors (16 KiB) are gathered to at least this many bytes first.
 */
const BATCH_BYTES = 1 << 20;

/** Chunks joined until each holds at least `bytes` (the last may hold fewer). */
async function* gathered(chunks: AsyncIterable<Buffer>, bytes: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    if (size === 0 && chunk.length >= bytes) {
      yield chunk;
      continue;
    }
    parts.push(chunk);
    size += chunk.length;
    if (size >= bytes) {
      yield Buffer.concat(parts, size);
      parts = [];
      size = 0;
    }
  }
  if (size > 0) yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
}

/** Lines of one chunk waiting to be read together: bounds in the chunk, byte offsets in the source, line numbers. */
class JsonLineBatch {
  count = 0;
  readonly bounds = new U32s();
  readonly offsets = new F64s();
  readonly numbers = new F64s();
  add(start: number, end: number, offset: number, no: number): void {
    const q = this.count++;
    this.bounds.push(2 * q, start);
    this.bounds.push(2 * q + 1, end);
    this.offsets.push(q, offset);
    this.numbers.push(q, no);
  }
}

/**
 * Whether the batch's lines are well-formed UTF-8, checked in one pass (simdutf: 20 GB/s here), so the JSON kernel
 * can copy bytes above 0x7f without checking each one: on 520 MB of mail bodies the kernel took 450 ms instead of
 * 515 (the whole run moved within its noise).
 */
function linesAreUtf8(chunk: Buffer, batch: JsonLineBatch): boolean {
  const bounds = batch.bounds.data;
  return batch.count > 0 && isUtf8(chunk.subarray(bounds[0]!, bounds[2 * batch.count - 1]!));
}

/** Whether a line holds nothing but white space (String.prototype.trim's). */
function isBlank(line: Uint8Array): boolean {
  let ascii = true;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) continue;
    if (c < 0x80) return false;
    ascii = false;
  }
  return ascii || Buffer.from(line.buffer, line.byteOffset, line.length).toString('utf8').trim() === '';
}

const SKIP_SOURCE = Symbol('skip the source');
/** A record read whole (a JSON object, a CSV row) that holds no text: no document, but still a record to write. */
const NO_TEXT = Symbol('a record without a text');

/**
 * Records without a text (a JSON object whose text field is missing or not a string, a CSV row too short to hold
 * the text column, a Parquet row whose text is NULL), in input order: where each lies and how many documents came
 * before it, so the corpus writer can put it back among the documents.
 */
export interface PassedRecords {
  count: number;
  source: Uint32Array;
  offset: Float64Array;
  length: Float64Array;
  line: Float64Array;
  /** Documents read before the record. */
  before: Float64Array;
  /** Fields a CSV / TSV row lacks against its header (0 otherwise). */
  missing: Uint32Array;
  /** How many of the records hold a text, too large to verify (the others hold none). */
  tooLarge: number;
}

/**
 * A JSON record's field by name, or by a dotted path into nested objects ("meta.body") when no field has that
 * name itself.
 */
export function fieldAt(record: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(record, name) || !name.includes('.')) return record[name];
  let value: unknown = record;
  for (const key of name.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key))
      return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Fields named in a message about a record without its text field: the first few of its own. */
const FIELDS_SHOWN = 8;

/** " (its fields: "id", "body"; --field names the text field)", or " (it has no fields)". */
function fieldsOf(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  if (keys.length === 0) return ' (it has no fields)';
  const named = keys.slice(0, FIELDS_SHOWN).map((k) => JSON.stringify(k));
  if (keys.length > FIELDS_SHOWN) named.push(`… ${keys.length - FIELDS_SHOWN} more`);
  return ` (its fields: ${named.join(', ')}; --field names the text field)`;
}

/** The keys fieldAt follows to `name` in `record`. */
function fieldPath(record: Record<string, unknown>, name: string): string[] {
  return Object.hasOwn(record, name) || !name.includes('.') ? [name] : name.split('.');
}

/** Whether a JSON token (a valid value) is a number. */
function isNumberToken(token: string): boolean {
  const c = token.charCodeAt(0);
  return c === 0x2d || (c >= 0x30 && c <= 0x39);
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** The end of the JSON string whose opening quote is at `p` (just past its closing quote). */
function stringEnd(json: string, p: number): number {
  for (let q = p + 1; ; q++) {
    const c = json.charCodeAt(q);
    if (c === 0x5c) q++;
    else if (c === 0x22 || Number.isNaN(c)) return q + 1;
  }
}

/** The end of the JSON value starting at `p`. */
function valueEnd(json: string, p: number): number {
  const c = json.charCodeAt(p);
  if (c === 0x22) return stringEnd(json, p);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let q = p; q < json.length; q++) {
      const d = json.charCodeAt(q);
      if (d === 0x22) q = stringEnd(json, q) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return q + 1;
    }
    return json.length;
  }
  let q = p;
  while (q < json.length && !isSpace(json.charCodeAt(q)) && !',]}'.includes(json[q]!)) q++;
  return q;
}

/**
 * The source text of the value at `path` in `json`, a text JSON.parse accepted (a repeated key: its last value, as
 * JSON.parse keeps); undefined when the path leads nowhere.
 */
export function valueTextAt(json: string, path: readonly string[]): string | undefined {
  let from = 0;
  let to = json.length;
  for (const key of path) {
    let p = from;
    while (p < to && isSpace(json.charCodeAt(p))) p++;
    if (json.charCodeAt(p) !== 0x7b) return undefined;
    let found: [number, number] | undefined;
    p++;
    for (;;) {
      while (p < to && isSpace(json.charCodeAt(p))) p++;
      if (json.charCodeAt(p) !== 0x22) break; // "}" of an empty object
      const keyEnd = stringEnd(json, p);
      const raw = json.slice(p, keyEnd);
      const name = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      p = keyEnd;
      while (isSpace(json.charCodeAt(p)) || json.charCodeAt(p) === 0x3a) p++;
      const end = valueEnd(json, p);
      if (name === key) found = [p, end];
      p = end;
      while (p < to && isSpace(json.charCodeAt(p))) p++;
      if (json.charCodeAt(p) !== 0x2c) break;
      p++;
    }
    if (!found) return undefined;
    [from, to] = found;
  }
  return json.slice(from, to);
}

/**
 * The fields of one CSV row (delimiter ","; RFC 4180: a field in double quotes may hold the delimiter, newlines and
 * doubled quotes) or TSV row ("\t", no quoting), decoded as UTF-8. A carriage return ending the row is dropped.
 */
export function splitRow(row: Buffer, delimiter: ',' | '\t'): string[] {
  let end = row.length;
  if (end > 0 && row[end - 1] === 13) end--;
  const text = row.toString('utf8', 0, end);
  if (delimiter === '\t' || !text.includes('"')) return text.split(delimiter);
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) {
          value += text.slice(j);
          j = text.length;
          break;
        }
        value += text.slice(j, q);
        if (text[q + 1] === '"') {
          value += '"';
          j = q + 2;
        } else {
          j = q + 1;
          break;
        }
      }
      // Anything between the closing quote and the delimiter is kept, as lenient readers do.
      const next = text.indexOf(',', j);
      fields.push(value + text.slice(j, next < 0 ? text.length : next));
      if (next < 0) return fields;
      i = next + 1;
    } else {
      const next = text.indexOf(',', i);
      fields.push(text.slice(i, next < 0 ? text.length : next));
      if (next < 0) return fields;
      i = next + 1;
    }
  }
}

function startsWithBom(b: Uint8Array): boolean {
  return b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
}

export class Corpus {
  readonly sources: Source[];
  /** Bytes of every source of known size. */
  readonly knownBytes: number;
  bytesRead = 0;
  count = 0;
  private readonly sourceOf = new U32s();
  private readonly lineOf = new F64s();
  private readonly ids: Array<string | undefined> = [];
  private readonly firstWithId = new Map<string, number>();
  private repeats = 0;
  private spool: { dir: string; fd: number; size: number } | undefined;
  private readonly spoolBase: number[] = [];
  /** Sources read through a decompressor (by their magic bytes): read again from the spool, like streams. */
  private readonly decompressed = new Set<number>();
  private readonly headers: Buffer[] = [];
  /** Sources whose first line or header row began with a UTF-8 byte order mark (kept out of the record). */
  private readonly boms: boolean[] = [];
  /** Documents from CSV / TSV rows with fewer fields than their header: how many fewer. */
  private readonly short = new Map<number, number>();
  private passedCount = 0;
  /** Records passed because their text is too large to verify (tooLargeToVerify). */
  private passedTooLarge = 0;
  private readonly passed = {
    source: new U32s(),
    offset: new F64s(),
    length: new F64s(),
    line: new F64s(),
    before: new F64s(),
    missing: new U32s(),
  };

  /** `rereadable`: the documents will be read again (dedup), so streams are spooled. */
  constructor(
    inputs: readonly string[],
    private readonly o: ReadOptions,
    private readonly report: Reporter,
    private readonly progress: Progress,
    private readonly rereadable: boolean,
  ) {
    if (inputs.length === 0) {
      // Waiting on a terminal for documents nobody is typing would look like a hang.
      if (process.stdin.isTTY)
        throw new UsageError('no input: give files or directories, or pipe documents into standard input');
      inputs = ['-'];
    }
    this.sources = listSources(inputs, o, report);
    this.knownBytes = this.sources.reduce((s, x) => s + (x.size ?? 0), 0);
    // Parquet tables are found by their magic bytes; they hold rows, so they cannot be mixed with other inputs.
    const tables = this.sources.filter((src) => src.seekable && isParquetFile(src.name));
    this.parquet = tables.length > 0;
    if (this.parquet) {
      if (o.jsonl || o.lines || o.delimiter !== null)
        throw new UsageError(
          `${escapeName(tables[0]!.name)} is a Parquet table: drop --jsonl / --csv / --tsv / --lines`,
        );
      const other = this.sources.find((src) => !tables.includes(src));
      if (other)
        throw new UsageError(
          `${escapeName(tables[0]!.name)} is a Parquet table and ${other.name === '-' ? 'standard input' : escapeName(other.name)} is not: give them in separate runs`,
        );
    }
    if (this.wholeFiles && o.fieldsNamed)
      throw new UsageError('--field and --id-field name fields: add --jsonl, --csv or --tsv, or give Parquet tables');
    // `dedup corpus.jsonl` reads the whole file as one document and finds nothing: say so, for files named on the
    // command line (not those met in a directory, where whole files are what a folder of documents means), in one
    // line however many (`dedup *.csv` may name thousands of whole files on purpose).
    const likeRecords = this.wholeFiles ? [...new Set(inputs)].filter((input) => RECORD_FILE_NAME.test(input)) : [];
    if (likeRecords.length > 0) {
      const read = new Set(this.sources.map((src) => src.name));
      const named = likeRecords.filter((input) => read.has(input));
      if (named.length > 0) {
        const first = escapeName(named[0]!);
        const which = named.length === 1 ? `${first} is` : `${first} and ${named.length - 1} more such files are`;
        const each = named.length === 1 ? '' : ' each';
        report.tell(
          `${which} read as one document${each} (whole files are documents by default): add --jsonl, --csv or --tsv to read one per line or row`,
        );
      }
    }
  }

  /** Whether the inputs are Parquet tables (one document per row). */
  readonly parquet: boolean;
  /** Each Parquet source's table, once opened. */
  private readonly tables: Array<ParquetTable | undefined> = [];

  /** A Parquet source's table (opened when it was read). */
  tableOf(s: number): ParquetTable {
    return this.tables[s]!;
  }

  /** Every document of every source, in order, with its locator. */
  async *documents(): AsyncGenerator<StreamDocument> {
    for (let s = 0; s < this.sources.length; s++) {
      const src = this.sources[s]!;
      if (src.size !== undefined && src.size > MAX_DOCUMENT_BYTES && this.wholeFiles) {
        this.report.bad(
          `${this.shown(s)}: ${src.size} bytes, more than the ${LIMIT_TEXT} limit of one document`,
          'over the size limit',
        );
        continue;
      }
      try {
        yield* this.read(s);
      } catch (error) {
        // Only the file system's errors (with a code) make an input unreadable; anything else is a bug or --strict.
        if (error instanceof InputError || typeof (error as NodeJS.ErrnoException).code !== 'string') throw error;
        this.report.bad(`${this.shown(s)}: cannot read (${errorCode(error)})`, 'unreadable');
      }
    }
    if (this.repeats > REPEATS_SHOWN)
      this.report.tell(`warning: ${this.repeats - REPEATS_SHOWN} more repeated ids (${this.repeats} in all)`);
    this.report.summary();
  }

  /**
   * Documents' texts again (Reread of dedupStream): nearby ranges of one source are read in one go. The reads are
   * synchronous: small scattered reads of a cached file cost microseconds each, an asynchronous read a trip
   * through libuv's thread pool; the worker threads keep verifying meanwhile.
   */
  readonly reread = (loc: Locators): Array<string | Uint8Array> | Promise<Array<string | Uint8Array>> =>
    this.parquet ? this.rereadRows(loc) : this.rereadBytes(loc);

  /** Parquet rows again, a row group's text column at a time. */
  private async rereadRows(loc: Locators): Promise<Array<string | Uint8Array>> {
    const out = new Array<string | Uint8Array>(loc.index.length);
    const wanted = new Map<string, number[]>(); // "source:group" → positions in loc
    for (let q = 0; q < loc.index.length; q++) {
      const t = this.tables[loc.source[q]!]!;
      const g = t.rowGroups.findIndex((x) => loc.offset[q]! < x.end);
      const key = `${loc.source[q]}:${g}`;
      const list = wanted.get(key);
      if (list) list.push(q);
      else wanted.set(key, [q]);
    }
    for (const [key, list] of wanted) {
      const [s, g] = key.split(':').map(Number) as [number, number];
      const t = this.tables[s]!;
      const group = t.rowGroups[g]!;
      const rows = await readRows(t, [this.o.field], group.start, group.end);
      for (const q of list) {
        const text = rows[loc.offset[q]! - group.start]?.[0];
        if (typeof text !== 'string') throw new InputError(`${this.shown(s)}: changed while it was read`);
        out[q] = text;
      }
    }
    return out;
  }

  private rereadBytes(loc: Locators): Array<string | Uint8Array> {
    const n = loc.index.length;
    const out = new Array<string | Uint8Array>(n);
    const order = Array.from({ length: n }, (_, i) => i).sort(
      (x, y) => loc.source[x]! - loc.source[y]! || loc.offset[x]! - loc.offset[y]!,
    );
    let i = 0;
    while (i < n) {
      const s = loc.source[order[i]!]!;
      const { file, base } = this.rereadFrom(s);
      const fd = fs.openSync(file, 'r');
      try {
        while (i < n && loc.source[order[i]!] === s) {
          const start = loc.offset[order[i]!]!;
          let end = start + loc.length[order[i]!]!;
          let j = i + 1;
          for (; j < n; j++) {
            const d = order[j]!;
            if (loc.source[d] !== s || loc.offset[d]! - end >= GAP || loc.offset[d]! + loc.length[d]! - start > SPAN)
              break;
            end = Math.max(end, loc.offset[d]! + loc.length[d]!);
          }
          const buf = Buffer.allocUnsafe(end - start);
          let got = 0;
          while (got < buf.length) {
            const read = fs.readSync(fd, buf, got, buf.length - got, base + start + got);
            if (read === 0) throw new InputError(`${this.shown(s)}: changed while it was read (now shorter)`);
            got += read;
          }
          for (let m = i; m < j; m++) {
            const d = order[m]!;
            const at = loc.offset[d]! - start;
            out[d] = this.textAgain(buf.subarray(at, at + loc.length[d]!), s);
          }
          i = j;
        }
      } finally {
        fs.closeSync(fd);
      }
    }
    return out;
  }

  /** Where source s can be read again: its own file, or the spool that holds a stream's bytes from `base` on. */
  rereadFrom(s: number): { file: string; base: number } {
    const src = this.sources[s]!;
    if (src.seekable && !this.decompressed.has(s)) return { file: src.name, base: 0 };
    if (!this.spool) throw new Error(`${this.shown(s)} was not spooled`);
    return { file: path.join(this.spool.dir, 'spool'), base: this.spoolBase[s]! };
  }

  /** Whether documents are JSON Lines records. */
  get jsonl(): boolean {
    return this.o.jsonl;
  }

  /** A source's name for messages. */
  sourceName(s: number): string {
    return this.shown(s);
  }

  /** Whether each document is a whole file (neither --lines nor --jsonl). */
  get wholeFiles(): boolean {
    return !this.o.lines && !this.o.jsonl && this.o.delimiter === null && !this.parquet;
  }

  /** The CSV or TSV delimiter, or null. */
  get delimiter(): ',' | '\t' | null {
    return this.o.delimiter;
  }

  /** A CSV or TSV source's header row as read (without its line end), once the source has been read. */
  headerOf(s: number): Buffer | undefined {
    return this.headers[s];
  }

  /** Whether source s began with a UTF-8 byte order mark, which its first record's locator leaves out. */
  bomOf(s: number): boolean {
    return this.boms[s] === true;
  }

  /** How many fields document i's CSV / TSV row lacks against its header (0 for a full row). */
  missingFields(i: number): number {
    return this.short.get(i) ?? 0;
  }

  /** The records without a text read so far. */
  passedRecords(): PassedRecords {
    const n = this.passedCount;
    const p = this.passed;
    return {
      count: n,
      source: p.source.data.subarray(0, n),
      offset: p.offset.data.subarray(0, n),
      length: p.length.data.subarray(0, n),
      line: p.line.data.subarray(0, n),
      before: p.before.data.subarray(0, n),
      missing: p.missing.data.subarray(0, n),
      tooLarge: this.passedTooLarge,
    };
  }

  /** The path of a whole-file document, as found. */
  pathOf(i: number): string {
    return this.sources[this.sourceOf.data[i]!]!.name;
  }

  /** Removes the spool file, if any. */
  close(): void {
    if (!this.spool) return;
    fs.closeSync(this.spool.fd);
    fs.rmSync(this.spool.dir, { recursive: true, force: true });
    this.spool = undefined;
  }

  /** A document's name as a JSON value: its JSON id, else a string (file, or file:line). */
  nameJson(i: number): string {
    return this.ids[i] ?? JSON.stringify(this.plainName(i));
  }

  /** A document's name for text output: its JSON id as written, else the file name, escaped. */
  nameText(i: number): string {
    return this.ids[i] ?? escapeName(this.plainName(i));
  }

  /** A document's name as plain text: its id (a string id without JSON quotes), else FILE or FILE:LINE. */
  nameValue(i: number): string {
    const id = this.ids[i];
    if (id === undefined) return this.plainName(i);
    const value = JSON.parse(id) as unknown;
    return typeof value === 'string' ? value : id;
  }

  /** A document's name for a CSV cell (before quoting): its JSON id, else the file name as it is. */
  nameCsv(i: number): string {
    return this.ids[i] ?? this.plainName(i);
  }

  private plainName(i: number): string {
    const src = this.sources[this.sourceOf.data[i]!]!.name;
    return this.wholeFiles ? src : `${src}:${this.lineOf.data[i]}`;
  }

  private shown(s: number): string {
    const name = this.sources[s]!.name;
    return name === '-' ? 'standard input' : escapeName(name);
  }

  private textAgain(bytes: Buffer, s: number): string | Uint8Array {
    if (this.o.delimiter !== null) {
      const text = this.rowText(bytes, s);
      if (typeof text !== 'string') throw new InputError(`${this.shown(s)}: changed while it was read`);
      return text;
    }
    if (!this.o.jsonl) return bytes;
    const text = this.jsonText(bytes.toString('utf8'));
    if (typeof text !== 'string') throw new InputError(`${this.shown(s)}: changed while it was read`);
    return text;
  }

  private jsonText(line: string): unknown {
    try {
      const value = JSON.parse(line) as unknown;
      return value !== null && typeof value === 'object'
        ? fieldAt(value as Record<string, unknown>, this.o.field)
        : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The source's chunks, decompressed when its first bytes are gzip's or Zstandard's magic (compression.ts): the
   * first 8 KB are sniffed for NUL bytes; streams and decompressed sources are copied to the spool.
   */
  private async *chunks(s: number, skipped: { binary: boolean }): AsyncGenerator<Buffer> {
    const src = this.sources[s]!;
    const raw = src.name === '-' ? process.stdin : fs.createReadStream(src.name, { highWaterMark: CHUNK });
    try {
      const { format, stream } = await decompressed(raw as AsyncIterable<Buffer>);
      if (format !== null) this.decompressed.add(s);
      const head: Buffer[] = [];
      let headBytes = 0;
      let sniffed = this.o.binary;
      const spooled = (!src.seekable || format !== null) && this.rereadable;
      if (spooled) this.spoolBase[s] = this.openSpool().size;
      try {
        for await (const chunk of stream) {
          if (!sniffed) {
            head.push(chunk);
            headBytes += chunk.length;
            if (headBytes < SNIFF) continue;
            sniffed = true;
            if (this.looksBinary(head, s)) {
              skipped.binary = true;
              return;
            }
            for (const c of head.splice(0)) yield this.account(c, spooled);
          } else yield this.account(chunk, spooled);
        }
      } catch (error) {
        // A truncated or corrupt compressed file is never half-read into the results.
        if (format !== null) throw new InputError(`${this.shown(s)}: ${corruptMessage(format, error)}`);
        throw error;
      }
      if (!sniffed) {
        if (this.looksBinary(head, s)) skipped.binary = true;
        else for (const c of head) yield this.account(c, spooled);
      }
    } finally {
      if (src.name !== '-') (raw as fs.ReadStream).destroy();
    }
  }

  private looksBinary(head: Buffer[], s: number): boolean {
    const first = Buffer.concat(head).subarray(0, SNIFF);
    if (!first.includes(0)) return false;
    this.report.warn(
      `${this.shown(s)}: looks binary (a NUL byte in its first 8 KB), not read (use --binary)`,
      'binary files',
    );
    return true;
  }

  private account(chunk: Buffer, spooled: boolean): Buffer {
    this.bytesRead += chunk.length;
    this.progress.update('reading', this.bytesRead, Math.max(this.knownBytes, this.bytesRead), 'bytes');
    if (spooled) {
      const spool = this.spool!;
      let at = 0;
      while (at < chunk.length) at += fs.writeSync(spool.fd, chunk, at, chunk.length - at, spool.size + at);
      spool.size += chunk.length;
    }
    return chunk;
  }

  private openSpool(): { dir: string; fd: number; size: number } {
    if (!this.spool) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-wasm-'));
      this.spool = { dir, fd: fs.openSync(path.join(dir, 'spool'), 'w+', 0o600), size: 0 };
      // Also when the run ends some other way (an uncaught error, process.exit on a closed pipe).
      process.once('exit', () => this.close());
    }
    return this.spool;
  }

  /** Notes a record without a text, between the documents read so far and the next. */
  private pass(s: number, offset: number, length: number, line: number, missing = 0): void {
    const q = this.passedCount++;
    const p = this.passed;
    p.source.push(q, s);
    p.offset.push(q, offset);
    p.length.push(q, length);
    p.line.push(q, line);
    p.before.push(q, this.count);
    p.missing.push(q, missing);
  }

  /**
   * Whether a record's text (line `line` of source s, or row `line` of a table) is too large to verify (o.verify):
   * then it is reported, and the caller passes the record through instead of registering a document.
   */
  private tooLargeToVerify(text: string | Uint8Array, s: number, line: number): boolean {
    if (!this.o.verify) return false;
    // A UTF-16 unit is one to three bytes of UTF-8: counted exactly only when that could decide.
    if (
      typeof text === 'string'
        ? text.length * 3 <= MAX_VERIFIED_DOCUMENT_BYTES
        : text.length <= MAX_VERIFIED_DOCUMENT_BYTES
    )
      return false;
    const bytes = typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : text.length;
    if (bytes <= MAX_VERIFIED_DOCUMENT_BYTES) return false;
    this.reportTooLargeToVerify(bytes, s, line);
    this.passedTooLarge++;
    return true;
  }

  /** Reports a document of `bytes` bytes of UTF-8 as too large to verify: a record (with `line`) or a whole file. */
  private reportTooLargeToVerify(bytes: number, s: number, line?: number): void {
    this.report.bad(
      `${this.shown(s)}${line === undefined ? '' : `:${line}`}: ${bytes} bytes${line === undefined ? '' : ' of text'}, more than the ${VERIFIED_LIMIT_TEXT} that verification takes (--no-verify takes up to ${LIMIT_TEXT}): ${line === undefined ? 'not deduplicated' : 'passed through, not deduplicated'}`,
      'too large to verify',
    );
  }

  private add(s: number, line: number): number {
    const i = this.count++;
    this.sourceOf.push(i, s);
    if (!this.wholeFiles) this.lineOf.push(i, line);
    return i;
  }

  private async *read(s: number): AsyncGenerator<StreamDocument> {
    if (this.parquet) {
      yield* this.readTable(s);
      return;
    }
    if (this.o.delimiter !== null) {
      yield* this.readRows(s);
      return;
    }
    if (this.wholeFiles) {
      let parts: Buffer[] = [];
      let size = 0;
      const skipped = { binary: false };
      for await (const chunk of this.chunks(s, skipped)) {
        size += chunk.length;
        if (size > MAX_DOCUMENT_BYTES) {
          this.report.bad(`${this.shown(s)}: more than the ${LIMIT_TEXT} limit of one document`, 'over the size limit');
          return;
        }
        // A file too large to verify is only counted on to its end (or to the limit above), not kept.
        if (this.o.verify && size > MAX_VERIFIED_DOCUMENT_BYTES) parts = [];
        else parts.push(chunk);
      }
      if (skipped.binary) return;
      if (this.o.verify && size > MAX_VERIFIED_DOCUMENT_BYTES) {
        this.reportTooLargeToVerify(size, s);
        return;
      }
      const text = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
      this.add(s, 0);
      yield { text, source: s, offset: 0, length: size };
      return;
    }
    // One document per line: split on the bytes, carrying a line across chunks. A line over the limit ends the
    // source (reading on to its end could take forever: /dev/zero has no newline).
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let lineStart = 0;
    let lineNo = 1;
    const emit = (line: Buffer, start: number, no: number): StreamDocument | undefined => {
      let offset = start;
      if (no === 1 && startsWithBom(line)) {
        line = line.subarray(3);
        offset += 3;
        this.boms[s] = true;
      }
      if (isBlank(line)) return undefined;
      if (this.o.lines) {
        if (this.tooLargeToVerify(line, s, no)) {
          this.pass(s, offset, line.length, no);
          return undefined;
        }
        this.add(s, no);
        return { text: line, source: s, offset, length: line.length };
      }
      const text = this.parseLine(line, s, no);
      if (text === NO_TEXT) this.pass(s, offset, line.length, no);
      if (typeof text !== 'string') return undefined;
      return { text: this.asText(text), source: s, offset, length: line.length };
    };
    const tooLong = (): void => {
      this.report.bad(
        `${this.shown(s)}:${lineNo}: a line longer than the ${LIMIT_TEXT} limit of one document (the rest of the input is not read)`,
        'over the size limit',
      );
    };
    // JSON lines whole inside a chunk are read together in WebAssembly (jsonLines); one carried across chunks, alone.
    const batch = this.o.jsonl ? new JsonLineBatch() : null;
    const chunks = this.chunks(s, { binary: false });
    for await (const chunk of batch ? gathered(chunks, BATCH_BYTES) : chunks) {
      let pos = 0;
      for (;;) {
        const nl = chunk.indexOf(10, pos);
        if (nl < 0) break;
        const length = carryBytes + nl - pos;
        if (length > MAX_DOCUMENT_BYTES) return tooLong();
        if (batch && carryBytes === 0) {
          // As emit: a byte order mark dropped from the first line, blank lines skipped.
          const bom = lineNo === 1 && startsWithBom(chunk.subarray(pos, nl)) ? 3 : 0;
          if (bom) this.boms[s] = true;
          if (!isBlank(chunk.subarray(pos + bom, nl))) batch.add(pos + bom, nl, lineStart + bom, lineNo);
        } else {
          const line = carryBytes === 0 ? chunk.subarray(pos, nl) : Buffer.concat([...carry, chunk.subarray(pos, nl)]);
          const doc = emit(line, lineStart, lineNo);
          if (doc) yield doc;
        }
        lineStart += length + 1;
        lineNo++;
        carry = [];
        carryBytes = 0;
        pos = nl + 1;
      }
      if (batch && batch.count > 0) yield* this.jsonLines(chunk, batch, s);
      if (pos < chunk.length) {
        carryBytes += chunk.length - pos;
        if (carryBytes > MAX_DOCUMENT_BYTES) return tooLong();
        carry.push(chunk.subarray(pos));
      }
    }
    if (carryBytes > 0) {
      const doc = emit(carry.length === 1 ? carry[0]! : Buffer.concat(carry), lineStart, lineNo);
      if (doc) yield doc;
    }
  }

  /** Column numbers of the text and id in each CSV or TSV source, from its header row. */
  private readonly columns: Array<{ text: number; id: number; count: number }> = [];

  /**
   * CSV or TSV rows, one document each after the header row: a row ends at a newline outside quotes (CSV), and its
   * bytes run to that newline (a carriage return before it stays in the row, as in --lines). A quoted field may hold
   * the delimiter, doubled quotes and newlines (RFC 4180); TSV has no quoting.
   */
  private async *readRows(s: number): AsyncGenerator<StreamDocument> {
    const csv = this.o.delimiter === ',';
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let rowStart = 0;
    let lineNo = 1;
    let rowLine = 1;
    let inQuotes = false;
    let header = true;
    const emit = (row: Buffer, start: number): StreamDocument | undefined | typeof SKIP_SOURCE => {
      let offset = start;
      if (start === 0 && startsWithBom(row)) {
        row = row.subarray(3);
        offset += 3;
        this.boms[s] = true;
      }
      if (header) {
        header = false;
        return this.takeHeader(s, row) ? undefined : SKIP_SOURCE;
      }
      if (isBlank(row)) return undefined;
      const text = this.rowText(row, s, rowLine);
      if (typeof text === 'number') this.pass(s, offset, row.length, rowLine, text);
      if (typeof text !== 'string') return undefined;
      return { text: this.asText(text), source: s, offset, length: row.length };
    };
    for await (const chunk of this.chunks(s, { binary: false })) {
      let pos = 0;
      for (let at = 0; at < chunk.length; at++) {
        const c = chunk[at]!;
        if (c === 0x22 && csv) inQuotes = !inQuotes;
        else if (c === 10) {
          lineNo++;
          if (inQuotes) continue;
          const length = carryBytes + at - pos;
          if (length > MAX_DOCUMENT_BYTES) return this.rowTooLong(s, rowLine);
          const row = carryBytes === 0 ? chunk.subarray(pos, at) : Buffer.concat([...carry, chunk.subarray(pos, at)]);
          const doc = emit(row, rowStart);
          if (doc === SKIP_SOURCE) return; // no usable header: the source is skipped
          if (doc) yield doc;
          rowStart += length + 1;
          rowLine = lineNo;
          carry = [];
          carryBytes = 0;
          pos = at + 1;
        }
      }
      if (pos < chunk.length) {
        carryBytes += chunk.length - pos;
        if (carryBytes > MAX_DOCUMENT_BYTES) return this.rowTooLong(s, rowLine);
        carry.push(chunk.subarray(pos));
      }
    }
    if (carryBytes > 0) {
      if (inQuotes) {
        this.report.bad(
          `${this.shown(s)}:${rowLine}: a quoted field is not closed before the end of the input`,
          'invalid rows',
        );
        return;
      }
      const doc = emit(carry.length === 1 ? carry[0]! : Buffer.concat(carry), rowStart);
      if (doc && doc !== SKIP_SOURCE) yield doc;
    }
  }

  /** A Parquet table's rows, a row group at a time, only the text and id columns; FILE:ROW names rows without an id. */
  private async *readTable(s: number): AsyncGenerator<StreamDocument> {
    const t = await openParquet(this.sources[s]!.name);
    this.tables[s] = t;
    if (!t.columns.includes(this.o.field)) {
      this.report.bad(
        `${this.shown(s)}: no column ${JSON.stringify(this.o.field)} in the table (${t.columns.map((c) => JSON.stringify(c)).join(', ')}): not read (--field names the text column)`,
        'inputs without the text column',
      );
      return;
    }
    if (!this.idColumnFound(s, t.columns.includes(this.o.idField), t.columns, 'the table')) return;
    const columns = t.columns.includes(this.o.idField) ? [this.o.field, this.o.idField] : [this.o.field];
    let notText = 0;
    for (const group of t.rowGroups) {
      const rows = await readRows(t, columns, group.start, group.end);
      for (let r = 0; r < rows.length; r++) {
        const [text, id] = rows[r]!;
        const row = group.start + r;
        if (typeof text !== 'string') {
          notText++;
          this.pass(s, row, 0, row + 1);
          continue;
        }
        if (this.tooLargeToVerify(text, s, row + 1)) {
          this.pass(s, row, 0, row + 1);
          continue;
        }
        const i = this.add(s, row + 1);
        if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) || typeof id === 'bigint')
          this.noteId(i, typeof id === 'bigint' ? id.toString() : JSON.stringify(id), s, row + 1);
        this.bytesRead += text.length;
        yield { text: this.asText(text), source: s, offset: row, length: text.length };
      }
      this.progress.update('reading', this.bytesRead, Math.max(this.knownBytes, this.bytesRead), 'bytes');
    }
    if (notText > 0)
      this.report.warn(
        `${this.shown(s)}: ${notText} rows without a string in column ${JSON.stringify(this.o.field)} skipped`,
        'tables with rows without a text',
      );
  }

  /** A parsed text as dedup is to measure it (byteTexts). */
  private asText(text: string): string | Uint8Array {
    return this.o.byteTexts ? Buffer.from(text, 'utf8') : text;
  }

  private rowTooLong(s: number, line: number): void {
    this.report.bad(
      `${this.shown(s)}:${line}: a row longer than the ${LIMIT_TEXT} limit of one document (the rest of the input is not read)`,
      'over the size limit',
    );
  }

  /**
   * Whether the id column is there or need not be: a column named by --id-field is known from the header before any
   * row, so its absence is reported (the source not read) rather than every row quietly named FILE:LINE.
   */
  private idColumnFound(s: number, found: boolean, names: string[], where: string): boolean {
    if (found || !this.o.idFieldNamed) return true;
    this.report.bad(
      `${this.shown(s)}: no column ${JSON.stringify(this.o.idField)} in ${where} (${names.map((n) => JSON.stringify(n)).join(', ')}): not read (--id-field names the id column)`,
      'inputs without the id column',
    );
    return false;
  }

  /** Notes a source's header row; false (reported) when it lacks the text column. */
  private takeHeader(s: number, row: Buffer): boolean {
    const names = splitRow(row, this.o.delimiter!);
    const text = names.indexOf(this.o.field);
    if (text < 0) {
      this.report.bad(
        `${this.shown(s)}: no column ${JSON.stringify(this.o.field)} in its header row (${names.map((n) => JSON.stringify(n)).join(', ')}): not read (--field names the text column)`,
        'inputs without the text column',
      );
      return false;
    }
    const id = names.indexOf(this.o.idField);
    if (!this.idColumnFound(s, id >= 0, names, 'its header row')) return false;
    this.columns[s] = { text, id, count: names.length };
    this.headers[s] = Buffer.from(row);
    return true;
  }

  /**
   * A row's text (its id noted when `line` is given: the first reading). A row shorter than its header is read as
   * if padded with empty fields (as spreadsheet programs and pandas read one), so its annotation columns still land
   * under their names: one too short to reach the text column holds no text (the number of fields it lacks is
   * returned). A row longer than its header has cells no column names, so it is a bad row (undefined, reported):
   * its annotations would sit under the wrong names.
   */
  private rowText(row: Buffer, s: number, line?: number): string | number | undefined {
    const fields = splitRow(row, this.o.delimiter!);
    const { text, id, count } = this.columns[s]!;
    if (fields.length > count) {
      if (line !== undefined)
        this.report.bad(
          `${this.shown(s)}:${line}: ${fields.length} fields, more than the ${count} columns of its header row`,
          'invalid rows',
        );
      return undefined;
    }
    if (text >= fields.length) {
      if (line !== undefined)
        this.report.bad(
          `${this.shown(s)}:${line}: ${fields.length} fields, no column ${JSON.stringify(this.o.field)}`,
          'rows without the text column',
        );
      return count - fields.length;
    }
    if (line === undefined) return fields[text]!;
    // Passed through like a row without a text (padded as a short row with its text would be).
    if (this.tooLargeToVerify(fields[text]!, s, line)) return count - fields.length;
    const i = this.add(s, line);
    if (fields.length < count) this.short.set(i, count - fields.length);
    if (id >= 0 && id < fields.length) this.noteId(i, JSON.stringify(fields[id]!), s, line);
    return fields[text]!;
  }

  /**
   * The batch's lines of `chunk` as documents, in order: each read in WebAssembly (readJsonFields, the text then in
   * place of its line) where that settles it, else by parseLine. Leaves the batch empty.
   */
  private *jsonLines(chunk: Buffer, batch: JsonLineBatch, s: number): Generator<StreamDocument> {
    const { field, idField } = this.o;
    // Fields named by a dotted path (fieldAt), or one field for both, are left to JSON.parse.
    const read =
      field.includes('.') || idField.includes('.') || idField === field
        ? null
        : readJsonFields(chunk, batch.bounds.data, batch.count, field, idField, linesAreUtf8(chunk, batch));
    for (let q = 0; q < batch.count; q++) {
      const start = batch.bounds.data[2 * q]!;
      const end = batch.bounds.data[2 * q + 1]!;
      const offset = batch.offsets.data[q]!;
      const no = batch.numbers.data[q]!;
      const text = read?.texts[q];
      if (read && text) {
        if (this.tooLargeToVerify(text, s, no)) {
          this.pass(s, offset, end - start, no);
          continue;
        }
        const i = this.add(s, no);
        const token = read.idTokens[q];
        // A JSON string without escapes is its own JSON.stringify. A number keeps its own characters: JSON.parse
        // would round one past 2^53 onto another id (one past a double's range is no id, as in noteJsonId).
        if (token !== undefined) {
          const number = isNumberToken(token);
          if (read.idKinds[q] === ID_PLAIN || (number && Number.isFinite(Number(token)))) this.noteId(i, token, s, no);
          else if (!number) this.noteJsonId(i, JSON.parse(token), s, no);
        }
        yield { text, source: s, offset, length: end - start };
        continue;
      }
      const parsed = this.parseLine(chunk.subarray(start, end), s, no);
      if (parsed === NO_TEXT) this.pass(s, offset, end - start, no);
      else if (parsed !== undefined) yield { text: this.asText(parsed), source: s, offset, length: end - start };
    }
    batch.count = 0;
  }

  /**
   * A JSON line's text, its id noted; NO_TEXT (reported) for an object without a string text, undefined (reported)
   * when the line is no JSON object.
   */
  private parseLine(line: Buffer, s: number, no: number): string | undefined | typeof NO_TEXT {
    const where = (): string => `${this.shown(s)}:${no}`;
    let value: unknown;
    const source = line.toString('utf8');
    try {
      value = JSON.parse(source);
    } catch (error) {
      this.report.bad(`${where()}: invalid JSON (${(error as Error).message})`, 'invalid JSON lines');
      return undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.report.bad(`${where()}: not a JSON object`, 'invalid JSON lines');
      return undefined;
    }
    const record = value as Record<string, unknown>;
    const text = fieldAt(record, this.o.field);
    if (typeof text !== 'string') {
      this.report.bad(
        `${where()}: field ${JSON.stringify(this.o.field)} is ${text === undefined ? `missing${fieldsOf(record)}` : text === null ? 'null' : 'not a string'}`,
        'records without the text field',
      );
      return NO_TEXT;
    }
    if (this.tooLargeToVerify(text, s, no)) return NO_TEXT; // passed through as well
    const i = this.add(s, no);
    const id = fieldAt(record, this.o.idField);
    // A number is named by its characters in the line, not by the double JSON.parse made of it.
    const raw = Number.isFinite(id) ? valueTextAt(source, fieldPath(record, this.o.idField)) : undefined;
    if (raw !== undefined) this.noteId(i, raw, s, no);
    else this.noteJsonId(i, id, s, no);
    return text;
  }

  /** A record's id value: a string or a finite number is noted (by its JSON text), anything else is no id. */
  private noteJsonId(i: number, id: unknown, s: number, line: number): void {
    if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))
      this.noteId(i, JSON.stringify(id), s, line);
  }

  /** Document i's id (its JSON text), from line `line` of source s (named only when it repeats an id). */
  private noteId(i: number, json: string, s: number, line: number): void {
    this.ids[i] = json;
    const first = this.firstWithId.get(json);
    if (first === undefined) this.firstWithId.set(json, i);
    else if (++this.repeats <= REPEATS_SHOWN)
      this.report.warn(
        `${this.shown(s)}:${line}: id ${json} repeats the id of ${escapeName(this.plainName(first))}`,
        'repeated ids',
      );
    else this.report.count('repeated ids');
  }
}
