// dedup --output / --removed / --keep / --annotate / -0: the deduplicated corpus as users write it. The kept and
// dropped records are checked byte for byte against the input's own lines, chosen by the library's dedup() on
// the same texts (the clusters are not what is tested here: the copying is); a run that fails, is killed, or
// runs out of file size half-way leaves an existing output as it was.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dedup } from '../../src/dedup/dedup.js';
import { init } from '../../src/runtime/wasm.js';
import { rng } from '../reference.js';
import { cliSource as cliPath, root, runCli, tsxLoader } from './run.js';

let dir: string;
beforeAll(async () => {
  await init();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-output-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Seeded JSON Lines records: groups of edited copies, exact copies, unrelated texts, spread over the file. */
function records(seed: number, groups: number): Array<{ id: string; text: string }> {
  const next = rng(seed);
  const vocabulary = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}ö`);
  const word = () => vocabulary[Math.floor(next() * vocabulary.length)]!;
  const out: Array<{ id: string; text: string }> = [];
  for (let g = 0; g < groups; g++) {
    const base = Array.from({ length: 30 + Math.floor(next() * 40) }, word);
    const copies = 1 + Math.floor(next() * 5);
    for (let c = 0; c < copies; c++) {
      const words = base.slice();
      if (c > 0 && next() < 0.7) words[Math.floor(next() * words.length)] = word();
      if (c > 0 && next() < 0.3) words.push(word(), word(), word()); // longer copies, for --keep
      out.push({ id: `g${g}c${c}`, text: words.join(' ') });
    }
  }
  // Shuffle, so that copies lie apart.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

interface Written {
  file: string;
  /** The document lines as written (each record's bytes without its line end). */
  lines: string[];
  texts: string[];
  ids: string[];
}

/** Writes records as JSON Lines with the shapes files have: CRLF ends, spacing, a blank and an invalid line. */
function writeJsonl(name: string, recs: Array<{ id: string; text: string }>, seed: number): Written {
  const next = rng(seed);
  const parts: string[] = [];
  const lines: string[] = [];
  recs.forEach((r, i) => {
    const line = next() < 0.5 ? JSON.stringify(r) : `{ "text" : ${JSON.stringify(r.text)}, "id": "${r.id}" }  `;
    const end = next() < 0.2 ? '\r\n' : '\n';
    lines.push(end === '\r\n' ? `${line}\r` : line);
    parts.push(line + end);
    if (i === 3) parts.push('\n', 'not json at all\n');
  });
  const file = path.join(dir, name);
  // The last record has no line end.
  fs.writeFileSync(file, parts.join('').replace(/\r?\n$/, ''));
  const last = lines.length - 1;
  lines[last] = lines[last]!.replace(/\r$/, '');
  return { file, lines, texts: recs.map((r) => r.text), ids: recs.map((r) => r.id) };
}

const read = (file: string) => fs.readFileSync(file, 'utf8');

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('dedup --output / --removed', () => {
  const w = () => writeJsonl('corpus.jsonl', records(39, 120), 7);

  it('--output keeps the first of each cluster, each record byte for byte, in input order', () => {
    const c = w();
    const out = path.join(dir, 'kept.jsonl');
    const r = runCli(['dedup', '--jsonl', c.file, '--output', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const lib = dedup(c.texts);
    const want = c.lines.filter((_, i) => lib.duplicateOf[i] === -1);
    expect(want.length).toBeLessThan(c.lines.length * 0.7);
    expect(read(out)).toBe(want.map((l) => `${l}\n`).join(''));
    expect(r.stderr).toMatch(new RegExp(`kept ${want.length} of ${c.lines.length} documents`));
  });

  for (const keep of ['first', 'longest', 'shortest'] as const) {
    it(`--removed writes the dropped records with cluster and duplicate_of (--keep ${keep})`, () => {
      const c = w();
      const out = path.join(dir, `kept-${keep}.jsonl`);
      const removed = path.join(dir, `removed-${keep}.jsonl`);
      const r = runCli(['dedup', '--jsonl', c.file, '--output', out, '--removed', removed, '--keep', keep]);
      expect(r.code, r.stderr).toBe(0);
      const lib = dedup(c.texts, { keep });
      expect(read(out)).toBe(
        c.lines
          .filter((_, i) => lib.duplicateOf[i] === -1)
          .map((l) => `${l}\n`)
          .join(''),
      );
      const got = read(removed).split('\n');
      expect(got.pop()).toBe('');
      const dropped = c.lines.map((_, i) => i).filter((i) => lib.duplicateOf[i] !== -1);
      expect(got.length).toBe(dropped.length);
      dropped.forEach((i, q) => {
        const line = got[q]!;
        const added = `,"cluster":"${c.ids[lib.clusterOf[i]!]}","duplicate_of":"${c.ids[lib.duplicateOf[i]!]}"`;
        // The record as it was, with the two fields before its closing brace.
        const close = c.lines[i]!.lastIndexOf('}');
        expect(line).toBe(c.lines[i]!.slice(0, close) + added + c.lines[i]!.slice(close));
        const parsed = JSON.parse(line);
        expect(parsed.text).toBe(c.texts[i]);
      });
    });
  }

  it('--annotate writes every record with its cluster and duplicate_of (null when kept)', () => {
    const c = w();
    const r = runCli(['dedup', '--jsonl', c.file, '--output', '-', '--annotate']);
    expect(r.code, r.stderr).toBe(0);
    const lib = dedup(c.texts);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.length).toBe(c.lines.length);
    lines.forEach((line, i) => {
      const dup = lib.duplicateOf[i]!;
      const v = JSON.parse(line);
      expect(v.cluster).toBe(c.ids[lib.clusterOf[i]!]);
      expect(v.duplicate_of).toBe(dup === -1 ? null : c.ids[dup]);
      expect(v.id).toBe(c.ids[i]);
    });
  });

  it('refuses to annotate a record that has the field already, writing nothing', () => {
    const file = path.join(dir, 'has-cluster.jsonl');
    fs.writeFileSync(file, '{"text":"a b c d e f","cluster":1}\n{"text":"a b c d e f"}\n');
    const out = path.join(dir, 'has-cluster.out');
    const r = runCli(['dedup', '--jsonl', file, '--output', out, '--annotate']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/has a field "cluster" already/);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('--lines from standard input (spooled): the kept lines as they were', () => {
    const lines = [
      'one two three four five six',
      'one two three four five six',
      'seven eight nine ten',
      '  padded line  ',
    ];
    const r = runCli(['dedup', '--lines', '--output', '-'], { input: `${lines.join('\n')}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${[lines[0], lines[2], lines[3]].join('\n')}\n`);
  });

  it('files as documents: --removed lists paths, NUL-terminated with -0; a newline in a path needs -0', () => {
    const d = path.join(dir, 'files');
    fs.mkdirSync(d);
    const body = 'the same text in several files, long enough to have a few shingles';
    fs.writeFileSync(path.join(d, 'a'), body);
    fs.writeFileSync(path.join(d, 'b\nc'), body);
    fs.writeFileSync(path.join(d, 'd'), 'another text that shares nothing with the others at all');
    const nul = runCli(['dedup', d, '--removed', '-', '-0']);
    expect(nul.code, nul.stderr).toBe(0);
    expect(nul.stdout).toBe(`${path.join(d, 'b\nc')}\0`);
    const kept = path.join(dir, 'kept-paths');
    const lines = runCli(['dedup', d, '--output', kept, '--removed', '-']);
    expect(lines.code).toBe(1);
    expect(lines.stderr).toMatch(/a path with a newline cannot be listed one per line: use -0/);
    expect(fs.existsSync(kept)).toBe(false);
  });

  it('usage errors before any input is read', () => {
    const c = w();
    const cases: Array<[string[], RegExp]> = [
      [['--output', '-', '--removed', '-'], /cannot both go to standard output/],
      [['--annotate'], /--annotate writes the corpus: add --output/],
      [['--output', 'x', '--keep', 'last'], /--keep must be one of first, longest, shortest, got "last"/],
      [['--output', c.file], /is an input/],
      [['--output', 'x', '--pairs'], /drop --pairs/],
      [['--removed', 'x', '-0'], /-0 is for paths/],
    ];
    for (const [args, message] of cases) {
      const r = runCli(['dedup', '--jsonl', c.file, ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('a failed run leaves an existing output as it was, and no temporary file', () => {
    const c = w();
    const out = path.join(dir, 'kept-strict.jsonl');
    fs.writeFileSync(out, 'the old output\n');
    // --strict stops at the invalid line, after the output was asked for.
    const r = runCli(['dedup', '--jsonl', '--strict', c.file, '--output', out]);
    expect(r.code).toBe(1);
    expect(read(out)).toBe('the old output\n');
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a write that fails half-way (file size limit) leaves the old output', () => {
    const c = writeJsonl('big.jsonl', records(40, 3000), 8);
    const out = path.join(dir, 'kept-limited.jsonl');
    fs.writeFileSync(out, 'the old output\n');
    // 64 blocks of 512 bytes: the output stops with EFBIG (Node ignores SIGXFSZ) long before its end.
    const r = spawnSync(
      'bash',
      ['-c', `ulimit -f 64; exec "${process.execPath}" --import "${tsxLoader}" "${cliPath}" "$@"`, 'cli'].concat([
        'dedup',
        '--jsonl',
        c.file,
        '--output',
        out,
      ]),
      { encoding: 'utf8', cwd: root },
    );
    expect(fs.statSync(c.file).size).toBeGreaterThan(200 << 10);
    expect(r.status).not.toBe(0);
    expect(read(out)).toBe('the old output\n');
    if (r.status === 1) {
      expect(r.stderr).toMatch(/EFBIG|too large/i);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('.kept-limited'))).toEqual([]);
    }
  });

  it('a run killed at any moment leaves the old output or the whole new one (plain or gzipped), never part of it', async () => {
    const c = writeJsonl('kill.jsonl', records(41, 4000), 9);
    const full = path.join(dir, 'kept-full.jsonl');
    expect(runCli(['dedup', '--jsonl', c.file, '--output', full]).code).toBe(0);
    const complete = read(full);
    const next = rng(5);
    const outcomes = new Set<string>();
    for (let round = 0; round < 8; round++) {
      // Every other round a .gz target, read back by Debian's gzip.
      const gz = round % 2 === 1;
      const out = path.join(dir, gz ? 'kept-killed.jsonl.gz' : 'kept-killed.jsonl');
      const readOut = (file: string): string => {
        const bytes = fs.readFileSync(file);
        if (!gz || bytes.toString() === 'the old output\n') return bytes.toString();
        const unpacked = spawnSync('gzip', ['-dc', file], { maxBuffer: 1 << 28 });
        expect(unpacked.status, unpacked.stderr.toString()).toBe(0);
        return unpacked.stdout.toString();
      };
      fs.writeFileSync(out, 'the old output\n');
      const child = spawn(
        process.execPath,
        ['--import', tsxLoader, cliPath, 'dedup', '--jsonl', c.file, '--output', out],
        {
          cwd: root,
          stdio: 'ignore',
        },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const delay = 200 + Math.floor(next() * 2500);
      await new Promise((resolve) => setTimeout(resolve, delay));
      child.kill('SIGKILL');
      await exited;
      const now = readOut(out);
      expect(now === 'the old output\n' || now === complete, `killed after ${delay} ms`).toBe(true);
      outcomes.add(now === complete ? 'new' : 'old');
    }
    expect(outcomes.has('old')).toBe(true);
  }, 120_000);
});
