// The command line's input handling (issue 12, item 5): symbolic links and loops, FIFOs, binary files, missing
// inputs, runs where nothing was read, JSON ids, CSV injection, escaped names, the document size limit, and
// inputs larger than a JavaScript string can hold. Expected fingerprints come from the library (simhash).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simhash, toHex } from '../../src/index.js';
import { runCli } from './run.js';

const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma'.split(
  ' ',
);
function text(seed: number, n = 200): string {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(words[x % words.length]!);
  }
  return out.join(' ');
}
const hex = (t: string | Uint8Array) => toHex(simhash(t));
const lines = (s: string) => s.split('\n').filter((l) => l !== '');

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('simhash-wasm CLI inputs', () => {
  let dir: string;
  const base = text(1);
  const variant = base.replace(/^(\S+ \S+ \S+) \S+/, '$1 changed');
  const other = text(2);

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-cli-inputs-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function folder(name: string, files: Record<string, string | Uint8Array>): string {
    const at = path.join(dir, name);
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(at, file)), { recursive: true });
      fs.writeFileSync(path.join(at, file), content);
    }
    return at;
  }

  it('does not follow directory symlinks by default; with --follow-symlinks reads each directory once', () => {
    const tree = folder('loop', { 'a.txt': base, 'b.txt': variant, 'sub/c.txt': other });
    fs.symlinkSync('..', path.join(tree, 'sub/up'));
    fs.symlinkSync('.', path.join(tree, 'self'));
    // A link to a file is the same file: read once, under the first path met, with a note.
    fs.symlinkSync(path.join(tree, 'a.txt'), path.join(tree, 'link-to-a.txt'));
    const expected = [
      `${hex(base)}\t${path.join(tree, 'a.txt')}`,
      `${hex(variant)}\t${path.join(tree, 'b.txt')}`,
      `${hex(other)}\t${path.join(tree, 'sub/c.txt')}`,
    ];
    const plain = runCli(['hash', tree], { timeout: 30_000 });
    expect(plain.code).toBe(0);
    expect(lines(plain.stdout)).toEqual(expected);
    expect(plain.stderr).toContain(`${path.join(tree, 'self')}: symbolic link to a directory, not followed`);
    expect(plain.stderr).toContain(`${path.join(tree, 'sub/up')}: symbolic link to a directory, not followed`);
    expect(plain.stderr).toContain(
      `${path.join(tree, 'link-to-a.txt')}: the same file as ${path.join(tree, 'a.txt')}, read once`,
    );
    const followed = runCli(['hash', '--follow-symlinks', tree], { timeout: 30_000 });
    expect(followed.code).toBe(0);
    expect(lines(followed.stdout)).toEqual(expected);
    expect(followed.stderr).toContain(`${path.join(tree, 'self')}: directory already read`);
    expect(followed.stderr).toContain(`${path.join(tree, 'sub/up')}: directory already read`);
  });

  it('skips a FIFO inside a directory with a warning instead of blocking; reads one named on the command line', async () => {
    const tree = folder('fifo', { 'x.txt': base });
    const fifo = path.join(tree, 'pipe');
    const mkfifo = spawn('mkfifo', [fifo]);
    await new Promise((resolve) => mkfifo.on('exit', resolve));
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
    const r = runCli(['hash', tree], { timeout: 30_000 });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([`${hex(base)}\t${path.join(tree, 'x.txt')}`]);
    expect(r.stderr).toContain(`${fifo}: a FIFO, not read`);
    // Named explicitly, it is read like standard input.
    const writer = spawn('sh', ['-c', `printf '%s' "${other}" > "${fifo}"`]);
    const named = runCli(['hash', fifo], { timeout: 30_000 });
    await new Promise((resolve) => writer.on('exit', resolve));
    expect(named.code).toBe(0);
    expect(named.stdout).toBe(`${hex(other)}\t${fifo}\n`);
  });

  it('skips files that look binary (NUL in the first 8 KB) unless --binary', () => {
    const binary = new Uint8Array(9000).fill(0x61);
    binary[8191] = 0; // the last byte sniffed
    const late = new Uint8Array(9000).fill(0x62);
    late[8192] = 0; // just past the sniffed bytes: text
    const tree = folder('binary', { 'bin.dat': binary, 'late.dat': late, 'ok.txt': base });
    const r = runCli(['hash', tree]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      `${hex(late)}\t${path.join(tree, 'late.dat')}`,
      `${hex(base)}\t${path.join(tree, 'ok.txt')}`,
    ]);
    expect(r.stderr).toContain(`${path.join(tree, 'bin.dat')}: looks binary (a NUL byte in its first 8 KB)`);
    const all = runCli(['hash', '--binary', tree]);
    expect(lines(all.stdout)[0]).toBe(`${hex(binary)}\t${path.join(tree, 'bin.dat')}`);
    expect(all.stderr).toBe('');
    // Standard input is sniffed too.
    const stdin = runCli(['hash'], { input: 'abc\0def' });
    expect(stdin.code).toBe(1);
    expect(stdin.stderr).toContain('standard input: looks binary');
  });

  it('exits 1 with a clear message when no document was read', () => {
    const missing = runCli(['dedup', '/nonexistent']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('/nonexistent: cannot read (ENOENT)');
    expect(missing.stderr).toContain('simhash-wasm: no documents were read (1 skipped');
    const file = path.join(dir, 'all-bad.jsonl');
    fs.writeFileSync(file, '{"id": 1}\nnot json\n\n{"id": 2, "text": 5}\n');
    const skipped = runCli(['dedup', '--jsonl', file]);
    expect(skipped.code).toBe(1);
    expect(skipped.stderr).toContain(`${file}:2: invalid JSON`);
    expect(skipped.stderr).toMatch(/no documents were read \(3 skipped/);
    // --quiet keeps the messages off stderr: the last one says what they were itself.
    const quiet = runCli(['dedup', '--jsonl', '-q', file]);
    expect(quiet.code).toBe(1);
    expect(quiet.stderr).toBe(
      'simhash-wasm: no documents were read (3 skipped: 2 records without the text field; 1 invalid JSON lines; run without --quiet to see them)\n',
    );
    const empty = runCli(['hash', '--lines'], { input: '\n  \n\t\n' });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('no documents were read');
    // An empty file is still one (empty) document.
    const emptyFile = path.join(dir, 'empty.txt');
    fs.writeFileSync(emptyFile, '');
    expect(runCli(['hash', emptyFile]).stdout).toBe(`${hex('')}\t${emptyFile}\n`);
  });

  it('prints JSON Lines ids as their JSON values (5 and "5" differ) and reports a repeated id', () => {
    const file = path.join(dir, 'ids.jsonl');
    fs.writeFileSync(
      file,
      [
        { id: 5, text: base },
        { id: '5', text: base },
        { id: 5, text: other },
        { id: 'a\nb', text: variant },
        { text: other },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const r = runCli(['dedup', '--jsonl', '--k', '0', file]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).map((l) => JSON.parse(l))).toEqual([
      { cluster: 5, size: 2, members: [5, '5'] },
      { cluster: 5, size: 2, members: [5, `${file}:5`] },
    ]);
    expect(r.stderr).toContain(`${file}:3: id 5 repeats the id of ${file}:1`);
    expect(r.stderr).not.toContain(':2: id');
    const hashed = runCli(['hash', '--jsonl', file]);
    expect(lines(hashed.stdout)).toEqual([
      `${hex(base)}\t5`,
      `${hex(base)}\t"5"`,
      `${hex(other)}\t5`,
      `${hex(variant)}\t"a\\nb"`,
      `${hex(other)}\t${file}:5`,
    ]);
    const csv = runCli(['dedup', '--jsonl', '--k', '0', '--format', 'csv', file]);
    expect(lines(csv.stdout)).toEqual(['document,cluster,size', '5,5,2', '"""5""",5,2', '5,5,2', `${file}:5,5,2`]);
  });

  it('neutralises CSV cells that a spreadsheet would run as formulas', () => {
    const tree = folder('csv', { '=SUM(A1).txt': base, '+cmd.txt': base, '@x.txt': base, 'plain.txt': base });
    const r = runCli(['dedup', '--format', 'csv', '--k', '0', '.'], { cwd: tree });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'document,cluster,size',
      "'+cmd.txt,'+cmd.txt,4",
      "'=SUM(A1).txt,'+cmd.txt,4",
      "'@x.txt,'+cmd.txt,4",
      "plain.txt,'+cmd.txt,4",
    ]);
    const stdin = runCli(['dedup', '--lines', '--format', 'csv', '--pairs', '--k', '0'], {
      input: `${base}\n${base}\n`,
    });
    expect(lines(stdin.stdout)).toEqual(['a,b,distance,jaccard', "'-:1,'-:2,0,1"]);
  });

  it('escapes file names with control characters in text output, one line per document', () => {
    const tree = folder('names', { 'a\nb.txt': base, 'tab\there.txt': other, '"quoted.txt': variant });
    const r = runCli(['hash', '.'], { cwd: tree });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      `${hex(variant)}\t"\\"quoted.txt"`,
      `${hex(base)}\t"a\\nb.txt"`,
      `${hex(other)}\t"tab\\there.txt"`,
      '',
    ]);
    // JSON output needs no escaping of its own: the names are JSON strings.
    const json = runCli(['dedup', '--k', '0', '--all', '.'], { cwd: tree });
    expect(lines(json.stdout).map((l) => JSON.parse(l).cluster)).toEqual(['"quoted.txt', 'a\nb.txt', 'tab\there.txt']);
  });

  it('reads standard input through a spool for verification, with the same clusters on 1 and 2 threads', () => {
    const input = [base, other, variant, '', `${base} extra`, other].join('\n');
    const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
    const env = { ...process.env, TMPDIR: tmp };
    const outputs = ['1', '2'].map((threads) => runCli(['dedup', '--lines', '--threads', threads], { input, env }));
    expect(fs.readdirSync(tmp).filter((f) => f.startsWith('simhash-wasm-'))).toEqual([]); // the spool is gone
    for (const r of outputs) {
      expect(r.code).toBe(0);
      expect(lines(r.stdout).map((l) => JSON.parse(l))).toEqual([
        { cluster: '-:1', size: 3, members: ['-:1', '-:3', '-:5'] },
        { cluster: '-:2', size: 2, members: ['-:2', '-:6'] },
      ]);
    }
    expect(outputs[0]!.stdout).toBe(outputs[1]!.stdout);
    expect(runCli(['dedup', '--threads', '0'], { input }).code).toBe(2);
  });
});

// Heavy: hundreds of megabytes through the CLI (each under ~30 s here). SIMHASH_SKIP_HEAVY=1 skips them.
describe.skipIf(process.env.SIMHASH_BUILD === 'scalar' || process.env.SIMHASH_SKIP_HEAVY === '1')(
  'simhash-wasm CLI inputs [heavy]',
  () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-cli-heavy-'));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('hashes a --lines file over 512 MB (more than one JavaScript string holds) line by line', () => {
      const file = path.join(dir, 'big.txt');
      const pool = Array.from({ length: 997 }, (_, i) => text(i + 10, 150));
      const fd = fs.openSync(file, 'w');
      let bytes = 0;
      let n = 0;
      while (bytes <= 540e6) {
        const block: string[] = [];
        for (let j = 0; j < 8192; j++, n++) block.push(`${n} ${pool[n % pool.length]}`);
        bytes += fs.writeSync(fd, block.join('\n') + '\n');
      }
      fs.closeSync(fd);
      expect(fs.statSync(file).size).toBeGreaterThan(0x1fffffe8);
      // The whitespace tokenizer is the fastest: the test is about reading, not about hashing.
      const r = runCli(['hash', '--lines', '--threads', '2', '--tokenizer', 'whitespace', file], { timeout: 120_000 });
      fs.rmSync(file);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = lines(r.stdout);
      expect(out).toHaveLength(n);
      for (const i of [0, 1, 4096, 777_777 % n, n - 1])
        expect(out[i], `line ${i + 1}`).toBe(
          `${toHex(simhash(`${i} ${pool[i % pool.length]}`, { tokenizer: 'whitespace' }))}\t${file}:${i + 1}`,
        );
    });

    it('stops a document at the 1 GiB limit (hash --binary /dev/zero) and skips /dev/zero as binary otherwise', () => {
      const binary = runCli(['hash', '/dev/zero'], { timeout: 30_000 });
      expect(binary.code).toBe(1);
      expect(binary.stderr).toContain('/dev/zero: looks binary');
      const capped = runCli(['hash', '--binary', '/dev/zero'], { timeout: 60_000 });
      expect(capped.code).toBe(1);
      expect(capped.stderr).toContain('/dev/zero: more than the 1 GiB limit of one document');
      expect(capped.stderr).toContain('no documents were read (1 skipped');
      const line = runCli(['hash', '--binary', '--lines', '/dev/zero'], { timeout: 60_000 });
      expect(line.code).toBe(1);
      expect(line.stderr).toContain('/dev/zero:1: a line longer than the 1 GiB limit of one document (the rest');
    });
  },
);
