// The deduplicated corpus (dedup --output, --removed, --annotate): each document's record read again from its
// source (or the spool that holds a stream) and copied byte for byte, in input order. A JSON Lines or --lines
// record is its line (a carriage return before the newline stays; each record ends with "\n"); annotated JSON Lines
// records get `"cluster"` (the name of the cluster's first document, as dedup prints clusters) and
// `"duplicate_of"` (the name of the document kept in its place, or null) inserted before their closing brace, and
// nothing else of the line changes. Whole files as documents are listed by path, one per line or NUL-terminated.
import fs from 'node:fs';
import type { AtomicFile } from './atomic-file.js';
import type { Corpus } from './inputs.js';
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
export async function writeCorpus(
  corpus: Corpus,
  r: DeduplicatedDocuments,
  t: CorpusTargets,
): Promise<{ kept: number; removed: number }> {
  const kept = keptCount(r.duplicateOf);
  if (corpus.wholeFiles) {
    writePaths(corpus, r, t);
    return { kept, removed: r.count - kept };
  }
  const delimiter = corpus.delimiter;
  if (delimiter !== null) writeHeaders(corpus, r, t, delimiter);
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
    const plan = windows(r, t);
    let w = plan.next();
    reading = w.done ? null : readInto(w.value, 0);
    for (let k = 0; !w.done; k ^= 1) {
      const window = w.value;
      const got = await reading!;
      w = plan.next();
      reading = w.done ? null : readInto(w.value, k ^ 1);
      const pieces = gather(corpus, r, t, window, got);
      // Copied into the targets' buffers (their writes go on meanwhile), so this window's buffer is free again.
      if (pieces.output.length > 0) await t.output!.append(pieces.output);
      if (pieces.removed.length > 0) await t.removed!.append(pieces.removed);
    }
  } finally {
    // A read under way still uses the source's descriptor.
    await reading?.catch(() => {});
    reader.close();
  }
  return { kept, removed: r.count - kept };
}

/** The documents first..last (those of them a target wants) and the bytes of `source` that hold their records. */
interface Window {
  source: number;
  start: number;
  end: number;
  first: number;
  last: number;
}

/** Whether document `i` goes to a target. */
function wants(r: DeduplicatedDocuments, t: CorpusTargets, i: number): boolean {
  const kept = r.duplicateOf[i] === -1;
  return (t.output !== null && (t.annotate || kept)) || (t.removed !== null && !kept);
}

/**
 * The reads that take the wanted records in order: a window starts at a record and takes in the records that follow
 * within READ_BYTES (a larger record: a window of its own); a record far from the last window's end is read alone (a
 * few removed documents cost a read each, not a pass). A window ends with its last record, so each byte is read once.
 */
function* windows(r: DeduplicatedDocuments, t: CorpusTargets): Generator<Window> {
  const { source, offset, length } = r.locators;
  let w: Window | null = null;
  let limit = 0;
  for (let i = 0; i < r.count; i++) {
    if (!wants(r, t, i)) continue;
    const s = source[i]!;
    const at = offset[i]!;
    const end = at + length[i]!;
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
  r: DeduplicatedDocuments,
  t: CorpusTargets,
  w: Window,
  got: Buffer,
): { output: Uint8Array[]; removed: Uint8Array[] } {
  const output = new Pieces();
  const removed = new Pieces();
  const { offset, length } = r.locators;
  const jsonl = corpus.jsonl;
  const delimiter = corpus.delimiter;
  let span = -1;
  let spanEnd = 0;
  const flushSpan = (): void => {
    if (span < 0) return;
    output.write(got.subarray(span, spanEnd));
    output.write(NEWLINE);
    span = -1;
  };
  for (let i = w.first; i < w.last; i++) {
    if (!wants(r, t, i)) continue;
    const at = offset[i]! - w.start;
    const end = at + length[i]!;
    if (end > got.length)
      throw new InputError(`${corpus.sourceName(w.source)}: changed while it was read (now shorter)`);
    const isKept = r.duplicateOf[i] === -1;
    if (t.output && !t.annotate && isKept) {
      // Kept records one newline apart go out as one piece, newlines and all.
      if (span >= 0 && spanEnd + 1 === at) spanEnd = end;
      else {
        flushSpan();
        span = at;
        spanEnd = end;
      }
      continue;
    }
    flushSpan();
    const record = got.subarray(at, end);
    if (t.output && t.annotate) annotate(output, corpus, r, i, record);
    if (t.removed && !isKept) {
      if (jsonl || delimiter !== null) annotate(removed, corpus, r, i, record);
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

/** Annotates a JSON Lines record or a CSV / TSV row. */
function annotate(to: Sink, corpus: Corpus, r: DeduplicatedDocuments, i: number, record: Buffer): void {
  if (corpus.delimiter === null) writeAnnotated(to, corpus, r, i, record);
  else writeAnnotatedRow(to, corpus, r, i, record, corpus.delimiter);
}

const ADDED_COLUMNS = ['cluster', 'duplicate_of'];

/**
 * The header row of the CSV or TSV sources (all the same, or the run fails), first in each target; with the two
 * added columns where rows are annotated.
 */
function writeHeaders(corpus: Corpus, r: DeduplicatedDocuments, t: CorpusTargets, delimiter: ',' | '\t'): void {
  let header: Buffer | undefined;
  const bare = (h: Buffer) => (h[h.length - 1] === 13 ? h.subarray(0, h.length - 1) : h);
  for (const s of new Set(r.locators.source)) {
    const h = corpus.headerOf(s)!;
    if (header === undefined) header = h;
    else if (!bare(header).equals(bare(h)))
      throw new InputError(
        `${corpus.sourceName(s)}: its header row differs from the first input's: one output cannot hold both`,
      );
  }
  if (header === undefined) return;
  // The first input's header row as it was (a carriage return stays at its end).
  const b = bare(header);
  const added = Buffer.from(ADDED_COLUMNS.map((c) => delimiter + c).join(''));
  const annotated = Buffer.concat([b, added, header.subarray(b.length), NEWLINE]);
  if (t.output) t.output.write(t.annotate ? annotated : Buffer.concat([header, NEWLINE]));
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

/** A CSV or TSV row with the cluster and the kept document appended as two cells (before a closing "\r"). */
function writeAnnotatedRow(
  to: Sink,
  corpus: Corpus,
  r: DeduplicatedDocuments,
  i: number,
  row: Buffer,
  delimiter: ',' | '\t',
): void {
  const end = row.length > 0 && row[row.length - 1] === 13 ? row.length - 1 : row.length;
  const dup = r.duplicateOf[i]!;
  to.write(row.subarray(0, end));
  to.writeString(
    delimiter +
      cell(namesOf(corpus, r).value(r.clusterOf[i]!), delimiter) +
      delimiter +
      (dup === -1 ? '' : cell(namesOf(corpus, r).value(dup), delimiter)),
  );
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

/** A JSON Lines record with "cluster" and "duplicate_of" inserted before its closing brace. */
function writeAnnotated(to: Sink, corpus: Corpus, r: DeduplicatedDocuments, i: number, record: Buffer): void {
  let close = record.length - 1;
  while (close >= 0 && record[close] !== 0x7d) close--; // the object's "}" (white space may follow it)
  if (close < 0) throw new InputError(`${corpus.nameText(i)}: changed since it was read (no closing brace)`);
  if (record.includes(CLUSTER) || record.includes(DUPLICATE_OF)) {
    const value = JSON.parse(record.toString('utf8')) as Record<string, unknown>;
    for (const key of ['cluster', 'duplicate_of'])
      if (Object.hasOwn(value, key))
        throw new InputError(
          `${corpus.nameText(i)}: the record has a field "${key}" already; annotating would repeat it`,
        );
  }
  const dup = r.duplicateOf[i]!;
  to.write(record.subarray(0, close));
  to.writeString(
    `,"cluster":${namesOf(corpus, r).json(r.clusterOf[i]!)},"duplicate_of":${dup === -1 ? 'null' : namesOf(corpus, r).json(dup)}`,
  );
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
): Promise<{ kept: number; removed: number }> {
  const kept = keptCount(r.duplicateOf);
  const used = [...new Set(r.locators.source)];
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
  const output = t.output ? await parquetWriter(t.output, t.annotate ? withAnnotations(schema) : schema) : null;
  const removed = t.removed ? await parquetWriter(t.removed, withAnnotations(schema)) : null;
  const { source, offset } = r.locators;
  let i = 0;
  for (const s of used) {
    const table = corpus.tableOf(s);
    for (const group of table.rowGroups) {
      // The documents of this row group (rows without a text are not documents, and are left out).
      const first = i;
      while (i < r.count && source[i] === s && offset[i]! < group.end) i++;
      if (i === first) continue;
      const rows = await readRows(table, table.columns, group.start, group.end);
      const out: unknown[][] = [];
      const gone: unknown[][] = [];
      for (let d = first; d < i; d++) {
        const row = rows[offset[d]! - group.start]!;
        const dup = r.duplicateOf[d]!;
        const names = namesOf(corpus, r);
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
  return { kept, removed: r.count - kept };
}
