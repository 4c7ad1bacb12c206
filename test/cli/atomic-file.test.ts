// Targets that are not plain files, and runs that fail part-way: what AtomicFile and dedup --output / --removed do
// to them. Expected results come from the file system itself (lstat, what a reader process got, the mode of a file
// the test made with Node's defaults), not from the code under test.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AtomicFile, canWriteZstd, outcome } from '../../src/cli/atomic-file.js';
import { cliSource, runCli, tsxLoader } from './run.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-atomic-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let cases = 0;
/** A fresh directory for one test, with an input of two exact duplicates (the first is kept). */
function work(): { d: string; input: string } {
  const d = path.join(dir, `case${cases++}`);
  fs.mkdirSync(d);
  const input = path.join(d, 'in.jsonl');
  fs.writeFileSync(input, `${A}\n${B}\n`);
  return { d, input };
}
const A = '{"id":"a","text":"the quick brown fox jumps over the lazy dog"}';
const B = '{"id":"b","text":"the quick brown fox jumps over the lazy dog"}';

function temps(d: string): string[] {
  return fs.readdirSync(d).filter((f) => f.endsWith('.tmp'));
}

const readers: ChildProcess[] = [];
// A reader still waiting (its FIFO was replaced by a file, say) would outlive the test.
afterEach(() => {
  for (const r of readers.splice(0)) r.kill();
});

/** A process that reads `fifo` to its end; resolves to what it read. */
function reader(fifo: string): Promise<string> {
  const cat = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
  readers.push(cat);
  let got = '';
  cat.stdout.setEncoding('utf8').on('data', (s: string) => {
    got += s;
  });
  return new Promise((resolve, reject) => {
    cat.on('error', reject);
    cat.on('close', () => resolve(got));
  });
}

const isRoot = process.getuid?.() === 0;
const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

describe('AtomicFile on targets that are not regular files', () => {
  it.skipIf(!hasMkfifo)('writes a FIFO in place, to its reader, and leaves it a FIFO', async () => {
    const { d } = work();
    const fifo = path.join(d, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const got = reader(fifo);
    const f = await AtomicFile.open(fifo);
    f.writeString('through the pipe\n');
    await f.sync();
    f.publish();
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(await got).toBe('through the pipe\n');
    expect(temps(d)).toEqual([]);
  });

  it.skipIf(!hasMkfifo)('waits for a FIFO reader that comes later, without blocking the process', async () => {
    const { d } = work();
    const fifo = path.join(d, 'late');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const opening = AtomicFile.open(fifo);
    // The event loop still runs while the FIFO has no reader.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const got = reader(fifo);
    const f = await opening;
    f.writeString('late reader\n');
    await f.sync();
    f.publish();
    expect(await got).toBe('late reader\n');
  });

  it.skipIf(!isRoot)('writes a character device in place (a private /dev/null)', async () => {
    const { d } = work();
    const node = path.join(d, 'mynull');
    expect(spawnSync('mknod', [node, 'c', '1', '3']).status).toBe(0);
    const f = await AtomicFile.open(node);
    f.writeString('gone\n');
    await f.sync();
    f.publish();
    expect(fs.lstatSync(node).isCharacterDevice()).toBe(true);
    expect(temps(d)).toEqual([]);
  });

  it('replaces the file a symbolic link leads to, and keeps the link', async () => {
    const { d } = work();
    const real = path.join(d, 'real.txt');
    const link = path.join(d, 'link.txt');
    fs.writeFileSync(real, 'old\n');
    fs.symlinkSync('real.txt', link);
    const f = await AtomicFile.open(link);
    f.writeString('new\n');
    await f.sync();
    f.publish();
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(link)).toBe('real.txt');
    expect(fs.readFileSync(real, 'utf8')).toBe('new\n');
    expect(temps(d)).toEqual([]);
  });

  it("keeps a replaced file's permission bits; a new file gets Node's default", async () => {
    const { d } = work();
    const secret = path.join(d, 'secret.txt');
    fs.writeFileSync(secret, 'old\n');
    fs.chmodSync(secret, 0o600);
    const f = new AtomicFile(secret);
    f.writeString('new\n');
    await f.sync();
    f.publish();
    expect(fs.readFileSync(secret, 'utf8')).toBe('new\n');
    expect(fs.statSync(secret).mode & 0o7777).toBe(0o600);
    // A new file: the mode writeFileSync gives (0666 less the umask).
    const reference = path.join(d, 'reference.txt');
    fs.writeFileSync(reference, '');
    const fresh = new AtomicFile(path.join(d, 'fresh.txt'));
    await fresh.sync();
    fresh.publish();
    expect(fs.statSync(path.join(d, 'fresh.txt')).mode & 0o7777).toBe(fs.statSync(reference).mode & 0o7777);
  });

  it('a rename that fails after another succeeded leaves no temporary file, and says which was replaced', async () => {
    const { d } = work();
    const first = path.join(d, 'first.txt');
    const second = path.join(d, 'second.txt');
    fs.writeFileSync(first, 'old first\n');
    const a = new AtomicFile(first);
    const b = new AtomicFile(second);
    a.writeString('new first\n');
    b.writeString('new second\n');
    await a.sync();
    await b.sync();
    // A directory (not empty) now where the second file goes: its rename fails.
    fs.mkdirSync(second);
    fs.writeFileSync(path.join(second, 'x'), '');
    a.publish();
    expect(() => b.publish()).toThrow();
    expect(outcome([a, b])).toBe(`${first} was replaced; ${second} was left as before`);
    a.abort();
    b.abort();
    expect(temps(d)).toEqual([]);
    expect(fs.readFileSync(first, 'utf8')).toBe('new first\n');
  });
});

describe('AtomicFile to a name ending .gz', () => {
  it('gzips every buffer as a member: gzip -dc gives back exactly what was written, empty files too', async () => {
    const { d } = work();
    // Past three 8 MiB buffers, written both ways (write here, then append on the thread pool), with text gzip shrinks.
    let seed = 7;
    const words = ['near', 'duplicate', 'simhash', 'pigeon', 'hole', 'block', 'fingerprint', 'é', '\u20ac'];
    const pieces: Buffer[] = [];
    for (let i = 0; i < 50_000; i++) {
      const line: string[] = [];
      for (let w = 0; w < 90; w++) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        line.push(words[seed % words.length]!);
      }
      pieces.push(Buffer.from(`${i} ${line.join(' ')}\n`));
    }
    const expected = Buffer.concat(pieces);
    expect(expected.length).toBeGreaterThan(3 * (8 << 20));
    const target = path.join(d, 'out.txt.gz');
    fs.writeFileSync(target, 'old');
    const f = new AtomicFile(target);
    for (const p of pieces.slice(0, 25_000)) f.write(p);
    await f.append(pieces.slice(25_000));
    await f.sync();
    expect(fs.readFileSync(target, 'utf8')).toBe('old'); // not replaced before publish
    f.publish();
    const packed = fs.readFileSync(target);
    expect(packed.length).toBeLessThan(expected.length / 2);
    const members = spawnSync('gzip', ['-dc', target], { maxBuffer: 1 << 30 });
    expect(members.status, members.stderr.toString()).toBe(0);
    expect(members.stdout.equals(expected)).toBe(true);
    expect(temps(d)).toEqual([]);

    const empty = new AtomicFile(path.join(d, 'empty.gz'));
    await empty.sync();
    empty.publish();
    const none = spawnSync('gzip', ['-dc', path.join(d, 'empty.gz')]);
    expect(none.status, none.stderr.toString()).toBe(0);
    expect(none.stdout.length).toBe(0);
  });

  // Zstandard frames where this Node can write them (22.15 on; scripts/node-current.sh runs this file on one).
  for (const [name, reader] of [
    ['ordered.gz', 'gzip'],
    ['ordered.zst', 'zstd'],
  ] as const)
    it.skipIf(reader === 'zstd' && !canWriteZstd())(
      `writes the ${name} members in order when a later buffer compresses first`,
      async () => {
        const { d } = work();
        // 8 MiB of varied text (slow to compress), then 8 MiB of one byte (fast), then a tail: both full buffers
        // are compressed at once, and the second is done first.
        let seed = 11;
        const text = Buffer.alloc(8 << 20);
        for (let i = 0; i < text.length; i++) {
          seed = (seed * 1103515245 + 12345) >>> 0;
          text[i] = 97 + ((seed >>> 16) % 26);
        }
        const same = Buffer.alloc(8 << 20, 0x7a);
        const tail = Buffer.from('the end\n');
        const target = path.join(d, name);
        const f = new AtomicFile(target);
        await f.append([text, same, tail]);
        await f.sync();
        f.publish();
        const unpacked = spawnSync(reader, ['-dc', target], { maxBuffer: 1 << 26 });
        expect(unpacked.status, unpacked.stderr.toString()).toBe(0);
        expect(unpacked.stdout.equals(Buffer.concat([text, same, tail]))).toBe(true);
      },
    );
});

describe('dedup --output / --removed on special targets and bad paths', () => {
  it.skipIf(!hasMkfifo)('--output FIFO: the reader gets the kept records; the FIFO stays', async () => {
    const { d, input } = work();
    const fifo = path.join(d, 'kept.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const got = reader(fifo);
    const r = runCli(['dedup', '--jsonl', input, '--output', fifo, '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(await got).toBe(`${A}\n`);
    expect(temps(d)).toEqual([]);
  });

  it('--output >(cmd): a process substitution (/dev/fd/N) is written', () => {
    const { d, input } = work();
    const out = path.join(d, 'via-pipe.jsonl');
    const script =
      `"${process.execPath}" --import "${tsxLoader}" "${cliSource}" dedup --jsonl "${input}" -q ` +
      `--output >(cat > "${out}"); code=$?; wait $!; exit $code`;
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(fs.readFileSync(out, 'utf8')).toBe(`${A}\n`);
  });

  it('--output through a symbolic link: the linked file is replaced with its mode kept, the link stays', () => {
    const { d, input } = work();
    const real = path.join(d, 'real.jsonl');
    const link = path.join(d, 'link.jsonl');
    fs.writeFileSync(real, 'old\n');
    fs.chmodSync(real, 0o600);
    fs.symlinkSync('real.jsonl', link);
    const r = runCli(['dedup', '--jsonl', input, '--output', link, '--removed', path.join(d, 'gone.jsonl'), '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe(`${A}\n`);
    expect(fs.statSync(real).mode & 0o7777).toBe(0o600);
    expect(temps(d)).toEqual([]);
  });

  it('a target in a missing directory, or ending in a slash: exit 1 before any work, old files as they were', () => {
    const { d, input } = work();
    const kept = path.join(d, 'kept.jsonl');
    fs.writeFileSync(kept, 'OLD\n');
    const slash = runCli(['dedup', '--jsonl', input, '--output', kept, '--removed', `${path.join(d, 'gone')}/`]);
    expect(slash.code).toBe(1);
    expect(slash.stderr).toMatch(/--removed .*gone\/: ends in a slash/);
    expect(slash.stderr).not.toMatch(/--help/);
    const missing = runCli(['dedup', '--jsonl', input, '--output', kept, '--removed', path.join(d, 'nodir/x')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--removed .*nodir\/x: cannot write in .*nodir: no such directory/);
    expect(fs.readFileSync(kept, 'utf8')).toBe('OLD\n');
    expect(temps(d)).toEqual([]);
    // Before any work: the input is a FIFO nobody writes, so reading it would never end.
    if (hasMkfifo) {
      const fifo = path.join(d, 'never.jsonl');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const r = runCli(['dedup', '--jsonl', fifo, '--output', path.join(d, 'nodir/x')], { timeout: 60_000 });
      expect(r.code).toBe(1);
    }
  });

  it.skipIf(isRoot)('a directory that cannot be written: exit 1 naming it', () => {
    const { d, input } = work();
    const locked = path.join(d, 'locked');
    fs.mkdirSync(locked, 0o555);
    const r = runCli(['dedup', '--jsonl', input, '--output', path.join(locked, 'x')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot write in .*locked: EACCES/);
  });

  it('a target that turns into a directory during the run: a message, old files as they were', async () => {
    const { d } = work();
    const kept = path.join(d, 'kept.jsonl');
    const gone = path.join(d, 'gone.jsonl');
    fs.writeFileSync(kept, 'OLD\n');
    // The input comes through stdin, more than a pipe holds: once it is all taken, the targets were checked and
    // the run is reading; then --removed's target becomes a directory.
    const child = spawn(
      process.execPath,
      ['--import', tsxLoader, cliSource, 'dedup', '--jsonl', '--output', kept, '--removed', gone, '-q'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    const lines = [A, B];
    for (let i = 0; i < 4000; i++) lines.push(`{"id":"u${i}","text":"unique document ${i} with words ${i * 7919}"}`);
    await new Promise<void>((resolve) => child.stdin.write(`${lines.join('\n')}\n`, () => resolve()));
    fs.mkdirSync(gone);
    fs.writeFileSync(path.join(gone, 'x'), '');
    child.stdin.end();
    expect(await done).toBe(1);
    expect(stderr).toMatch(/^simhash-wasm: cannot write .*: is a directory \(nothing was replaced\)\n$/);
    expect(fs.readFileSync(kept, 'utf8')).toBe('OLD\n');
    expect(temps(d)).toEqual([]);
  });
});

describe('standard output that fails', () => {
  const hasFull = fs.existsSync('/dev/full');
  it.skipIf(!hasFull)('a full device: one line and exit 1, for hash and dedup', () => {
    const { input } = work();
    for (const args of [
      ['hash', '--jsonl', input],
      ['dedup', '--jsonl', input],
    ]) {
      const full = fs.openSync('/dev/full', 'w');
      try {
        const r = spawnSync(process.execPath, ['--import', tsxLoader, cliSource, ...args], {
          stdio: ['ignore', full, 'pipe'],
          encoding: 'utf8',
          timeout: 120_000,
        });
        expect(r.status, args.join(' ')).toBe(1);
        expect(r.stderr).toMatch(/^simhash-wasm: cannot write standard output: ENOSPC[^\n]*\n$/);
      } finally {
        fs.closeSync(full);
      }
    }
  });

  it('a reader that leaves early (| head -1): quiet, exit 0', () => {
    const { d } = work();
    const big = path.join(d, 'big.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 20000; i++) lines.push(`{"id":"u${i}","text":"unique document ${i} with words ${i * 7919}"}`);
    fs.writeFileSync(big, `${lines.join('\n')}\n`);
    const script = `"${process.execPath}" --import "${tsxLoader}" "${cliSource}" hash --jsonl "${big}" | head -1 >/dev/null; exit \${PIPESTATUS[0]}`;
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
