// dedup --state DIR: a corpus deduplicated in two runs keeps, of the second run's documents, exactly what one run
// over both keeps (byte for byte in --output); a state made with other options or damaged is refused; a run killed
// at any moment (writing its segment or the manifest included) leaves a state that loads and holds either the
// earlier runs, deciding as before, or this one too; a version 1 state.bin is converted by the next run.
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
    const saved = snapshot(state);
    const other = runCli(['dedup', '--jsonl', a, '--state', state, '--k', '6']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/the state was made with k = 12, not 6/);
    const width = runCli(['dedup', '--jsonl', a, '--state', state, '--width', '4']);
    expect(width.stderr).toMatch(/made with width = 3, not 4/);
    expect(snapshot(state)).toEqual(saved);
    const segment = Object.keys(saved).find((f) => f.startsWith('segment-'))!;
    const damaged = Buffer.from(saved[segment]!);
    damaged[400]! ^= 0x40; // in the fingerprints
    fs.writeFileSync(path.join(state, segment), damaged);
    const bad = runCli(['dedup', '--jsonl', a, '--state', state]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--state .*segment-\d+-[0-9a-f]+\.bin: its checksum does not match \(damaged\)/);
    fs.writeFileSync(path.join(state, segment), saved[segment]!.subarray(0, 1000));
    expect(runCli(['dedup', '--jsonl', a, '--state', state]).stderr).toMatch(/truncated or damaged/);
    expect(runCli(['dedup', '--jsonl', a, '--state', state, '--keep', 'longest']).stderr).toMatch(
      /--state keeps the first document/,
    );
  });

  it('a run killed at any moment leaves a state that loads and decides as before, or holds this run too', async () => {
    const { all, half, b, state, restore } = earlierState(23, 2500, 'k');
    // How long the second run takes whole, so that the kills fall inside it, and what it decides.
    const started = Date.now();
    const reference = runCli(['dedup', '--jsonl', b, '--state', state]);
    expect(reference.code).toBe(0);
    const duration = Date.now() - started;
    expect(fs.readdirSync(state).filter((f) => f.startsWith('segment-'))).toHaveLength(2);
    const next = rng(3);
    const outcomes = new Set<number>();
    for (let round = 0; round < 8; round++) {
      restore();
      const child = spawn(
        process.execPath,
        ['--import', tsxLoader, cliSource, 'dedup', '--jsonl', b, '--state', state],
        { cwd: root, stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // Half the kills anywhere, half in the last third, where the segment and the manifest are written.
      const at = round % 2 === 0 ? next() : 0.67 + 0.33 * next();
      await new Promise((resolve) => setTimeout(resolve, Math.floor(at * duration)));
      child.kill('SIGKILL');
      await exited;
      const loaded = await Deduplicator.open(state);
      loaded.close();
      expect([half, all.length]).toContain(loaded.count);
      outcomes.add(loaded.count);
      if (loaded.count === half) {
        // The earlier state, whatever the killed run left beside it: the run again decides as the reference did,
        // and the files the killed run left are gone once it commits.
        const again = runCli(['dedup', '--jsonl', b, '--state', state]);
        expect(again.code).toBe(0);
        expect(again.stdout).toBe(reference.stdout);
        expect(fs.readdirSync(state).filter((f) => f !== 'manifest.bin' && !f.startsWith('segment-'))).toEqual([]);
        expect(fs.readdirSync(state).filter((f) => f.startsWith('segment-'))).toHaveLength(2);
      }
    }
    expect(outcomes.has(half)).toBe(true);
  }, 180_000);

  it('a process killed while it writes its segment or the manifest leaves the earlier state, or the new one whole', async () => {
    const { all, half, b, state, restore } = earlierState(25, 3000, 's');
    const reference = runCli(['dedup', '--jsonl', b, '--state', state]);
    expect(reference.code).toBe(0);
    // A child that says when it starts saving, so that the kills fall inside saveTo (segment, then manifest).
    const child = path.join(dir, 'save-child.mts');
    fs.writeFileSync(
      child,
      `import fs from 'node:fs';
import { Deduplicator } from ${JSON.stringify(path.join(root, 'src/dedup/deduplicator.ts'))};
import { init } from ${JSON.stringify(path.join(root, 'src/runtime/wasm.ts'))};
await init();
const [state, input] = process.argv.slice(2);
const d = await Deduplicator.open(state);
const texts = fs.readFileSync(input, 'utf8').trim().split('\\n').map((l) => JSON.parse(l).text);
d.add(texts);
process.stdout.write('saving\\n');
const t0 = performance.now();
await d.saveTo(state);
process.stdout.write('saved ' + (performance.now() - t0) + '\\n');
`,
    );
    const start = () => {
      const p = spawn(process.execPath, ['--import', tsxLoader, child, state, b], { cwd: root });
      let out = '';
      const saving = new Promise<void>((resolve) =>
        p.stdout.on('data', (chunk) => {
          out += chunk;
          if (out.includes('saving')) resolve();
        }),
      );
      const exited = new Promise<string>((resolve) => p.once('exit', () => resolve(out)));
      return { p, saving, exited };
    };
    restore();
    const calibration = start();
    const saved = /saved ([\d.]+)/.exec(await calibration.exited);
    expect(saved).not.toBeNull();
    const duration = Number(saved![1]);
    const next = rng(5);
    const outcomes = new Set<number>();
    for (let round = 0; round < 10; round++) {
      restore();
      const run = start();
      await run.saving;
      await new Promise((resolve) => setTimeout(resolve, Math.floor(next() * duration * 1.2)));
      run.p.kill('SIGKILL');
      await run.exited;
      const loaded = await Deduplicator.open(state);
      loaded.close();
      expect([half, all.length]).toContain(loaded.count);
      outcomes.add(loaded.count);
      if (loaded.count === half) {
        const again = runCli(['dedup', '--jsonl', b, '--state', state]);
        expect(again.code).toBe(0);
        expect(again.stdout).toBe(reference.stdout);
      }
    }
    expect(outcomes.has(half)).toBe(true);
  }, 180_000);

  it('converts a version 1 state.bin (one file, as earlier versions wrote it) and decides as a new state', async () => {
    const all = lines(24, 200);
    const half = all.length >> 1;
    const a = write('va.jsonl', all.slice(0, half));
    const b = write('vb.jsonl', all.slice(half));
    const fresh = path.join(dir, 'state-v2');
    expect(runCli(['dedup', '--jsonl', a, '--state', fresh]).code).toBe(0);
    const want = runCli(['dedup', '--jsonl', b, '--state', fresh, '--output', '-']);
    // A version 1 state of the same documents, labelled as the command line labels them.
    const old = new Deduplicator();
    old.add(
      all.slice(0, half).map((l) => JSON.parse(l).text),
      all.slice(0, half).map((l) => JSON.stringify(JSON.parse(l).id)),
    );
    const legacy = path.join(dir, 'state-v1');
    fs.mkdirSync(legacy);
    fs.writeFileSync(path.join(legacy, 'state.bin'), old.save());
    const got = runCli(['dedup', '--jsonl', b, '--state', legacy, '--output', '-']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toBe(want.stdout);
    expect(fs.readdirSync(legacy).sort()).toEqual(['manifest.bin', expect.stringMatching(/^segment-/)]);
    const listed = runCli(['dedup', '--jsonl', b, '--state', legacy]);
    expect(listed.stdout.trim().split('\n')).toHaveLength(all.length - half);
  });
});

/** Every file of a state directory, by name. */
/**
 * A corpus of `groups` groups cut in two: a state (`${prefix}` files) made from its first half by the CLI, the second
 * half's file, and `restore()`, which puts the state back as that first run left it.
 */
function earlierState(seed: number, groups: number, prefix: string) {
  const all = lines(seed, groups);
  const half = all.length >> 1;
  const a = write(`${prefix}a.jsonl`, all.slice(0, half));
  const b = write(`${prefix}b.jsonl`, all.slice(half));
  const state = path.join(dir, `state-${prefix}`);
  expect(runCli(['dedup', '--jsonl', a, '--state', state]).code).toBe(0);
  const before = snapshot(state);
  const restore = () => {
    fs.rmSync(state, { recursive: true, force: true });
    fs.mkdirSync(state);
    for (const [name, bytes] of Object.entries(before)) fs.writeFileSync(path.join(state, name), bytes);
  };
  return { all, half, b, state, restore };
}

function snapshot(state: string): Record<string, Buffer> {
  return Object.fromEntries(
    fs
      .readdirSync(state)
      .sort()
      .map((f) => [f, fs.readFileSync(path.join(state, f))]),
  );
}
