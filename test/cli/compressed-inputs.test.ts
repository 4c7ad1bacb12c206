// Compressed inputs as users have them: fixtures written by Debian's gzip and zstd (independent of the reader under
// test), recognised by their first bytes, not their names; concatenated gzip members; truncated and corrupt files
// fail the run with a clear message (exit 1) and write nothing.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../reference.js';
import { runCli } from './run.js';

const hasTools = ['gzip', 'zstd'].every((tool) => spawnSync(tool, ['--version']).status === 0);
// CI installs both (.ci/run); without them the suite is skipped.
const runIt = hasTools && process.env.SIMHASH_BUILD !== 'scalar';

let dir: string;
let plain: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-compressed-'));
  const next = rng(391);
  const words = Array.from({ length: 2000 }, (_, i) => `v${i.toString(36)}é`);
  const lines: string[] = [];
  for (let g = 0; g < 400; g++) {
    const base = Array.from({ length: 40 }, () => words[Math.floor(next() * words.length)]!);
    const copies = 1 + Math.floor(next() * 3);
    for (let c = 0; c < copies; c++) {
      const t = base.slice();
      if (c > 0) t[Math.floor(next() * t.length)] = 'edited';
      lines.push(JSON.stringify({ id: `${g}.${c}`, text: t.join(' ') }));
    }
  }
  plain = path.join(dir, 'corpus.jsonl');
  fs.writeFileSync(plain, `${lines.join('\n')}\n`);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs a Debian tool on the plain corpus, writing `to`. */
function compress(tool: 'gzip' | 'zstd', to: string, from = plain): string {
  const r = spawnSync('sh', ['-c', `${tool} -c < "${from}" > "${to}"`]);
  expect(r.status, String(r.stderr)).toBe(0);
  return to;
}

describe.skipIf(!runIt)('compressed inputs (Debian gzip and zstd fixtures)', () => {
  it('.gz and .zst give the plain file’s clusters and its kept records byte for byte', () => {
    const want = runCli(['dedup', '--jsonl', plain]);
    const wantKept = runCli(['dedup', '--jsonl', plain, '--output', '-']);
    expect(want.code, want.stderr).toBe(0);
    for (const file of [
      compress('gzip', path.join(dir, 'c.jsonl.gz')),
      compress('zstd', path.join(dir, 'c.jsonl.zst')),
    ]) {
      const got = runCli(['dedup', '--jsonl', file]);
      expect(got.code, got.stderr).toBe(0);
      // Same clusters; names are FILE:LINE only for records without an id, and every record has one.
      expect(got.stdout).toBe(want.stdout);
      const kept = runCli(['dedup', '--jsonl', file, '--output', '-']);
      expect(kept.stdout).toBe(wantKept.stdout);
      expect(kept.stdout.length).toBeGreaterThan(10000);
    }
  });

  it('recognises compression by the first bytes, not the name; reads standard input too', () => {
    const want = runCli(['dedup', '--jsonl', plain]).stdout;
    const gzipNamedTxt = compress('gzip', path.join(dir, 'looks-plain.txt'));
    expect(runCli(['dedup', '--jsonl', gzipNamedTxt]).stdout).toBe(want);
    const plainNamedGz = path.join(dir, 'not-really.gz');
    fs.copyFileSync(plain, plainNamedGz);
    expect(runCli(['dedup', '--jsonl', plainNamedGz]).stdout).toBe(want);
    const zst = compress('zstd', path.join(dir, 'stdin.zst'));
    const piped = spawnSync(
      'sh',
      ['-c', `cat "${zst}" | "${process.execPath}" --import tsx src/cli/cli.ts dedup --jsonl -`],
      {
        encoding: 'utf8',
      },
    );
    expect(piped.status, piped.stderr).toBe(0);
    expect(piped.stdout).toBe(want);
  });

  it.skipIf(spawnSync('pzstd', ['--version']).status !== 0)(
    'reads pzstd output (skippable frames first) as zstd -dc does',
    () => {
      const zst = path.join(dir, 'parallel.jsonl.zst');
      const r = spawnSync('sh', ['-c', `pzstd -q -p 2 -c < "${plain}" > "${zst}"`]);
      expect(r.status, String(r.stderr)).toBe(0);
      expect(fs.readFileSync(zst).readUInt32LE(0)).toBe(0x184d2a50);
      const want = runCli(['dedup', '--jsonl', plain, '--output', '-']);
      const got = runCli(['dedup', '--jsonl', zst, '--output', '-']);
      expect(got.code, got.stderr).toBe(0);
      expect(got.stdout).toBe(want.stdout);
    },
  );

  it('reads concatenated gzip members as one stream, as zcat does', () => {
    const one = compress('gzip', path.join(dir, 'one.gz'));
    const two = path.join(dir, 'two-members.gz');
    fs.writeFileSync(two, Buffer.concat([fs.readFileSync(one), fs.readFileSync(one)]));
    const zcat = spawnSync('zcat', [two]);
    expect(zcat.stdout.length).toBe(2 * fs.statSync(plain).size);
    const r = runCli(['dedup', '--jsonl', two, '--output', '-']);
    expect(r.code, r.stderr).toBe(0);
    // Every record of the second member is an exact copy of one of the first: the kept records are the first's.
    const once = runCli(['dedup', '--jsonl', plain, '--output', '-']);
    expect(r.stdout).toBe(once.stdout);
  });

  it('whole files in a folder are decompressed one by one', () => {
    const folder = path.join(dir, 'docs');
    fs.mkdirSync(folder);
    const text = 'a page of documentation about a package, long enough to hold a few shingles of words';
    fs.writeFileSync(path.join(folder, 'a'), text);
    fs.writeFileSync(path.join(folder, 'b'), text);
    compress('gzip', path.join(folder, 'b.gz'), path.join(folder, 'b'));
    fs.rmSync(path.join(folder, 'b'));
    const r = runCli(['dedup', folder]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/binary/);
    expect(JSON.parse(r.stdout).members).toEqual([path.join(folder, 'a'), path.join(folder, 'b.gz')]);
  });

  it('a truncated or corrupt file fails the run with a clear message and writes nothing', () => {
    const gz = fs.readFileSync(compress('gzip', path.join(dir, 'whole.gz')));
    const zst = fs.readFileSync(compress('zstd', path.join(dir, 'whole.zst')));
    const corrupt = (b: Buffer, at: number) => {
      const c = Buffer.from(b);
      c.fill(0xff, at, at + 4);
      return c;
    };
    const cases: Array<[string, Buffer, RegExp]> = [
      ['truncated.gz', gz.subarray(0, gz.length >> 1), /gzip data ends too soon \(a truncated file\)/],
      ['corrupt.gz', corrupt(gz, 3), /not valid gzip data/],
      ['truncated.zst', zst.subarray(0, zst.length >> 1), /Zstandard data ends too soon \(a truncated file\)/],
      ['corrupt.zst', corrupt(zst, 12), /not valid Zstandard data/],
    ];
    const out = path.join(dir, 'kept.jsonl');
    for (const [name, bytes, message] of cases) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, bytes);
      fs.writeFileSync(out, 'the old output\n');
      const r = runCli(['dedup', '--jsonl', file, '--output', out]);
      expect(r.code, name).toBe(1);
      expect(r.stderr, name).toMatch(message);
      expect(fs.readFileSync(out, 'utf8'), name).toBe('the old output\n');
    }
  });
});
