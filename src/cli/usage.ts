// The command line's arguments: the help texts, the option specs for node:util parseArgs, and the parsers that
// turn option values into library options. A bad argument is a UsageError (report.ts; exit code 2).
import type { Normalization, Preset, SimHashOptions, TokenizerName } from '../fingerprint/options.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import type { ReadOptions } from './inputs.js';
import { MAX_THREADS } from '../dedup/stream-hash.js';
import { NAME, UsageError } from './report.js';

const INPUT_HELP = `Inputs:
  FILE ...             files to read; a directory is read recursively (files in name order; FIFOs,
                       sockets and devices in it are skipped with a warning)
  -                    standard input (also the default when no input is given)
  --follow-symlinks    follow symbolic links to directories (each directory is read once)
  --binary             also read files that look binary (a NUL byte in the first 8 KB)
  --jsonl              inputs are JSON Lines: one document per line
  --csv, --tsv         inputs are CSV (RFC 4180: quoted fields may hold commas, quotes and newlines) or
                       TSV (no quoting) with a header row: one document per row
  --field NAME         the JSON field or column holding the text (default "text"; a dotted path such as
                       meta.body reaches into nested JSON objects)
  --id-field NAME      the JSON field or column naming the document (default "id"; else FILE:LINE)
  --lines              plain-text inputs hold one document per line
Files (and standard input) compressed with gzip or Zstandard are read as they are decompressed; a file that
starts and ends with PAR1 is read as a Parquet table (one document per row; needs the optional packages
hyparquet and hyparquet-compressors, and hyparquet-writer to write Parquet; before Node 22.15, zstddec reads
Zstandard pages faster).
  --strict             stop at the first unreadable file or invalid line (exit 1); default: report and skip
  -q, --quiet          print no warnings, skipped inputs or notes on stderr, only errors that stop the run
                       (otherwise a closing line counts them by reason)
  --threads N          worker threads that fingerprint and walk the join (default: the machine's cores)
Inputs are read as streams of any size; one document (a file, a line) may hold at most 1 GiB, and 64 MiB
where dedup verifies pairs (a larger record is passed through unchanged, a larger file skipped).

Fingerprints:
  --bits 64|128        fingerprint width (default 64; hash also takes 32)
  --tokenizer NAME     whitespace, words, shingles (default), ngrams or segmenter
  --width N            words per shingle (default 3) or characters per n-gram (default 4)
  --preset NAME        default (this library's spec, now simhash-wasm/2), simhash-wasm/1 (the spec before
                       it, for stored fingerprints), java or python-simhash (bit-exact with those
                       implementations; see docs/spec.md)
  --normalize FORM     Unicode normalization before tokenizing: NFC, NFD, NFKC, NFKD or none (default none)
  --locale TAG         locale of the segmenter tokenizer (a BCP 47 tag such as ja; default the runtime's)`;

export const HELP: Record<string, string> = {
  main: `Usage: ${NAME} <command> [options] [inputs]

Commands:
  dedup    find near-duplicate documents and print their clusters
  hash     print one fingerprint per document
  sql      print the SQL of the near-duplicate join for a database cluster (ClickHouse)

Run "${NAME} <command> --help" for a command's options, "${NAME} --version" for the version.
Exit codes: 0 success, 1 error, 2 usage.`,
  dedup: `Usage: ${NAME} dedup [options] [inputs]

Finds every pair of documents whose fingerprints differ in at most k bits and prints the clusters they form,
one per line (JSON Lines: {"cluster", "size", "members"}) or as CSV (document,cluster,size).

Dedup:
  --k N                largest Hamming distance of candidate pairs (default 12 at 64 bits, 21 at 128;
                       3 and 6 with --no-verify)
  --threshold J        keep a candidate pair when its texts' word 3-shingle Jaccard is at least J
                       (default 0.6)
  --no-verify          keep every pair within k (plain SimHash, no check on the texts)
  --mode MODE          connected (default: chains of near-duplicates form one cluster) or centre (each
                       cluster is a centre and the documents within k of it)
  --format FORMAT      jsonl (default) or csv
  --pairs              print the near-duplicate pairs ({"a", "b", "distance", "jaccard"}) instead of clusters: the pairs
                       that explain them (each exact copy with its first, then the verified pairs)
  --all-pairs          with --pairs: every verified pair (at most 10^7)
  --all                also print documents without near-duplicates (clusters of one)
  --summary            print a readable summary (counts, largest clusters, time) instead
  --sample             run on the bundled sample (license and copyright texts, shipped in the package)
                       and print a summary
  --clickhouse URLS    join on a ClickHouse cluster (one HTTP URL per shard, comma-separated, as
                       scripts/clickhouse-cluster.sh urls prints them; needs @clickhouse/client and
                       --no-verify; k defaults to 3); fingerprints are computed here

The deduplicated corpus (written to a temporary file beside PATH, renamed into place when the run succeeds;
"-" for standard output; with either, nothing else goes to standard output unless --summary):
  --output PATH        the documents kept, in input order, each record byte for byte as read (a JSON Lines
                       or --lines line, a CSV/TSV row under its header row; Parquet: a table with the
                       input's schema; records without a text pass through); whole files as
                       documents: their paths. A name ending .gz is gzipped (.zst: Zstandard, Node 22.15+)
  --removed PATH       the documents dropped, with "cluster" and "duplicate_of" (the document kept in their
                       place) added as fields or columns; --lines lines as they are; files: their paths
  --keep RULE          which document of a cluster is kept: first (default, in input order), longest or
                       shortest (the text's UTF-8 bytes, in every format; ties go to the first)
  --annotate           with --output: write every record (JSON Lines, CSV/TSV, Parquet) with "cluster" and
                       "duplicate_of" added (null or empty for a kept document; both for a record
                       without a text)
  -0, --null           paths end with NUL, not a newline (for xargs -0; the tool itself never deletes)

Incremental runs:
  --state DIR          remember what this run saw in DIR (fingerprints, shingle sets, clusters, names; not
                       the texts) and deduplicate this run's inputs against every earlier run with the same DIR:
                       a document is dropped when it duplicates an earlier one. Without --output or --removed,
                       prints {"document", "duplicate_of"} for each document dropped. Each run adds a segment
                       file of its documents and replaces the small manifest once the outputs are written; one
                       made with other options is refused. About 1.1 bytes per byte of text on disk, of which a run
                       reads about 70 bytes (and the shingle sets of candidate pairs only).

${INPUT_HELP}
  -h, --help           this help`,
  hash: `Usage: ${NAME} hash [options] [inputs]

Prints one fingerprint per document: "HEX<tab>NAME" lines, or JSON Lines {"id", "fingerprint"} with --format jsonl.

  --format FORMAT      text (default), jsonl, or tsv: "INDEX<tab>FINGERPRINT" as UInt64 decimals (128 bits:
                       low word, then high), for clickhouse-client inserts into simhash-wasm/clickhouse tables

${INPUT_HELP}
  -h, --help           this help`,
};

HELP.sql = `Usage: ${NAME} sql --engine clickhouse --k K [--bits 64|128] [--shards N] [options]

Prints the SQL of the near-duplicate join on a ClickHouse cluster: the tables to create on every shard, how to
insert fingerprints (${NAME} hash --format tsv), and each shard's join statement, planned by the same cost model
as simhash-wasm/clickhouse.

  --engine clickhouse  the database (only ClickHouse so far)
  --k N                largest Hamming distance of the pairs
  --bits 64|128        fingerprint width (default 64)
  --shards N           shards of the cluster (default 1)
  --size N             fingerprints the tables are planned for (default 1000000)
  --table NAME         base name of the tables (default simhash)
  --cluster NAME       the cluster in remote_servers (default simhash)
  --database NAME      (default default)
  -h, --help           this help`;

export const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  quiet: { type: 'boolean', short: 'q' },
  jsonl: { type: 'boolean' },
  csv: { type: 'boolean' },
  tsv: { type: 'boolean' },
  field: { type: 'string' },
  'id-field': { type: 'string' },
  lines: { type: 'boolean' },
  strict: { type: 'boolean' },
  threads: { type: 'string' },
  'follow-symlinks': { type: 'boolean' },
  binary: { type: 'boolean' },
  bits: { type: 'string' },
  tokenizer: { type: 'string' },
  width: { type: 'string' },
  preset: { type: 'string' },
  normalize: { type: 'string' },
  locale: { type: 'string' },
  format: { type: 'string' },
} as const;

export const DEDUP_OPTIONS = {
  ...OPTIONS,
  k: { type: 'string' },
  mode: { type: 'string' },
  pairs: { type: 'boolean' },
  'all-pairs': { type: 'boolean' },
  all: { type: 'boolean' },
  summary: { type: 'boolean' },
  sample: { type: 'boolean' },
  threshold: { type: 'string' },
  'no-verify': { type: 'boolean' },
  clickhouse: { type: 'string' },
  output: { type: 'string' },
  removed: { type: 'string' },
  keep: { type: 'string' },
  annotate: { type: 'boolean' },
  null: { type: 'boolean', short: '0' },
  state: { type: 'string' },
} as const;

export function intOption(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

export function choice<T extends string>(
  value: string | undefined,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

export type Values = { [key: string]: string | boolean | undefined };

/** The fingerprint options of `hash` (32, 64 or 128 bits, as simhash() takes). */
export function hashOptions(v: Values, widths: 'hash'): SimHashOptions & { bits: 32 | 64 | 128 };
/** The fingerprint options of `dedup` (64 or 128 bits, as dedup() takes). */
export function hashOptions(v: Values): SimHashOptions & { bits: 64 | 128 };
export function hashOptions(v: Values, widths?: 'hash'): SimHashOptions & { bits: 32 | 64 | 128 } {
  if (v.bits === '32' && widths !== 'hash')
    throw new UsageError(
      "--bits 32: dedup joins 64- or 128-bit fingerprints, as the library's dedup() does (hash takes 32)",
    );
  const allowed = widths === 'hash' ? ['32', '64', '128'] : ['64', '128'];
  const bits = Number(choice(v.bits as string | undefined, 'bits', allowed, '64')) as 32 | 64 | 128;
  const o: SimHashOptions & { bits: 32 | 64 | 128 } = { bits };
  if (v.tokenizer !== undefined)
    o.tokenizer = choice(
      v.tokenizer as string,
      'tokenizer',
      ['whitespace', 'words', 'shingles', 'ngrams', 'segmenter'] as TokenizerName[],
      'shingles',
    );
  if (v.preset !== undefined) o.preset = v.preset as Preset;
  if (v.width !== undefined) o.width = intOption(v.width as string, 'width', 3, 1, 64);
  if (v.normalize !== undefined) {
    const form = choice(v.normalize as string, 'normalize', ['NFC', 'NFD', 'NFKC', 'NFKD', 'none'], 'none');
    o.normalize = form === 'none' ? false : (form as Normalization);
  }
  if (v.locale !== undefined) o.locale = v.locale as string;
  // The library knows the presets and what each allows: ask it now, before any input is read.
  try {
    createSimHasher(o);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return o;
}

export function readOptions(v: Values): ReadOptions {
  const records = (['jsonl', 'csv', 'tsv', 'lines'] as const).filter((f) => v[f] === true);
  if (records.length > 1) throw new UsageError(`--${records.join(' and --')} cannot be combined`);
  return {
    jsonl: v.jsonl === true,
    fieldsNamed: v.field !== undefined || v['id-field'] !== undefined,
    delimiter: v.csv ? ',' : v.tsv ? '\t' : null,
    field: (v.field as string | undefined) ?? 'text',
    idField: (v['id-field'] as string | undefined) ?? 'id',
    lines: v.lines === true,
    strict: v.strict === true,
    followSymlinks: v['follow-symlinks'] === true,
    binary: v.binary === true,
    // --keep longest / shortest compare texts' UTF-8 bytes in every format.
    byteTexts: v.keep === 'longest' || v.keep === 'shortest',
    idFieldNamed: v['id-field'] !== undefined,
  };
}

/** --threads: 1 to MAX_THREADS, default the machine's cores. */
export function threadsOption(v: Values, cores: number): number {
  return intOption(v.threads as string | undefined, 'threads', Math.min(cores, MAX_THREADS), 1, MAX_THREADS);
}
