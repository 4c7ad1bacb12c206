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

/** Bytes read ahead from a source when its records are taken in order. */
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

/** How many documents are kept (duplicateOf -1). */
export function keptCount(duplicateOf: Int32Array): number {
  let kept = 0;
  for (const x of duplicateOf) if (x === -1) kept++;
  return kept;
}

/** Writes the targets; returns how many documents were kept and removed. */
export function writeCorpus(
  corpus: Corpus,
  r: DeduplicatedDocuments,
  t: CorpusTargets,
): { kept: number; removed: number } {
  const kept = keptCount(r.duplicateOf);
  if (corpus.wholeFiles) {
    writePaths(corpus, r, t);
    return { kept, removed: r.count - kept };
  }
  const reader = new SourceReader(corpus);
  const jsonl = corpus.jsonl;
  const delimiter = corpus.delimiter;
  if (delimiter !== null) writeHeaders(corpus, r, t, delimiter);
  const { source, offset, length } = r.locators;
  // Kept records that follow each other in their source (one newline apart) are copied as one span, straight
  // from the read-ahead window, at most READ_BYTES at a time.
  let span = { source: -1, start: 0, end: 0 };
  const flushSpan = (): void => {
    if (span.source < 0 || !t.output) return;
    t.output.write(reader.bytes(span.source, span.start, span.end - span.start));
    t.output.write(NEWLINE);
    span = { source: -1, start: 0, end: 0 };
  };
  try {
    for (let i = 0; i < r.count; i++) {
      const isKept = r.duplicateOf[i] === -1;
      if (t.output && !t.annotate && isKept) {
        const s = source[i]!;
        const at = offset[i]!;
        const end = at + length[i]!;
        if (span.source === s && span.end + 1 === at && end - span.start <= READ_BYTES) span.end = end;
        else {
          flushSpan();
          span = { source: s, start: at, end };
        }
        continue;
      }
      const wanted = (t.output && t.annotate) || (t.removed && !isKept);
      if (!wanted) continue;
      flushSpan();
      const record = reader.bytes(source[i]!, offset[i]!, length[i]!);
      if (t.output && t.annotate) annotate(t.output, corpus, r, i, record);
      if (t.removed && !isKept) {
        if (jsonl || delimiter !== null) annotate(t.removed, corpus, r, i, record);
        else {
          t.removed.write(record);
          t.removed.write(NEWLINE);
        }
      }
    }
    flushSpan();
  } finally {
    reader.close();
  }
  return { kept, removed: r.count - kept };
}

/** Annotates a JSON Lines record or a CSV / TSV row. */
function annotate(to: AtomicFile, corpus: Corpus, r: DeduplicatedDocuments, i: number, record: Buffer): void {
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
  to: AtomicFile,
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
function writeAnnotated(to: AtomicFile, corpus: Corpus, r: DeduplicatedDocuments, i: number, record: Buffer): void {
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

/**
 * Byte ranges of the sources, read again: in order, a source is read ahead READ_BYTES at a time, so each byte is
 * read once; a range far from the last is read alone (a few removed documents cost a read each, not a pass).
 */
class SourceReader {
  private source = -1;
  private fd = -1;
  private base = 0;
  private window = Buffer.alloc(0);
  private start = 0;
  private end = 0;

  constructor(private readonly corpus: Corpus) {}

  bytes(source: number, offset: number, length: number): Buffer {
    if (source !== this.source) this.open(source);
    if (offset >= this.start && offset + length <= this.end)
      return this.window.subarray(offset - this.start, offset - this.start + length);
    const ahead = offset >= this.end && offset < this.end + READ_BYTES;
    const size = ahead || this.end === 0 ? Math.max(length, READ_BYTES) : length;
    if (this.window.length < size) this.window = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = fs.readSync(this.fd, this.window, got, size - got, this.base + offset + got);
      if (n === 0) break;
      got += n;
    }
    if (got < length)
      throw new InputError(`${this.corpus.sourceName(source)}: changed while it was read (now shorter)`);
    this.start = offset;
    this.end = offset + got;
    return this.window.subarray(0, length);
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
    this.start = this.end = 0;
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
