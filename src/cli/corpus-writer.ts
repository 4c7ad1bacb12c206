// The deduplicated corpus (dedup --output, --removed, --annotate): each document's record read again from its
// source (or the spool that holds a stream) and copied byte for byte, in input order. A JSON Lines or --lines
// record is its line (a carriage return before the newline stays; each record ends with "\n"); annotated JSON Lines
// records get `"cluster"` (the name of the cluster's first document, as dedup prints clusters) and
// `"duplicate_of"` (the name of the document kept in its place, or null) inserted before their closing brace, and
// nothing else of the line changes. Whole files as documents are listed by path, one per line or NUL-terminated.
import fs from 'node:fs';
import type { AtomicFile } from './atomic-file.js';
import { type Corpus, type PassedRecords, splitRow } from './inputs.js';
import { escapeName } from './output.js';
import { InputError } from './report.js';
import { isFlat, parquetWriter, readRows, withAnnotations } from './parquet.js';

/**
 * Bytes read at a time from a source when its records are taken in order: two such windows are held, one read while
 * the other is written.
 */
const READ_BYTES = 8 << 20;

export interface CorpusTargets {
  /** The kept documents (or, with `annotate`, every document annotated). */
  output: AtomicFile | null;
  /** The dropped documents, annotated (JSON Lines), as they are (--lines), or their paths (files). */
  removed: AtomicFile | null;
  annotate: boolean;
  /** Paths end with NUL rather than a newline (-0). */
  nul: boolean;
}

export interface DeduplicatedDocuments {
  count: number;
  /** Each document's cluster and the document kept in its place (-1: kept), as indices that `names` can name. */
  clusterOf: Uint32Array;
  duplicateOf: Int32Array;
  /**
   * Names of the documents clusterOf and duplicateOf refer to: as JSON values, and as plain text (CSV cells,
   * Parquet strings); default: the corpus's documents (an incremental run names earlier runs' documents too).
   */
  names?: { json(i: number): string; value(i: number): string };
  locators: { source: Uint32Array; offset: Float64Array; length: Float64Array };
}

/** Where records and annotations are written in order: a target as it goes, or the pieces of one write. */
interface Sink {
  write(bytes: Uint8Array): void;
  writeString(text: string): void;
}

/**
 * What a write did: documents kept and removed, and records passed through to --output undeduplicated: without a
 * text, or (tooLarge of them) with one too large to verify.
 */
export interface WriteCounts {
  kept: number;
  removed: number;
  passed: number;
  tooLarge: number;
}

/**
 * The records in input order: the documents and, among them, the records without a text (PassedRecords), which are
 * no document's duplicate and so are written where a kept document would be. Record k is document doc(k), or
 * passed record -1 - doc(k).
 */
class Records {
  readonly n: number;
  private readonly order: Int32Array | null;

  constructor(
    private readonly r: DeduplicatedDocuments,
    readonly passed: PassedRecords,
  ) {
    this.n = r.count + passed.count;
    if (passed.count === 0) {
      this.order = null;
      return;
    }
    this.order = new Int32Array(this.n);
    let k = 0;
    let p = 0;
    for (let i = 0; i <= r.count; i++) {
      while (p < passed.count && passed.before[p]! <= i) this.order[k++] = -1 - p++;
      if (i < r.count) this.order[k++] = i;
    }
  }

  doc(k: number): number {
    return this.order === null ? k : this.order[k]!;
  }

  source(k: number): number {
    const d = this.doc(k);
    return d >= 0 ? this.r.locators.source[d]! : this.passed.source[-1 - d]!;
  }

  offset(k: number): number {
    const d = this.doc(k);
    return d >= 0 ? this.r.locators.offset[d]! : this.passed.offset[-1 - d]!;
  }

  length(k: number): number {
    const d = this.doc(k);
    return d >= 0 ? this.r.locators.length[d]! : this.passed.length[-1 - d]!;
  }
}

/** The sources the records come from, in order. */
function sourcesOf(records: Records): number[] {
  const used = new Set<number>();
  for (let k = 0; k < records.n; k++) used.add(records.source(k));
  return [...used].sort((a, b) => a - b);
}

/** How many documents are kept (duplicateOf -1). */
export function keptCount(duplicateOf: Int32Array): number {
  let kept = 0;
  for (const x of duplicateOf) if (x === -1) kept++;
  return kept;
}

/**
 * Writes the targets; returns how many documents were kept and removed. The records are read again a window at a
 * time, on the thread pool: the next window is read while this one is copied into the targets' buffers and their
 * last full buffer is written, so the pass costs about its slowest part rather than the sum of the three.
 */
export async function writeCorpus(corpus: Corpus, r: DeduplicatedDocuments, t: CorpusTargets): Promise<WriteCounts> {
  const kept = keptCount(r.duplicateOf);
  if (corpus.wholeFiles) {
    writePaths(corpus, r, t);
    return { kept, removed: r.count - kept, passed: 0, tooLarge: 0 };
  }
  const records = new Records(r, corpus.passedRecords());
  const delimiter = corpus.delimiter;
  // A byte order mark goes out with the record or header row it began, and only at the start of a target: inside
  // one it would be a stray character in the middle of a line.
  const fresh = { output: true, removed: true };
  if (delimiter !== null) {
    writeHeaders(corpus, records, t, delimiter);
    fresh.output = fresh.removed = false;
  }
  const reader = new SourceReader(corpus);
  const buffers = [Buffer.alloc(0), Buffer.alloc(0)];
  // The next window's read, on the thread pool while this one is copied out.
  let reading: Promise<Buffer> | null = null;
  const readInto = (w: Window, k: number): Promise<Buffer> => {
    if (buffers[k]!.length < w.end - w.start) buffers[k] = Buffer.allocUnsafe(Math.max(READ_BYTES, w.end - w.start));
    const p = reader.read(w, buffers[k]!);
    // Its error is thrown where it is awaited; should a write fail first, it is not an unhandled rejection.
    p.catch(() => {});
    return p;
  };
  try {
    const plan = windows(records, r, t);
    let w = plan.next();
    reading = w.done ? null : readInto(w.value, 0);
    for (let k = 0; !w.done; k ^= 1) {
      const window = w.value;
      const got = await reading!;
      w = plan.next();
      reading = w.done ? null : readInto(w.value, k ^ 1);
      const pieces = gather(corpus, records, r, t, window, got, fresh);
      // Copied into the targets' buffers (their writes go on meanwhile), so this window's buffer is free again.
      if (pieces.output.length > 0) await t.output!.append(pieces.output);
      if (pieces.removed.length > 0) await t.removed!.append(pieces.removed);
    }
  } finally {
    // A read under way still uses the source's descriptor.
    await reading?.catch(() => {});
    reader.close();
  }
  const passed = t.output ? records.passed.count : 0;
  return { kept, removed: r.count - kept, passed, tooLarge: passed > 0 ? records.passed.tooLarge : 0 };
}

/** The records first..last (those of them a target wants) and the bytes of `source` that hold their records. */
interface Window {
  source: number;
  start: number;
  end: number;
  first: number;
  last: number;
}

/** Whether document `i` (a passed record when negative) goes to a target. */
function wants(r: DeduplicatedDocuments, t: CorpusTargets, i: number): boolean {
  if (i < 0) return t.output !== null;
  const kept = r.duplicateOf[i] === -1;
  return (t.output !== null && (t.annotate || kept)) || (t.removed !== null && !kept);
}

/**
 * The reads that take the wanted records in order: a window starts at a record and takes in the records that follow
 * within READ_BYTES (a larger record: a window of its own); a record far from the last window's end is read alone (a
 * few removed documents cost a read each, not a pass). A window ends with its last record, so each byte is read once.
 */
function* windows(records: Records, r: DeduplicatedDocuments, t: CorpusTargets): Generator<Window> {
  let w: Window | null = null;
  let limit = 0;
  for (let i = 0; i < records.n; i++) {
    if (!wants(r, t, records.doc(i))) continue;
    const s = records.source(i);
    const at = records.offset(i);
    const end = at + records.length(i);
    if (w !== null && w.source === s && at >= w.start && end <= limit) {
      w.end = Math.max(w.end, end);
      w.last = i + 1;
      continue;
    }
    const ahead = w === null || w.source !== s || (at >= w.end && at < w.end + READ_BYTES);
    if (w !== null) yield w;
    w = { source: s, start: at, end, first: i, last: i + 1 };
    limit = ahead ? Math.max(end, at + READ_BYTES) : end;
  }
  if (w !== null) yield w;
}

/** What a window's records add to each target, as pieces of the window (kept records that follow each other: one). */
function gather(
  corpus: Corpus,
  records: Records,
  r: DeduplicatedDocuments,
  t: CorpusTargets,
  w: Window,
  got: Buffer,
  fresh: { output: boolean; removed: boolean },
): { output: Uint8Array[]; removed: Uint8Array[] } {
  const output = new Pieces();
  const removed = new Pieces();
  const jsonl = corpus.jsonl;
  const delimiter = corpus.delimiter;
  // Only a source's first record starts 3 bytes in, just past its byte order mark.
  const bom = (at: number, to: Pieces, which: 'output' | 'removed'): void => {
    if (fresh[which] && at + w.start === 3 && corpus.bomOf(w.source)) to.write(BOM);
    fresh[which] = false;
  };
  let span = -1;
  let spanEnd = 0;
  const flushSpan = (): void => {
    if (span < 0) return;
    output.write(got.subarray(span, spanEnd));
    output.write(NEWLINE);
    span = -1;
  };
  for (let k = w.first; k < w.last; k++) {
    const i = records.doc(k);
    if (!wants(r, t, i)) continue;
    const at = records.offset(k) - w.start;
    const end = at + records.length(k);
    if (end > got.length)
      throw new InputError(`${corpus.sourceName(w.source)}: changed while it was read (now shorter)`);
    const isKept = i < 0 || r.duplicateOf[i] === -1;
    if (t.output && !t.annotate && isKept) {
      // Kept records one newline apart go out as one piece, newlines and all.
      if (span >= 0 && spanEnd + 1 === at) spanEnd = end;
      else {
        flushSpan();
        bom(at, output, 'output');
        span = at;
        spanEnd = end;
      }
      continue;
    }
    flushSpan();
    const record = got.subarray(at, end);
    if (t.output && t.annotate) {
      bom(at, output, 'output');
      annotate(output, corpus, records, r, k, record);
    }
    if (t.removed && !isKept) {
      bom(at, removed, 'removed');
      if (jsonl || delimiter !== null) annotate(removed, corpus, records, r, k, record);
      else {
        removed.write(record);
        removed.write(NEWLINE);
      }
    }
  }
  flushSpan();
  return { output: output.list, removed: removed.list };
}

/** What a window adds to a target, in order: pieces of the window, and the bytes between them. */
class Pieces implements Sink {
  readonly list: Uint8Array[] = [];

  write(bytes: Uint8Array): void {
    this.list.push(bytes);
  }

  writeString(text: string): void {
    this.list.push(Buffer.from(text, 'utf8'));
  }
}

/**
 * Annotates record k, a JSON Lines record or a CSV / TSV row: a document with its cluster and the document kept in
 * its place, a record without a text with nulls (empty cells).
 */
function annotate(
  to: Sink,
  corpus: Corpus,
  records: Records,
  r: DeduplicatedDocuments,
  k: number,
  record: Buffer,
): void {
  const i = records.doc(k);
  const names = namesOf(corpus, r);
  const dup = i < 0 ? -1 : r.duplicateOf[i]!;
  const passed = records.passed;
  const where = () =>
    i < 0 ? `${corpus.sourceName(passed.source[-1 - i]!)}:${passed.line[-1 - i]}` : corpus.nameText(i);
  if (corpus.delimiter === null) {
    const cluster = i < 0 ? 'null' : names.json(r.clusterOf[i]!);
    writeAnnotated(to, where, record, cluster, dup === -1 ? 'null' : names.json(dup));
  } else {
    const d = corpus.delimiter;
    const cluster = i < 0 ? '' : cell(names.value(r.clusterOf[i]!), d);
    const missing = i < 0 ? passed.missing[-1 - i]! : corpus.missingFields(i);
    writeAnnotatedRow(to, record, d, missing, cluster, dup === -1 ? '' : cell(names.value(dup), d));
  }
}

const ADDED_COLUMNS = ['cluster', 'duplicate_of'];
const BOM = Uint8Array.of(0xef, 0xbb, 0xbf);

/** Refuses to add a column the input has already: a reader would find two of that name (JSON Lines refuses too). */
function checkNoAddedColumn(source: string, columns: readonly string[], where: string): void {
  for (const name of ADDED_COLUMNS)
    if (columns.includes(name))
      throw new InputError(`${source}: ${where} has a column "${name}" already; annotating would repeat it`);
}

/**
 * The header row of the CSV or TSV sources (all the same, or the run fails), first in each target; with the two
 * added columns where rows are annotated.
 */
function writeHeaders(corpus: Corpus, records: Records, t: CorpusTargets, delimiter: ',' | '\t'): void {
  let header: Buffer | undefined;
  let first = -1;
  const bare = (h: Buffer) => (h[h.length - 1] === 13 ? h.subarray(0, h.length - 1) : h);
  for (const s of sourcesOf(records)) {
    const h = corpus.headerOf(s)!;
    if (header === undefined) {
      header = h;
      first = s;
    } else if (!bare(header).equals(bare(h)))
      throw new InputError(
        `${corpus.sourceName(s)}: its header row differs from the first input's: one output cannot hold both`,
      );
  }
  if (header === undefined) return;
  if (t.annotate || t.removed)
    checkNoAddedColumn(corpus.sourceName(first), splitRow(header, delimiter), 'its header row');
  // The first input's header row as it was (its byte order mark and a carriage return at its end stay).
  const b = bare(header);
  const bom = corpus.bomOf(first) ? BOM : new Uint8Array(0);
  const added = Buffer.from(ADDED_COLUMNS.map((c) => delimiter + c).join(''));
  const annotated = Buffer.concat([bom, b, added, header.subarray(b.length), NEWLINE]);
  if (t.output) t.output.write(t.annotate ? annotated : Buffer.concat([bom, header, NEWLINE]));
  if (t.removed) t.removed.write(annotated);
}

/** A CSV or TSV cell holding `value`: quoted where CSV needs it (RFC 4180); TSV cannot hold tabs or newlines. */
function cell(value: string, delimiter: ',' | '\t'): string {
  if (delimiter === '\t') {
    if (/[\t\r\n]/.test(value))
      throw new InputError(`${JSON.stringify(value)}: a TSV cell cannot hold a tab or a newline`);
    return value;
  }
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * A CSV or TSV row with two cells appended (before a closing "\r"): first `missing` empty ones for the fields a
 * short row lacks, so the two land under their names in the header.
 */
function writeAnnotatedRow(
  to: Sink,
  row: Buffer,
  delimiter: ',' | '\t',
  missing: number,
  cluster: string,
  duplicateOf: string,
): void {
  const end = row.length > 0 && row[row.length - 1] === 13 ? row.length - 1 : row.length;
  to.write(row.subarray(0, end));
  to.writeString(delimiter.repeat(missing) + delimiter + cluster + delimiter + duplicateOf);
  to.write(row.subarray(end));
  to.write(NEWLINE);
}

function writePaths(corpus: Corpus, r: DeduplicatedDocuments, t: CorpusTargets): void {
  const end = t.nul ? '\0' : '\n';
  for (let i = 0; i < r.count; i++) {
    const isKept = r.duplicateOf[i] === -1;
    const target = isKept ? t.output : t.removed;
    if (!target) continue;
    const name = corpus.pathOf(i);
    if (!t.nul && name.includes('\n'))
      throw new InputError(`${escapeName(name)}: a path with a newline cannot be listed one per line: use -0`);
    target.writeString(name + end);
  }
}

const NEWLINE = Uint8Array.of(10);

function namesOf(corpus: Corpus, r: DeduplicatedDocuments): { json(i: number): string; value(i: number): string } {
  return r.names ?? { json: (i) => corpus.nameJson(i), value: (i) => corpus.nameValue(i) };
}
const CLUSTER = Buffer.from('"cluster"');
const DUPLICATE_OF = Buffer.from('"duplicate_of"');

/** A JSON Lines record with "cluster" and "duplicate_of" (JSON values) inserted before its closing brace. */
function writeAnnotated(to: Sink, where: () => string, record: Buffer, cluster: string, duplicateOf: string): void {
  let close = record.length - 1;
  while (close >= 0 && record[close] !== 0x7d) close--; // the object's "}" (white space may follow it)
  if (close < 0) throw new InputError(`${where()}: changed since it was read (no closing brace)`);
  if (record.includes(CLUSTER) || record.includes(DUPLICATE_OF)) {
    const value = JSON.parse(record.toString('utf8')) as Record<string, unknown>;
    for (const key of ['cluster', 'duplicate_of'])
      if (Object.hasOwn(value, key))
        throw new InputError(`${where()}: the record has a field "${key}" already; annotating would repeat it`);
  }
  to.write(record.subarray(0, close));
  to.writeString(`,"cluster":${cluster},"duplicate_of":${duplicateOf}`);
  to.write(record.subarray(close));
  to.write(NEWLINE);
}

/** The windows' bytes, read again from the sources (or the spool that holds a stream), one source open at a time. */
class SourceReader {
  private source = -1;
  private fd = -1;
  private base = 0;

  constructor(private readonly corpus: Corpus) {}

  /** Reads window `w` into `into` (on the thread pool); resolves to the bytes read, short at the source's end. */
  async read(w: Window, into: Buffer): Promise<Buffer> {
    // The previous window's read has settled, so its source can be closed.
    if (w.source !== this.source) this.open(w.source);
    const fd = this.fd;
    const size = w.end - w.start;
    const position = this.base + w.start;
    let got = 0;
    while (got < size) {
      const n = await new Promise<number>((resolve, reject) =>
        fs.read(fd, into, got, size - got, position + got, (error, n) => (error ? reject(error) : resolve(n))),
      );
      if (n === 0) break;
      got += n;
    }
    return into.subarray(0, got);
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
    this.source = -1;
  }

  private open(source: number): void {
    this.close();
    const { file, base } = this.corpus.rereadFrom(source);
    this.fd = fs.openSync(file, 'r');
    this.source = source;
    this.base = base;
  }
}

/**
 * The deduplicated corpus of Parquet inputs: Parquet tables with the input's schema (every input must have the
 * same one, of top-level columns), a row group out for each row group in, kept rows in order; removed and
 * annotated rows get two added UTF-8 columns, cluster and duplicate_of (null for a kept row).
 */
export async function writeParquetCorpus(
  corpus: Corpus,
  r: DeduplicatedDocuments,
  t: CorpusTargets,
): Promise<WriteCounts> {
  const kept = keptCount(r.duplicateOf);
  const passed = corpus.passedRecords();
  const used = [...new Set([...r.locators.source, ...passed.source])].sort((a, b) => a - b);
  const schema = corpus.tableOf(used[0]!).metadata.schema;
  const shape = JSON.stringify(schema.slice(1));
  for (const s of used)
    if (JSON.stringify(corpus.tableOf(s).metadata.schema.slice(1)) !== shape)
      throw new InputError(
        `${corpus.sourceName(s)}: its schema differs from the first table's: one output cannot hold both`,
      );
  if (!isFlat(schema))
    throw new InputError(
      `${corpus.sourceName(used[0]!)}: nested columns cannot be written back yet (--output / --removed need a flat table)`,
    );
  if (t.annotate || t.removed)
    checkNoAddedColumn(
      corpus.sourceName(used[0]!),
      schema.slice(1).map((e) => e.name),
      'the table',
    );
  const output = t.output ? await parquetWriter(t.output, t.annotate ? withAnnotations(schema) : schema) : null;
  const removed = t.removed ? await parquetWriter(t.removed, withAnnotations(schema)) : null;
  const { source, offset } = r.locators;
  let i = 0;
  let p = 0;
  for (const s of used) {
    const table = corpus.tableOf(s);
    for (const group of table.rowGroups) {
      // The documents of this row group, and its rows without a text (no document: written as kept ones are).
      const first = i;
      const firstPassed = p;
      while (i < r.count && source[i] === s && offset[i]! < group.end) i++;
      while (p < passed.count && passed.source[p] === s && passed.offset[p]! < group.end) p++;
      if (i === first && (p === firstPassed || !output)) continue;
      const rows = await readRows(table, table.columns, group.start, group.end);
      const out: unknown[][] = [];
      const gone: unknown[][] = [];
      const names = namesOf(corpus, r);
      let q = firstPassed;
      for (let d = first; d <= i; d++) {
        // The group's rows in order: passed rows before the document that follows them.
        const at = d < i ? offset[d]! : group.end;
        for (; q < p && passed.offset[q]! < at; q++) {
          const row = rows[passed.offset[q]! - group.start]!;
          if (output) out.push(t.annotate ? [...row, null, null] : row);
        }
        if (d === i) break;
        const row = rows[offset[d]! - group.start]!;
        const dup = r.duplicateOf[d]!;
        const notes = [names.value(r.clusterOf[d]!), dup === -1 ? null : names.value(dup)];
        if (output && (dup === -1 || t.annotate)) out.push(t.annotate ? [...row, ...notes] : row);
        if (removed && dup !== -1) gone.push([...row, ...notes]);
      }
      output?.write(out);
      removed?.write(gone);
    }
  }
  output?.finish();
  removed?.finish();
  const through = output ? passed.count : 0;
  return { kept, removed: r.count - kept, passed: through, tooLarge: through > 0 ? passed.tooLarge : 0 };
}
