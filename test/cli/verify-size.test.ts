// A document over MAX_VERIFIED_DOCUMENT_BYTES (64 MiB of UTF-8), which dedupStream refuses when pairs are verified,
// does not fail a verifying dedup run: it is reported as bad input and never handed on. A record (JSON Lines,
// --lines, CSV) is passed through to --output unchanged, like a record without a text; a whole file is skipped.
// With --no-verify it is a document like any other.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_VERIFIED_DOCUMENT_BYTES } from '../../src/dedup/document-size.js';
import { runCli } from './run.js';

const WORDS =
  'the committee met on tuesday morning to discuss the annual budget for the public library and agreed that ' +
  'the new reading room should open in the spring after the repairs to the roof are finished by the builders';
const NEAR_A = WORDS;
const NEAR_B = WORDS.replace('tuesday', 'wednesday');

/** 'word ' repeated to just over the limit (about 67 MB). */
const BIG_REPEATS = Math.ceil((MAX_VERIFIED_DOCUMENT_BYTES + 1_000_000) / 5);
const BIG_BYTES = BIG_REPEATS * 5;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-verify-size-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes `before`, the big text, then `after` to a new file through a stream; its path. */
async function writeBig(name: string, before: string, after: string): Promise<string> {
  const at = path.join(dir, name);
  const out = fs.createWriteStream(at);
  const chunk = Buffer.from('word '.repeat(1 << 18));
  const perChunk = 1 << 18;
  out.write(before);
  for (let left = BIG_REPEATS; left > 0; left -= perChunk) {
    const piece = left >= perChunk ? chunk : chunk.subarray(0, left * 5);
    if (!out.write(piece)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end(after);
  await finished(out);
  return at;
}

/** The byte ranges of a file's lines (without their newlines). */
function lines(file: string): Buffer[] {
  const bytes = fs.readFileSync(file);
  const out: Buffer[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
    out.push(bytes.subarray(start, nl));
    start = nl + 1;
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('documents too large to verify', () => {
  const tooLarge = /more than the 64 MiB that verification takes \(--no-verify takes up to 1 GiB\)/;

  it('a JSON Lines record: passed through unchanged, the others deduplicated', async () => {
    const input = await writeBig(
      'big.jsonl',
      `${JSON.stringify({ id: 'a', text: NEAR_A })}\n{"id":"big","text":"`,
      `"}\n${JSON.stringify({ id: 'b', text: NEAR_B })}\n`,
    );
    const [a, big] = lines(input);
    const output = path.join(dir, 'big-out.jsonl');
    const removed = path.join(dir, 'big-removed.jsonl');
    const r = runCli(['dedup', '--jsonl', input, '--output', output, '--removed', removed]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`big\\.jsonl:2: ${BIG_BYTES} bytes of text, ${tooLarge.source}`));
    expect(r.stderr.match(/big\.jsonl:2:/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/1 too large to verify/);
    expect(r.stderr).toMatch(/kept 1 of 2 documents .*removed 1 .*; 1 record too large to verify passed through/);
    expect(fs.readFileSync(output).equals(Buffer.concat([a!, Buffer.from('\n'), big!, Buffer.from('\n')]))).toBe(true);
    expect(fs.readFileSync(removed, 'utf8')).toMatch(/^\{"id":"b",.*"duplicate_of":"a"\}\n$/);

    // Annotated: the big record with null cluster and duplicate_of, the duplicate under its kept record.
    const annotated = path.join(dir, 'big-annotated.jsonl');
    const n = runCli(['dedup', '--jsonl', input, '--output', annotated, '--annotate', '-q']);
    expect(n.code, n.stderr).toBe(0);
    const records = lines(annotated).map((line) => JSON.parse(line.toString('utf8')) as Record<string, unknown>);
    expect(records.map((x) => [x.id, x.cluster, x.duplicate_of])).toEqual([
      ['a', 'a', null],
      ['big', null, null],
      ['b', 'a', 'a'],
    ]);
    expect((records[1]!.text as string).length).toBe(BIG_BYTES);

    // Into a --state directory (a Deduplicator verifies as dedupStream does): the same.
    const stateOut = path.join(dir, 'state-out.jsonl');
    const st = runCli(['dedup', '--jsonl', input, '--state', path.join(dir, 'state-jsonl'), '--output', stateOut]);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stderr).toMatch(new RegExp(`big\\.jsonl:2: ${BIG_BYTES} bytes of text, ${tooLarge.source}`));
    expect(st.stderr).toMatch(/kept 1 of 2 new documents, removed 1/);
    expect(fs.readFileSync(stateOut).equals(fs.readFileSync(output))).toBe(true);

    // --no-verify takes it as a document like any other.
    const plain = runCli([
      'dedup',
      '--jsonl',
      input,
      '--no-verify',
      '--k',
      '12',
      '--output',
      path.join(dir, 'nv.jsonl'),
    ]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toMatch(/verification takes/);
    expect(plain.stderr).toMatch(/kept 2 of 3 documents .*removed 1/);
    expect(plain.stderr).not.toMatch(/passed through/);
  });

  it('the closing line tells records without a text from records too large to verify', async () => {
    const input = await writeBig(
      'mixed.jsonl',
      `${JSON.stringify({ id: 'a', text: NEAR_A })}\n{"id":"none"}\n{"id":"big","text":"`,
      `"}\n${JSON.stringify({ id: 'b', text: NEAR_B })}\n{"id":"none2","text":7}\n`,
    );
    const r = runCli(['dedup', '--jsonl', input, '--output', path.join(dir, 'mixed-out.jsonl')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /kept 1 of 2 documents .*removed 1; 3 records \(2 without a text, 1 too large to verify\) passed through/,
    );
    expect(lines(path.join(dir, 'mixed-out.jsonl'))).toHaveLength(4);
  });

  it('a --lines line: passed through unchanged', async () => {
    const input = await writeBig('big.txt', `${NEAR_A}\n`, `\n${NEAR_B}\n`);
    const [a, big] = lines(input);
    const output = path.join(dir, 'lines-out.txt');
    const removed = path.join(dir, 'lines-removed.txt');
    const r = runCli(['dedup', '--lines', input, '--output', output, '--removed', removed]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`big\\.txt:2: ${BIG_BYTES} bytes of text, ${tooLarge.source}`));
    expect(r.stderr).toMatch(/kept 1 of 2 documents .*removed 1 .*; 1 record too large to verify passed through/);
    expect(fs.readFileSync(output).equals(Buffer.concat([a!, Buffer.from('\n'), big!, Buffer.from('\n')]))).toBe(true);
    expect(fs.readFileSync(removed, 'utf8')).toBe(`${NEAR_B}\n`);
  });

  it('a CSV row: passed through unchanged', async () => {
    const input = await writeBig('big.csv', `id,text\na,${NEAR_A}\nbig,`, `\nb,${NEAR_B}\n`);
    const [header, a, big] = lines(input);
    const output = path.join(dir, 'csv-out.csv');
    const r = runCli(['dedup', '--csv', input, '--output', output]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`big\\.csv:3: ${BIG_BYTES} bytes of text, ${tooLarge.source}`));
    expect(r.stderr).toMatch(/kept 1 of 2 documents .*removed 1; 1 record too large to verify passed through/);
    const nl = Buffer.from('\n');
    expect(fs.readFileSync(output).equals(Buffer.concat([header!, nl, a!, nl, big!, nl]))).toBe(true);
  });

  it('a Parquet row: passed through, annotated with NULLs', async () => {
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const input = path.join(dir, 'big.parquet');
    const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
    await db.run(
      `COPY (SELECT id, text FROM (VALUES (1, 'a', ${q(NEAR_A)}), (2, 'big', repeat('word ', ${BIG_REPEATS})), ` +
        `(3, 'b', ${q(NEAR_B)})) t(n, id, text) ORDER BY n) TO ${q(input)} (FORMAT parquet)`,
    );
    const output = path.join(dir, 'big-out.parquet');
    const r = runCli(['dedup', input, '--output', output, '--annotate']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`big\\.parquet:2: ${BIG_BYTES} bytes of text, ${tooLarge.source}`));
    expect(r.stderr).toMatch(/kept 1 of 2 documents .*removed 1; 1 record too large to verify passed through/);
    const got = await db.runAndReadAll(
      `SELECT id, length(text) AS n, text = repeat('word ', ${BIG_REPEATS}) AS same, cluster, duplicate_of FROM read_parquet(${q(output)})`,
    );
    expect(got.getRowObjectsJson()).toEqual([
      { id: 'a', n: String(NEAR_A.length), same: false, cluster: 'a', duplicate_of: null },
      { id: 'big', n: String(BIG_BYTES), same: true, cluster: null, duplicate_of: null },
      { id: 'b', n: String(NEAR_B.length), same: false, cluster: 'a', duplicate_of: 'a' },
    ]);
  });

  it('a whole file in a directory: skipped, in neither target', async () => {
    const tree = path.join(dir, 'tree');
    fs.mkdirSync(tree);
    fs.writeFileSync(path.join(tree, 'a.txt'), NEAR_A);
    fs.writeFileSync(path.join(tree, 'c.txt'), NEAR_B);
    await writeBig('tree/b.txt', '', '');
    const output = path.join(dir, 'kept-paths.txt');
    const removed = path.join(dir, 'removed-paths.txt');
    const r = runCli(['dedup', tree, '--output', output, '--removed', removed]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`b\\.txt: ${BIG_BYTES} bytes, ${tooLarge.source}: not deduplicated`));
    expect(r.stderr).toMatch(/kept 1 of 2 documents .*removed 1/);
    expect(fs.readFileSync(output, 'utf8')).toBe(`${path.join(tree, 'a.txt')}\n`);
    expect(fs.readFileSync(removed, 'utf8')).toBe(`${path.join(tree, 'c.txt')}\n`);

    const plain = runCli(['dedup', tree, '--no-verify', '--k', '12', '--output', output, '--removed', removed]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toMatch(/verification takes/);
    expect(plain.stderr).toMatch(/kept 2 of 3 documents .*removed 1/);
    expect(fs.readFileSync(output, 'utf8')).toBe(`${path.join(tree, 'a.txt')}\n${path.join(tree, 'b.txt')}\n`);
  });
});
