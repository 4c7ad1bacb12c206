// dedup --state DIR: a corpus deduplicated in two runs keeps, of the second run's documents, exactly what one run
// over both keeps (byte for byte in --output); a state made with other options or damaged is refused; a run killed
// at any moment leaves a state that loads and holds either the earlier runs or this one too.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deduplicator } from '../../src/dedup/deduplicator.js';
import { init } from '../../src/runtime/wasm.js';
import { rng } from '../reference.js';
import { cliSource, root, runCli, tsxLoader } from './run.js';

let dir: string;
beforeAll(async () => {
  await init();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-state-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Seeded JSON Lines: groups of edited copies, some copies in the first half and some in the second. */
function lines(seed: number, groups: number): string[] {
  const next = rng(seed);
  const words = Array.from({ length: 2500 }, (_, i) => `s${i.toString(36)}e`);
  const out: string[] = [];
  for (let g = 0; g < groups; g++) {
    const base = Array.from({ length: 40 }, () => words[Math.floor(next() * words.length)]!);
    for (let c = 0, m = 1 + Math.floor(next() * 4); c < m; c++) {
      const t = base.slice();
      if (c > 0) t[Math.floor(next() * t.length)] = words[Math.floor(next() * words.length)]!;
      out.push(JSON.stringify({ id: `g${g}.${c}`, text: t.join(' ') }));
    }
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function write(name: string, content: string[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content.map((l) => `${l}\n`).join(''));
  return file;
}

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('dedup --state', () => {
  it('A then B keeps of B what one run over A + B keeps', () => {
    const all = lines(21, 300);
    const half = all.length >> 1;
    const a = write('a.jsonl', all.slice(0, half));
    const b = write('b.jsonl', all.slice(half));
    const both = write('ab.jsonl', all);
    const state = path.join(dir, 'state-ab');
    const first = runCli(['dedup', '--jsonl', a, '--state', state, '--output', path.join(dir, 'a-kept.jsonl')]);
    expect(first.code, first.stderr).toBe(0);
    const second = runCli(['dedup', '--jsonl', b, '--state', state, '--output', '-']);
    expect(second.code, second.stderr).toBe(0);
    const once = runCli(['dedup', '--jsonl', both, '--output', '-']);
    const bLines = new Set(all.slice(half));
    const wanted = once.stdout.split('\n').filter((l) => bLines.has(l));
    expect(wanted.length).toBeGreaterThan(0);
    expect(wanted.length).toBeLessThan(bLines.size);
    expect(second.stdout).toBe(wanted.map((l) => `${l}\n`).join(''));
    expect(second.stderr).toMatch(new RegExp(`the state holds ${all.length} documents`));
    // Without an output, the dropped documents and what they duplicate (named from the earlier run too).
    const listed = runCli(['dedup', '--jsonl', b, '--state', path.join(dir, 'state-list-only')]);
    expect(listed.code).toBe(0);
    const again = runCli(['dedup', '--jsonl', b, '--state', path.join(dir, 'state-list-only')]);
    const dropped = again.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Every document of b is now a copy of itself from the run before (or of an earlier member of its cluster).
    expect(dropped).toHaveLength(bLines.size);
    const ids = new Set([...bLines].map((l) => JSON.parse(l).id));
    expect(dropped.every((x) => ids.has(x.document) && ids.has(x.duplicate_of))).toBe(true);
  });

  it('refuses a state made with other options, and a damaged one, changing nothing', () => {
    const a = write('c.jsonl', lines(22, 40));
    const state = path.join(dir, 'state-c');
    expect(runCli(['dedup', '--jsonl', a, '--state', state]).code).toBe(0);
    const file = path.join(state, 'state.bin');
    const saved = fs.readFileSync(file);
    const other = runCli(['dedup', '--jsonl', a, '--state', state, '--k', '6']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/the state was made with k = 12, not 6/);
    const width = runCli(['dedup', '--jsonl', a, '--state', state, '--width', '4']);
    expect(width.stderr).toMatch(/made with width = 3, not 4/);
    expect(fs.readFileSync(file).equals(saved)).toBe(true);
    const damaged = Buffer.from(saved);
    damaged[damaged.length >> 1]! ^= 0x40;
    fs.writeFileSync(file, damaged);
    const bad = runCli(['dedup', '--jsonl', a, '--state', state]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/checksum does not match/);
    expect(runCli(['dedup', '--jsonl', a, '--state', state, '--keep', 'longest']).stderr).toMatch(
      /--state keeps the first document/,
    );
  });

  it('a run killed at any moment leaves a state that loads: the earlier runs, or this one too', async () => {
    const all = lines(23, 2500);
    const half = all.length >> 1;
    const a = write('ka.jsonl', all.slice(0, half));
    const b = write('kb.jsonl', all.slice(half));
    const state = path.join(dir, 'state-kill');
    expect(runCli(['dedup', '--jsonl', a, '--state', state]).code).toBe(0);
    const file = path.join(state, 'state.bin');
    const before = fs.readFileSync(file);
    // How long the second run takes whole, so that the kills fall inside it.
    const started = Date.now();
    expect(runCli(['dedup', '--jsonl', b, '--state', state]).code).toBe(0);
    const duration = Date.now() - started;
    const next = rng(3);
    const outcomes = new Set<number>();
    for (let round = 0; round < 6; round++) {
      fs.writeFileSync(file, before);
      const child = spawn(
        process.execPath,
        ['--import', tsxLoader, cliSource, 'dedup', '--jsonl', b, '--state', state],
        { cwd: root, stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await new Promise((resolve) => setTimeout(resolve, Math.floor(next() * duration)));
      child.kill('SIGKILL');
      await exited;
      const loaded = Deduplicator.load(fs.readFileSync(file));
      expect([half, all.length]).toContain(loaded.count);
      outcomes.add(loaded.count);
    }
    expect(outcomes.has(half)).toBe(true);
  }, 120_000);
});
