// The CLI's manners on first contact: --version, one document per file however many paths lead to it, --quiet and
// the closing count of what was not read, the progress line's rate.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateText } from '../../src/cli/progress.js';
import { MESSAGES_SHOWN } from '../../src/cli/report.js';
import { jsonLines, root, runCli } from './run.js';
import { loadReference, rng } from '../reference.js';
import { refCounts } from '../dedup/jaccard-reference.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-first-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('first contact', () => {
  it('--version and -V print the package version', () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const r = runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it('a symbolic link, a hard link and a repeated argument are one document each, with a note', () => {
    const folder = path.join(dir, 'links');
    fs.mkdirSync(folder);
    const text = 'the full text of a licence that several names point at, long enough for some shingles';
    fs.writeFileSync(path.join(folder, 'GPL-3'), text);
    fs.symlinkSync('GPL-3', path.join(folder, 'GPL'));
    fs.linkSync(path.join(folder, 'GPL-3'), path.join(folder, 'hard'));
    fs.writeFileSync(path.join(folder, 'other'), 'a different text with nothing in common with the licence at all');
    const r = runCli(['dedup', folder, path.join(folder, 'other'), '--all']);
    expect(r.code, r.stderr).toBe(0);
    // Three paths to one file: one document (the first path met, in name order), and no cluster of it with itself.
    const clusters = jsonLines(r.stdout);
    expect(clusters.map((c) => c.members)).toEqual([[path.join(folder, 'GPL')], [path.join(folder, 'other')]]);
    expect(r.stderr).toMatch(/GPL-3: the same file as .*GPL, read once/);
    expect(r.stderr).toMatch(/hard: the same file as .*GPL, read once/);
    expect(r.stderr).toMatch(/other: the same file as .*other, read once/);
    expect(r.stderr).toMatch(/not read or noted: 3 files reached by a second path/);
  });

  it('--quiet prints nothing on stderr for a folder full of skipped files; without it, one closing count', () => {
    const folder = path.join(dir, 'binary');
    fs.mkdirSync(folder);
    for (let i = 0; i < 30; i++) fs.writeFileSync(path.join(folder, `b${i}`), Buffer.from([0, 1, 2, 3]));
    fs.writeFileSync(path.join(folder, 'text'), 'one readable text among binary files, with a few words in it');
    const loud = runCli(['dedup', folder]);
    expect(loud.code).toBe(0);
    expect(loud.stderr.split('\n').filter((l) => l.includes('looks binary'))).toHaveLength(30);
    expect(loud.stderr).toMatch(/not read or noted: 30 binary files\n/);
    const quiet = runCli(['dedup', folder, '--quiet']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toBe(loud.stdout);
    // Errors that stop the run still show.
    const failed = runCli(['dedup', path.join(dir, 'no-such-file'), '-q']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/no documents were read/);
  });

  it('a file named like JSON Lines or CSV but read whole gets a hint; with --jsonl, in a folder or with -q, none', () => {
    const folder = path.join(dir, 'records');
    fs.mkdirSync(folder);
    const corpus = path.join(folder, 'corpus.jsonl');
    const line = (id: string) =>
      JSON.stringify({ id, text: 'the same text of a record, line after line, many words long' });
    fs.writeFileSync(corpus, `${line('a')}\n${line('b')}\n`);
    const hint = /corpus\.jsonl is read as one document \(whole files are documents by default\): add --jsonl/;
    const whole = runCli(['dedup', corpus]);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout).toBe('');
    expect(whole.stderr).toMatch(hint);
    expect(whole.stderr.match(/is read as one document/g)).toHaveLength(1);
    // Named twice: one hint. hash reads its inputs the same way.
    expect(runCli(['dedup', corpus, corpus]).stderr.match(/is read as one document/g)).toHaveLength(1);
    expect(runCli(['hash', corpus]).stderr).toMatch(hint);
    const jsonl = runCli(['dedup', '--jsonl', corpus]);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    expect(JSON.parse(jsonl.stdout).members).toEqual(['a', 'b']);
    expect(jsonl.stderr).not.toMatch(/read as one document/);
    expect(runCli(['dedup', folder]).stderr).not.toMatch(/read as one document/);
    expect(runCli(['dedup', corpus, '-q']).stderr).toBe('');
    const csv = path.join(folder, 'table.CSV.gz');
    fs.writeFileSync(csv, zlib.gzipSync('id,text\na,one text\n'));
    expect(runCli(['dedup', csv]).stderr).toMatch(/table\.CSV\.gz is read as one document/);
    // Many such files named at once (dedup *.csv): one hint that counts them.
    const many = runCli(['dedup', corpus, csv, path.join(folder, 'missing.tsv')]);
    expect(many.stderr.match(/read as one document/g)).toHaveLength(1);
    expect(many.stderr).toMatch(
      /corpus\.jsonl and 1 more such files are read as one document each \(whole files are documents by default\): add --jsonl/,
    );
  });

  it('records without the text field name their fields; past 100 such messages the rest are only counted', () => {
    const good = (id: number) => JSON.stringify({ id, text: 'a record with its text field and enough words to hash' });
    const lines = [good(0)];
    for (let i = 1; i <= 150; i++) lines.push(JSON.stringify({ id: i, body: `the text under another name ${i}` }));
    lines.push('{}', JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, f) => [`f${f}`, f]))), good(153));
    const r = runCli(['dedup', '--jsonl', '-', '--all'], { input: `${lines.join('\n')}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout).flatMap((c) => c.members)).toEqual([0, 153]);
    const shown = r.stderr.split('\n').filter((l) => l.includes('field "text" is missing'));
    expect(shown).toHaveLength(MESSAGES_SHOWN);
    expect(shown[0]).toBe(
      'simhash-wasm: skipped standard input:2: field "text" is missing (its fields: "id", "body"; --field names the text field)',
    );
    expect(r.stderr).toContain(
      'simhash-wasm: further records without the text field are not shown one by one: the closing line counts them all\n',
    );
    expect(r.stderr.match(/further .* not shown/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/not read or noted: 152 records without the text field\n$/);
    // The two past the cap, run alone: no fields, and more fields than are named.
    const odd = runCli(['dedup', '--jsonl', '-'], { input: `${lines.slice(151, 153).join('\n')}\n` });
    expect(odd.stderr).toContain('standard input:1: field "text" is missing (it has no fields)');
    expect(odd.stderr).toContain(
      'standard input:2: field "text" is missing (its fields: "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", … 2 more; --field names the text field)',
    );
    expect(runCli(['dedup', '--jsonl', '-', '-q'], { input: `${lines.join('\n')}\n` }).stderr).toBe('');
  });

  it('hash takes 32-bit fingerprints as the library does', async () => {
    const { init, simhash, toHex } = await import('../../src/index.js');
    await init();
    const text = 'a text hashed at 32 bits by the command line and by the library alike';
    const r = runCli(['hash', '--bits', '32', '-'], { input: text });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${toHex(simhash(text, { bits: 32 }), 32)}\t-\n`);
  });

  it('--field and --id-field take dotted paths into nested JSON objects', () => {
    const body = 'the message body of two mails that say the same thing in the same many words';
    const input = [
      JSON.stringify({ meta: { id: 'm1', body } }),
      JSON.stringify({ meta: { id: 'm2', body } }),
      JSON.stringify({ meta: { id: 'm3', body: 'another message entirely, about something else' } }),
      JSON.stringify({ 'meta.body': 'a field whose own name has a dot wins', meta: { id: 'm4' } }),
      JSON.stringify({ meta: 'not an object' }),
    ].join('\n');
    const r = runCli(['dedup', '--jsonl', '--field', 'meta.body', '--id-field', 'meta.id', '-', '--all'], { input });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout).map((c) => c.members)).toEqual([['m1', 'm2'], ['m3'], ['m4']]);
    expect(r.stderr).toMatch(/standard input:5: field "meta.body" is missing/);
  });

  it('the summary names the inputs as given: standard input, or a folder with the files read from it', () => {
    const piped = runCli(['dedup', '--lines', '--summary'], {
      input: 'one line of words here\nanother line of words\n',
    });
    expect(piped.stdout).toMatch(/^2 documents \(0\.0 MB\) from standard input\n/);
    const folder = path.join(dir, 'named');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'a.bin'), Buffer.from([0, 0, 0]));
    fs.writeFileSync(path.join(folder, 'b.txt'), 'a text with some words');
    fs.writeFileSync(path.join(folder, 'c.txt'), 'another text with other words');
    const r = runCli(['dedup', folder, '--summary', '-q']);
    expect(r.stdout.split('\n')[0]).toBe(`2 documents (0.0 MB) from ${folder} (3 files)`);
  });

  it('pairs carry the Jaccard verification measured, as the plain reference computes it', async () => {
    await loadReference();
    const next = rng(41);
    const words = Array.from({ length: 400 }, (_, i) => `j${i.toString(36)}`);
    const texts: string[] = [];
    for (let g = 0; g < 30; g++) {
      const base = Array.from({ length: 30 }, () => words[Math.floor(next() * words.length)]!);
      for (let c = 0; c < 3; c++) {
        const t = base.slice();
        for (let e = c; e > 0; e--) t[Math.floor(next() * t.length)] = words[Math.floor(next() * words.length)]!;
        texts.push(t.join(' '));
      }
    }
    const input = texts.map((text, i) => JSON.stringify({ id: i, text })).join('\n');
    const r = runCli(['dedup', '--jsonl', '--pairs', '--all-pairs', '-'], { input });
    expect(r.code, r.stderr).toBe(0);
    const pairs = jsonLines(r.stdout);
    expect(pairs.length).toBeGreaterThan(20);
    for (const p of pairs) {
      const [common, union] = refCounts(texts[p.a]!, texts[p.b]!);
      expect(p.jaccard, `${p.a},${p.b}`).toBeCloseTo(common / union, 3);
      expect(p.jaccard).toBeGreaterThanOrEqual(0.6);
    }
    const plain = runCli(['dedup', '--jsonl', '--pairs', '--no-verify', '-'], { input });
    expect(JSON.parse(plain.stdout.split('\n')[0]!)).not.toHaveProperty('jaccard');
  });

  it('the progress line gives MB, the rate and the time left', () => {
    expect(rateText(12.3e6, 119.8e6, 0.1)).toBe('12.3 / 119.8 MB');
    expect(rateText(50e6, 150e6, 2)).toBe('50.0 / 150.0 MB, 25.0 MB/s, 4 s left');
    expect(rateText(1e6, 1e9, 1)).toBe('1.0 / 1000.0 MB, 1.0 MB/s, 17 min left');
  });
});
