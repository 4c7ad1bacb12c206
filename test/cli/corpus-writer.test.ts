// writeCorpus and AtomicFile on their own, at sizes past their buffers: records read again a window at a time
// (straddling windows, larger than one, from two sources, some far apart) come out byte for byte as the input
// had them, kept, removed or annotated; writes that cross the file's buffers keep their order; a write that fails
// in the background (file size limit) leaves the old target and no temporary file.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AtomicFile } from '../../src/cli/atomic-file.js';
import { type DeduplicatedDocuments, type WriteCounts, writeCorpus } from '../../src/cli/corpus-writer.js';
import type { PassedRecords } from '../../src/cli/inputs.js';
import type { Corpus } from '../../src/cli/inputs.js';
import { rng } from '../reference.js';
import { cliSource, root, tsxLoader } from './run.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-writer-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const MiB = 1 << 20;

/** Random words to cut texts from. */
let words = '';

/** JSON Lines of records from 60 bytes to 300 KB, CRLF ends here and there, and one record of `huge` bytes. */
function jsonl(file: string, bytes: number, seed: number, huge = 0): Buffer[] {
  const next = rng(seed);
  if (words === '') {
    const w = rng(0);
    words = Array.from({ length: 1 << 20 }, () => Math.floor(w() * 1e6).toString(36)).join(' ');
  }
  const records: Buffer[] = [];
  let size = 0;
  while (size < bytes) {
    const long = next() < 0.05;
    const n = huge > 0 && records.length === 40 ? huge : Math.floor(20 + next() * (long ? 300_000 : 3000));
    const from = Math.floor(next() * words.length);
    let text = words.slice(from, from + n);
    while (text.length < n) text += ` ${words.slice(0, n - text.length - 1)}`;
    const cr = next() < 0.2 ? '\r' : '';
    records.push(Buffer.from(`{"id":${records.length},"text":"${text}"} ${cr}`));
    size += records.at(-1)!.length + 1;
  }
  fs.writeFileSync(file, Buffer.concat(records.flatMap((r) => [r, Buffer.from('\n')])));
  return records;
}

const noneParsed: PassedRecords = {
  count: 0,
  tooLarge: 0,
  source: new Uint32Array(0),
  offset: new Float64Array(0),
  length: new Float64Array(0),
  line: new Float64Array(0),
  before: new Float64Array(0),
  missing: new Uint32Array(0),
};

/**
 * A corpus of JSON Lines files as writeCorpus sees it: each line a record, named "d<i>"; `passed`, records that had
 * no text.
 */
function corpusOf(files: string[], passed = noneParsed): Corpus {
  return {
    passedRecords: () => passed,
    bomOf: () => false,
    missingFields: () => 0,
    wholeFiles: false,
    jsonl: true,
    delimiter: null,
    rereadFrom: (s: number) => ({ file: files[s]!, base: 0 }),
    sourceName: (s: number) => files[s]!,
    nameJson: (i: number) => JSON.stringify(`d${i}`),
    nameValue: (i: number) => `d${i}`,
    nameText: (i: number) => `d${i}`,
  } as unknown as Corpus;
}

/** Locators of `records` laid out one per line in their sources, and a verdict for each: kept or a duplicate. */
function deduplicated(sources: Buffer[][], removed: (i: number) => boolean): DeduplicatedDocuments {
  const source: number[] = [];
  const offset: number[] = [];
  const length: number[] = [];
  sources.forEach((records, s) => {
    let at = 0;
    for (const r of records) {
      source.push(s);
      offset.push(at);
      length.push(r.length);
      at += r.length + 1;
    }
  });
  const count = source.length;
  const duplicateOf = new Int32Array(count).fill(-1);
  const clusterOf = new Uint32Array(count).map((_, i) => i);
  // Each removed document a duplicate of the last one kept before it.
  let kept = 0;
  for (let i = 1; i < count; i++) {
    if (!removed(i)) kept = i;
    else {
      duplicateOf[i] = kept;
      clusterOf[i] = clusterOf[kept]!;
    }
  }
  return {
    count,
    clusterOf,
    duplicateOf,
    locators: {
      source: Uint32Array.from(source),
      offset: Float64Array.from(offset),
      length: Float64Array.from(length),
    },
  };
}

/** A record with "cluster" and "duplicate_of" before its closing brace, as dedup --annotate / --removed write it. */
function annotated(record: Buffer, r: DeduplicatedDocuments, i: number): string {
  const text = record.toString('latin1');
  const close = text.lastIndexOf('}');
  const dup = r.duplicateOf[i]!;
  return `${text.slice(0, close)},"cluster":"d${r.clusterOf[i]}","duplicate_of":${dup === -1 ? 'null' : `"d${dup}"`}${text.slice(close)}\n`;
}

/** writeCorpus to `out` (kept) and `gone` (removed), both synced and then published, as the command line commits. */
async function writeBoth(corpus: Corpus, r: DeduplicatedDocuments, out: string, gone: string): Promise<WriteCounts> {
  const output = new AtomicFile(out);
  const removed = new AtomicFile(gone);
  const counts = await writeCorpus(corpus, r, { output, removed, annotate: false, nul: false });
  await output.sync();
  await removed.sync();
  output.publish();
  removed.publish();
  return counts;
}

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('writeCorpus and AtomicFile past their buffers', () => {
  it('records straddling windows, one larger than a window, two sources: kept, removed and annotated byte for byte', async () => {
    const a = path.join(dir, 'a.jsonl');
    const b = path.join(dir, 'b.jsonl');
    const sources = [jsonl(a, 30 * MiB, 1, 9 * MiB), jsonl(b, 3 * MiB, 2)];
    const all = sources.flat();
    const next = rng(3);
    // Removed: a quarter at random, and a run of 200 records in a row (kept records far apart).
    const r = deduplicated(sources, (i) => next() < 0.25 || (i >= 100 && i < 300));
    const corpus = corpusOf([a, b]);
    const out = path.join(dir, 'kept.jsonl');
    const gone = path.join(dir, 'removed.jsonl');
    const counts = await writeBoth(corpus, r, out, gone);
    const kept = all.filter((_, i) => r.duplicateOf[i] === -1);
    expect(counts).toEqual({ kept: kept.length, removed: all.length - kept.length, passed: 0, tooLarge: 0 });
    expect(fs.readFileSync(out).equals(Buffer.concat(kept.flatMap((x) => [x, Buffer.from('\n')])))).toBe(true);
    const expectRemoved = all.map((x, i) => (r.duplicateOf[i] === -1 ? '' : annotated(x, r, i))).join('');
    expect(fs.readFileSync(gone, 'latin1') === expectRemoved).toBe(true);

    const every = new AtomicFile(out);
    await writeCorpus(corpus, r, { output: every, removed: null, annotate: true, nul: false });
    await every.sync();
    every.publish();
    expect(fs.readFileSync(out, 'latin1') === all.map((x, i) => annotated(x, r, i)).join('')).toBe(true);
    // Removed documents only: each read alone where they lie far apart.
    const few = deduplicated(sources, (i) => i % 997 === 0);
    const sparse = new AtomicFile(gone);
    await writeCorpus(corpus, few, { output: null, removed: sparse, annotate: false, nul: false });
    await sparse.sync();
    sparse.publish();
    const expectSparse = all.map((x, i) => (few.duplicateOf[i] === -1 ? '' : annotated(x, few, i))).join('');
    expect(fs.readFileSync(gone, 'latin1') === expectSparse).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('records without a text go to --output in their places (annotated with nulls), never to --removed', async () => {
    const a = path.join(dir, 'passed-a.jsonl');
    const b = path.join(dir, 'passed-b.jsonl');
    const sources = [jsonl(a, 20 * MiB, 5, 9 * MiB), jsonl(b, 2 * MiB, 6)];
    const next = rng(7);
    // Every record lies where jsonl wrote it; some are taken out of the documents as records without a text.
    const all: Array<{ record: Buffer; s: number; offset: number; passed: boolean }> = [];
    sources.forEach((records, s) => {
      let at = 0;
      for (const record of records) {
        all.push({ record, s, offset: at, passed: next() < 0.1 || all.length === 0 });
        at += record.length + 1;
      }
    });
    const docs = all.filter((x) => !x.passed);
    const passedOnes = all.filter((x) => x.passed);
    const before: number[] = [];
    let d = 0;
    for (const x of all) {
      if (x.passed) before.push(d);
      else d++;
    }
    const passed: PassedRecords = {
      count: passedOnes.length,
      tooLarge: 0,
      source: Uint32Array.from(passedOnes, (x) => x.s),
      offset: Float64Array.from(passedOnes, (x) => x.offset),
      length: Float64Array.from(passedOnes, (x) => x.record.length),
      line: Float64Array.from(passedOnes, () => 0),
      before: Float64Array.from(before),
      missing: new Uint32Array(passedOnes.length),
    };
    const r = deduplicated([docs.map((x) => x.record)], (i) => next() < 0.3 && i > 0);
    r.locators.source.set(docs.map((x) => x.s));
    r.locators.offset.set(docs.map((x) => x.offset));
    const corpus = corpusOf([a, b], passed);
    const out = path.join(dir, 'passed-kept.jsonl');
    const gone = path.join(dir, 'passed-removed.jsonl');
    const counts = await writeBoth(corpus, r, out, gone);
    expect(counts.passed).toBe(passedOnes.length);
    const docIndex = new Map(docs.map((x, i) => [x, i]));
    const keptOnes = all.filter((x) => x.passed || r.duplicateOf[docIndex.get(x)!] === -1);
    expect(fs.readFileSync(out).equals(Buffer.concat(keptOnes.flatMap((x) => [x.record, Buffer.from('\n')])))).toBe(
      true,
    );
    const expectRemoved = docs.map((x, i) => (r.duplicateOf[i] === -1 ? '' : annotated(x.record, r, i))).join('');
    expect(fs.readFileSync(gone, 'latin1') === expectRemoved).toBe(true);
    const every = new AtomicFile(out);
    await writeCorpus(corpus, r, { output: every, removed: null, annotate: true, nul: false });
    await every.sync();
    every.publish();
    const nulls = (record: Buffer) => {
      const text = record.toString('latin1');
      const close = text.lastIndexOf('}');
      return `${text.slice(0, close)},"cluster":null,"duplicate_of":null${text.slice(close)}\n`;
    };
    const expectEvery = all.map((x) => (x.passed ? nulls(x.record) : annotated(x.record, r, docIndex.get(x)!)));
    expect(fs.readFileSync(out, 'latin1') === expectEvery.join('')).toBe(true);
  });

  it('a source that shrank since it was read fails the run, and the target stays as it was', async () => {
    const file = path.join(dir, 'shrinks.jsonl');
    const records = jsonl(file, 12 * MiB, 4);
    const r = deduplicated([records], () => false);
    fs.truncateSync(file, 10 * MiB);
    const out = path.join(dir, 'shrunk.jsonl');
    fs.writeFileSync(out, 'the old output\n');
    const output = new AtomicFile(out);
    try {
      await expect(
        writeCorpus(corpusOf([file]), r, { output, removed: null, annotate: false, nul: false }),
      ).rejects.toThrow(/changed while it was read/);
    } finally {
      output.abort();
    }
    expect(fs.readFileSync(out, 'utf8')).toBe('the old output\n');
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('.shrunk'))).toEqual([]);
  });

  it('AtomicFile: writes and appends across its buffers keep their order; none while an append writes', async () => {
    const out = path.join(dir, 'pieces.bin');
    const f = new AtomicFile(out);
    const expected: Buffer[] = [];
    const bytes = (n: number) => randomBytes(n);
    for (const n of [1, 4095, 3 * MiB + 7]) {
      const b = bytes(n);
      f.write(b);
      expected.push(b);
    }
    f.writeString('ö header\n');
    expected.push(Buffer.from('ö header\n'));
    for (let round = 0; round < 6; round++) {
      const pieces = [1, 17, 4096, 2 * MiB + 3, 9 * MiB + 1, 100].map(bytes);
      await f.append(pieces);
      expected.push(...pieces);
    }
    expect(() => f.write(Buffer.from('x'))).toThrow(/under way/);
    await f.sync();
    f.publish();
    expect(fs.readFileSync(out).equals(Buffer.concat(expected))).toBe(true);
  });

  it('a file system that refuses a direct write: the rest through the page cache, the file whole', async () => {
    const openSync = fs.openSync;
    const write = fs.write;
    let direct = -1;
    let refused = 0;
    const opened = vi.spyOn(fs, 'openSync').mockImplementation(((...args: Parameters<typeof fs.openSync>) => {
      const fd = openSync(...args);
      if (typeof args[1] === 'number' && (args[1] & (fs.constants.O_DIRECT ?? 0)) !== 0) direct = fd;
      return fd;
    }) as typeof fs.openSync);
    const written = vi.spyOn(fs, 'write').mockImplementation(((fd: number, ...rest: unknown[]) => {
      if (fd === direct && refused++ === 0) {
        const callback = rest.at(-1) as (error: NodeJS.ErrnoException) => void;
        return process.nextTick(
          callback,
          Object.assign(new Error('EINVAL: invalid argument, write'), { code: 'EINVAL' }),
        );
      }
      return (write as (...a: unknown[]) => void)(fd, ...rest);
    }) as typeof fs.write);
    try {
      const out = path.join(dir, 'refused.bin');
      const f = new AtomicFile(out);
      const pieces = [3, 5, 2].map((n) => randomBytes(n * MiB + 11));
      await f.append(pieces);
      await f.sync();
      f.publish();
      expect(fs.readFileSync(out).equals(Buffer.concat(pieces))).toBe(true);
      if (direct >= 0) expect(refused).toBe(1);
    } finally {
      opened.mockRestore();
      written.mockRestore();
    }
  });

  it('a write that fails in the background (file size limit) leaves the old output and no temporary file', () => {
    const file = path.join(dir, 'limit.jsonl');
    jsonl(file, 24 * MiB, 7);
    const out = path.join(dir, 'kept-limit.jsonl');
    fs.writeFileSync(out, 'the old output\n');
    // 12 MiB (bash counts in KiB): the limit falls in the second of the file's buffers, written on the thread pool
    // while the third is filled.
    const r = spawnSync(
      'bash',
      [
        '-c',
        `ulimit -f ${(12 * MiB) / 1024}; exec "${process.execPath}" --import "${tsxLoader}" "${cliSource}" "$@"`,
        'cli',
      ].concat(['dedup', '--jsonl', file, '--output', out]),
      { encoding: 'utf8', cwd: root },
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/EFBIG|too large/i);
    expect(fs.readFileSync(out, 'utf8')).toBe('the old output\n');
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('.kept-limit'))).toEqual([]);
  });
});
