// The README's benchmark table and docs/benchmarks.md's full table are `npm run bench -- … --markdown` output pasted
// by scripts/update-bench-table.mjs, never edited by hand: each must still parse as that output. The README also
// stays a first read: at most 300 lines.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BENCH_HEADER, type BenchTable, markdownBlock, parseBenchBlocks } from '../bench/markdown.js';

const read = (path: string) => fs.readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

function checkTable(t: BenchTable): void {
  expect(t.header).toEqual([...BENCH_HEADER]);
  // One line names the machine and the Node that ran it, and the command; no clock times.
  expect(t.machine).toMatch(
    /^Machine: .+, \d+ cores, \d+ GiB; Node v\d+\.\d+\.\d+; spec \S+; `npm run bench -- .*--markdown`$/,
  );
  expect(t.machine).not.toMatch(/\b\d{1,2}:\d{2}\b/);
  expect(t.rows.length).toBeGreaterThan(0);
  for (const row of t.rows) {
    expect(row, row.join(' | ')).toHaveLength(BENCH_HEADER.length);
    expect(row[1], 'every row names its benchmark').not.toBe('');
    expect(row[2], 'every row has a result').not.toBe('');
  }
  // Ratios are numbers followed by ×, and the table has some.
  const ratios = t.rows.map((r) => r[4]!);
  for (const r of ratios) expect(r, r).not.toMatch(/(^|[^\d\s])\s*×/);
  expect(ratios.some((r) => /\d×/.test(r))).toBe(true);
}

describe('README', () => {
  const readme = read('README.md');

  it('is at most 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('holds one generated benchmark table that parses', () => {
    const tables = parseBenchBlocks(readme);
    expect(tables).toHaveLength(1);
    checkTable(tables[0]!);
  });
});

describe('docs/benchmarks.md', () => {
  it('holds the full generated table, which parses and covers the topics of the README', () => {
    const tables = parseBenchBlocks(read('docs/benchmarks.md'));
    expect(tables).toHaveLength(1);
    checkTable(tables[0]!);
    const topics = new Set(tables[0]!.rows.map((r) => r[0]));
    for (const row of parseBenchBlocks(read('README.md'))[0]!.rows) expect(topics).toContain(row[0]);
  });
});

describe('bench/markdown.ts', () => {
  it('prints what it parses back, pipes in cells included', () => {
    const machine =
      'Machine: X, 2 cores, 4 GiB; Node v20.0.0; spec simhash-wasm/2; `npm run bench -- peers --markdown`';
    const text = markdownBlock(machine, [
      { topic: 'peers', rows: [{ name: 'a | b', value: '1 s', baseline: 'c 2 s', ratio: '2.00×' }] },
      { topic: 'job', rows: [{ name: 'd', value: '3 s' }] },
    ]);
    const [t] = parseBenchBlocks(`# x\n\n${text}\n\nmore`);
    expect(t!.machine).toBe(machine);
    expect(t!.rows).toEqual([
      ['peers', 'a | b', '1 s', 'c 2 s', '2.00×'],
      ['job', 'd', '3 s', '', ''],
    ]);
    checkTable(t!);
  });
});
