// dedup --state DIR: a corpus deduplicated in two runs keeps, of the second run's documents, exactly what one run
// over both keeps (byte for byte in --output); a state made with other options or damaged is refused; a run killed
// at any moment (writing its segment or the manifest included) leaves a state that loads and holds either the
// earlier runs, deciding as before, or this one too; a state.bin (one file, save()'s bytes) is converted by the next
// run.
import { spawn, spawnSync } from 'node:child_process';
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

  it('converts a state.bin (one file, as earlier versions wrote it) and decides as a new state', async () => {
    const all = lines(24, 200);
    const half = all.length >> 1;
    const a = write('va.jsonl', all.slice(0, half));
    const b = write('vb.jsonl', all.slice(half));
    const fresh = path.join(dir, 'state-fresh');
    expect(runCli(['dedup', '--jsonl', a, '--state', fresh]).code).toBe(0);
    const want = runCli(['dedup', '--jsonl', b, '--state', fresh, '--output', '-']);
    // A one-file state of the same documents, labelled as the command line labels them.
    const old = new Deduplicator();
    old.add(
      all.slice(0, half).map((l) => JSON.parse(l).text),
      all.slice(0, half).map((l) => JSON.stringify(JSON.parse(l).id)),
    );
    const legacy = path.join(dir, 'state-file');
    fs.mkdirSync(legacy);
    fs.writeFileSync(path.join(legacy, 'state.bin'), old.save());
    const got = runCli(['dedup', '--jsonl', b, '--state', legacy, '--output', '-']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toBe(want.stdout);
    expect(fs.readdirSync(legacy).sort()).toEqual(['manifest.bin', expect.stringMatching(/^segment-/)]);
    const listed = runCli(['dedup', '--jsonl', b, '--state', legacy]);
    expect(listed.stdout.trim().split('\n')).toHaveLength(all.length - half);
  });

  it('files as documents: a file the state holds is not read again, so never named a duplicate of itself', () => {
    const work = fs.mkdtempSync(path.join(dir, 'files-'));
    const docs = path.join(work, 'docs');
    fs.mkdirSync(docs);
    const same = 'the quick brown fox jumps over the lazy dog today\n';
    for (const f of ['f1.txt', 'f2.txt', 'f3.txt']) fs.writeFileSync(path.join(docs, f), same);
    const run = (...args: string[]) => runCli(['dedup', ...args, '--state', 'st'], { cwd: work });
    // One run over docs/ + docs/ reads each file once: f2 and f3 go, f1 stays (the workflow of xargs -0 rm).
    const first = run('docs', '--removed', '-', '-0');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('docs/f2.txt\0docs/f3.txt\0');
    fs.rmSync(path.join(docs, 'f2.txt'));
    fs.rmSync(path.join(docs, 'f3.txt'));
    fs.writeFileSync(path.join(docs, 'g.txt'), 'a new and entirely different document arrives later\n');
    const second = run('docs', '--removed', '-', '-0');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe('');
    expect(second.stderr).toMatch(
      /kept 1 of 1 new documents, removed 0; 1 files already in the state, skipped; the state holds 4 documents/,
    );
    // Spelled otherwise (an absolute path, a copy under the same name reached through a link to the folder): still
    // the recorded file. A copy of g.txt under a new name is a new document, a duplicate of g.txt.
    fs.symlinkSync('docs', path.join(work, 'link'));
    fs.writeFileSync(path.join(docs, 'h.txt'), fs.readFileSync(path.join(docs, 'g.txt')));
    const third = run(docs, 'link/f1.txt');
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toBe(
      '{"document":"' + path.join(docs, 'h.txt') + '","duplicate_of":"docs/g.txt","in_state":true}\n',
    );
    expect(third.stderr).toMatch(/kept 0 of 1 new documents, removed 1; 2 files already in the state, skipped/);
    // Nothing new at all: a run with empty outputs, not an error, and the state as it was.
    fs.writeFileSync(path.join(work, 'out.txt'), 'OLD\n');
    const saved = snapshot(path.join(work, 'st'));
    const fourth = run('docs', '--output', 'out.txt');
    expect(fourth.code, fourth.stderr).toBe(0);
    expect(fourth.stderr).toMatch(/kept 0 of 0 new documents, removed 0; 3 files already in the state, skipped/);
    expect(fs.readFileSync(path.join(work, 'out.txt'), 'utf8')).toBe('');
    expect(snapshot(path.join(work, 'st'))).toEqual(saved);
  });

  it("records given again are copies of the state's, said so; the state grows as one run over both would", () => {
    const a = write('again.jsonl', [
      JSON.stringify({ id: 'a', text: 'the quick brown fox jumps over the lazy dog' }),
      JSON.stringify({ id: 'b', text: 'another text entirely, with other words' }),
    ]);
    const state = path.join(dir, 'state-again');
    expect(runCli(['dedup', '--jsonl', a, '--state', state]).code).toBe(0);
    const again = runCli(['dedup', '--jsonl', a, '--state', state]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(
      '{"document":"a","duplicate_of":"a","in_state":true}\n{"document":"b","duplicate_of":"b","in_state":true}\n',
    );
    expect(again.stderr).toMatch(/kept 0 of 2 new documents, removed 2; the state holds 4 documents/);
  });

  it('locks the state for the whole run: a second run fails at once, changing nothing; a stale lock is taken over', () => {
    const a = write('lock-a.jsonl', lines(26, 30));
    const b = write('lock-b.jsonl', lines(27, 30));
    const state = path.join(dir, 'state-lock');
    expect(runCli(['dedup', '--jsonl', a, '--state', state]).code).toBe(0);
    expect(fs.readdirSync(state)).not.toContain('lock');
    const saved = snapshot(state);
    const out = path.join(dir, 'lock-out.jsonl');
    fs.writeFileSync(out, 'OLD\n');
    // Held by a live process of this host (this one): refused before anything is read or replaced.
    const lock = path.join(state, 'lock');
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, host: os.hostname() }));
    const busy = runCli(['dedup', '--jsonl', b, '--state', state, '--output', out]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toBe(
      `simhash-wasm: --state ${state}: the state is in use by process ${process.pid} (${lock}): wait for it to finish\n`,
    );
    expect(fs.readFileSync(out, 'utf8')).toBe('OLD\n');
    expect(snapshot(state)).toEqual({ ...saved, lock: fs.readFileSync(lock) });
    // Left by a process that is gone: taken over, said so, and released at the end.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.writeFileSync(lock, JSON.stringify({ pid: gone, host: os.hostname() }));
    const stale = runCli(['dedup', '--jsonl', b, '--state', state, '--output', out]);
    expect(stale.code, stale.stderr).toBe(0);
    expect(stale.stderr).toMatch(new RegExp(`took over the lock of process ${gone}, which is gone`));
    expect(fs.readdirSync(state)).not.toContain('lock');
  });

  it('two runs at once: the second fails while the first holds the lock, and the state holds the first whole', async () => {
    const { all, b, state } = earlierState(28, 300, 'w');
    const other = write('w-other.jsonl', lines(29, 20));
    // The first run reads its documents from a pipe that stays open until the second run is over.
    const child = spawn(
      process.execPath,
      ['--import', tsxLoader, cliSource, 'dedup', '--jsonl', '-', '--state', state],
      {
        cwd: root,
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lock = path.join(state, 'lock');
    for (const until = Date.now() + 30_000; !fs.existsSync(lock); ) {
      if (Date.now() > until) {
        child.kill();
        throw new Error(`the first run took no lock (${lock}) in 30 s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const second = runCli(['dedup', '--jsonl', other, '--state', state]);
    child.stdin.end(fs.readFileSync(b));
    expect(await exited, stderr).toBe(0);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`the state is in use by process ${child.pid} `));
    const loaded = await Deduplicator.open(state);
    loaded.close();
    expect(loaded.count).toBe(all.length);
  }, 120_000);

  it('an unwritable state directory is refused before any work, in one line, with --output left as it was', () => {
    const a = write('ro-a.jsonl', lines(30, 10));
    const b = write('ro-b.jsonl', lines(31, 10));
    const work = fs.mkdtempSync(path.join(dir, 'ro-'));
    fs.chmodSync(dir, 0o755);
    fs.chmodSync(work, 0o777);
    const state = path.join(work, 'st');
    expect(runCli(['dedup', '--jsonl', a, '--state', state]).code).toBe(0);
    fs.chmodSync(state, 0o555);
    for (const f of fs.readdirSync(state)) fs.chmodSync(path.join(state, f), 0o644);
    const out = path.join(work, 'kept.jsonl');
    fs.writeFileSync(out, 'OLD\n');
    fs.chmodSync(out, 0o666);
    fs.chmodSync(b, 0o644);
    const saved = snapshot(state);
    // Root writes anywhere: run as nobody then (setpriv), as the reporter did, where nobody can read this clone
    // (CI's clone sits in a folder only root may enter); else the folder is made immutable (chattr +i), which
    // stops root too, and creating the lock fails with EPERM instead of EACCES.
    const args = ['dedup', '--jsonl', b, '--state', state, '--output', out];
    const asRoot = process.getuid?.() === 0;
    const nobody = ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath];
    const nobodyReads =
      asRoot &&
      spawnSync('setpriv', [...nobody, '-e', `require('fs').accessSync(${JSON.stringify(cliSource)})`]).status === 0;
    const immutable = asRoot && !nobodyReads;
    if (immutable) expect(spawnSync('chattr', ['+i', state]).status).toBe(0);
    let r: ReturnType<typeof spawnSync>;
    try {
      r = nobodyReads
        ? spawnSync('setpriv', [...nobody, '--import', tsxLoader, cliSource, ...args], { cwd: root, encoding: 'utf8' })
        : spawnSync(process.execPath, ['--import', tsxLoader, cliSource, ...args], { cwd: root, encoding: 'utf8' });
    } finally {
      if (immutable) spawnSync('chattr', ['-i', state]);
    }
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe(
      `simhash-wasm: --state ${state}: the state directory cannot be written: its lock ${state}/lock cannot be created (${immutable ? 'EPERM' : 'EACCES'})\n`,
    );
    expect(r.status).toBe(1);
    expect(fs.readFileSync(out, 'utf8')).toBe('OLD\n');
    expect(snapshot(state)).toEqual(saved);
    fs.chmodSync(state, 0o755);
  });

  it('a damaged shingle set, found when its document is in a candidate pair: one line naming the file, exit 1', () => {
    const all = lines(32, 40);
    const a = write('set-a.jsonl', all);
    const state = path.join(dir, 'state-set');
    expect(runCli(['dedup', '--jsonl', a, '--state', state]).code).toBe(0);
    const segment = fs.readdirSync(state).find((f) => f.startsWith('segment-'))!;
    const bytes = fs.readFileSync(path.join(state, segment));
    bytes[bytes.length - 5]! ^= 0x40; // in the last document's set, which ends the file
    fs.writeFileSync(path.join(state, segment), bytes);
    const last = JSON.parse(all[all.length - 1]!) as { text: string };
    const b = write('set-b.jsonl', [JSON.stringify({ id: 'near', text: `${last.text} more` })]);
    const r = runCli(['dedup', '--jsonl', b, '--state', state]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^simhash-wasm: --state ${state}: not a usable Deduplicator state: segment ${segment}: the shingle set of document ${all.length - 1} does not match its checksum \\(damaged\\)\\n$`,
      ),
    );
  });

  it("names the most fundamental option that differs from the state's", () => {
    const a = write('sig.jsonl', lines(33, 10));
    const state = path.join(dir, 'state-sig');
    expect(runCli(['dedup', '--jsonl', a, '--state', state, '--tokenizer', 'segmenter', '--locale', 'en']).code).toBe(
      0,
    );
    const refused = (...args: string[]) => runCli(['dedup', '--jsonl', a, '--state', state, ...args]).stderr;
    expect(refused('--tokenizer', 'segmenter', '--locale', 'en', '--bits', '128')).toMatch(
      /the state was made with 64-bit fingerprints, not 128: /,
    );
    expect(refused('--tokenizer', 'segmenter', '--locale', 'en', '--no-verify')).toMatch(
      /the state was made with verification \(threshold 0\.6\), not without it \(--no-verify\): /,
    );
    expect(refused('--tokenizer', 'segmenter')).toMatch(
      /the state was made with locale = "en", not the default \(none\): /,
    );
    expect(refused('--bits', '128', '--no-verify')).toMatch(/made with 64-bit fingerprints, not 128: /);
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
