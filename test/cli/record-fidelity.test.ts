// What --output, --removed and --annotate make of records that are not plain documents: numeric ids past 2^53,
// CSV rows with more or fewer fields than their header, records without a text, inputs that already have the
// annotation columns, byte order marks, the unit --keep longest measures, and names that promise what is not done
// (--id-field naming no column, --output kept.jsonl.gz). CSV outputs are read back with Python's csv module, and
// JSON ids with Python's json module (exact integers), readers independent of the CLI's own.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-fidelity-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const TEXT = 'the quick brown fox jumps over the lazy dog and runs far away into the green woods';
const OTHER = 'an unrelated sentence about the weather in the mountains during a long cold winter';

function file(name: string, content: string | Buffer): string {
  const at = path.join(dir, name);
  fs.writeFileSync(at, content);
  return at;
}

/** Runs Python on `script` with `input` on stdin; its stdout. */
function python(script: string, input: string): string {
  const r = spawnSync('python3', ['-c', script], { input, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** CSV text as Python's csv.DictReader reads it: one object per row, keyed by the header's names. */
function csvRows(text: string): Array<Record<string, string | null>> {
  const script =
    'import csv, json, sys\n' +
    'rows = list(csv.reader(sys.stdin))\n' +
    'head = rows[0]\n' +
    'print(json.dumps([dict(zip(head, r), _fields=len(r)) for r in rows[1:]]))';
  return JSON.parse(python(script, text));
}

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('records as read, written back', () => {
  it('numeric ids past 2^53 keep their characters: no false repeats, duplicate_of names a real record', () => {
    const a = '1234567890123456789';
    const b = '1234567890123456788';
    // The first line goes through the WebAssembly reader; the nested id (a dotted --id-field) through JSON.parse.
    const flat = file('big.jsonl', `{"id":${a},"text":"${TEXT}"}\n{"id":${b},"text":"${TEXT}"}\n`);
    const nested = file('big-nested.jsonl', `{"m":{"id":${a}},"text":"${TEXT}"}\n{"m":{"id":${b}},"text":"${TEXT}"}\n`);
    for (const [input, idField] of [
      [flat, 'id'],
      [nested, 'm.id'],
    ] as const) {
      const listed = runCli(['dedup', '--jsonl', input, '--id-field', idField, '--all']);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).not.toMatch(/repeats/);
      expect(listed.stdout).toBe(`{"cluster":${a},"size":2,"members":[${a},${b}]}\n`);
      const removed = runCli(['dedup', '--jsonl', input, '--id-field', idField, '--removed', '-']);
      expect(removed.code, removed.stderr).toBe(0);
      if (hasPython) {
        // Python's json reads integers exactly.
        const got = python(
          'import json, sys\nr = json.loads(sys.stdin.read())\nprint(r["cluster"], r["duplicate_of"])',
          removed.stdout,
        );
        expect(got.trim()).toBe(`${a} ${a}`);
      }
    }
  });

  it.skipIf(!hasPython)('CSV: a short row is padded before the annotation columns; a long row is reported', () => {
    const input = file('ragged.csv', `id,text,extra\n1,${TEXT},x\n2,${TEXT}\n3,${OTHER},y,z\n4,${OTHER} again,w\n5\n`);
    const r = runCli(['dedup', '--csv', input, '--output', '-', '--annotate']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${input}:4: 4 fields, more than the 3 columns of its header row`);
    const rows = csvRows(r.stdout);
    expect(rows.map((x) => [x.id, x.extra, x.cluster, x.duplicate_of, x._fields])).toEqual([
      ['1', 'x', '1', '', 5],
      ['2', '', '1', '1', 5],
      ['4', 'w', '4', '', 5],
      ['5', '', '', '', 5],
    ]);
    // Each row's own bytes stay: the short row only gains the empty cells.
    expect(r.stdout.split('\n')[2]).toBe(`2,${TEXT},,1,1`);
    const strict = runCli(['dedup', '--csv', input, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(`${input}:4: 4 fields, more than the 3 columns of its header row`);
  });

  it('records without a text are annotated with nulls and passed through to --output', () => {
    const lines = [
      `{"id":"a","text":"${TEXT}"}`,
      '{"id":"b","text":null}',
      '{"id":"c"}',
      `{"id":"d","text":"${TEXT}"}`,
      `{"id":"e","text":"${OTHER}"}`,
    ];
    const input = file('no-text.jsonl', `${lines.join('\n')}\n`);
    const annotated = runCli(['dedup', '--jsonl', input, '--output', '-', '--annotate']);
    expect(annotated.code, annotated.stderr).toBe(0);
    const got = annotated.stdout.split('\n').slice(0, -1);
    expect(got).toEqual([
      `{"id":"a","text":"${TEXT}","cluster":"a","duplicate_of":null}`,
      '{"id":"b","text":null,"cluster":null,"duplicate_of":null}',
      '{"id":"c","cluster":null,"duplicate_of":null}',
      `{"id":"d","text":"${TEXT}","cluster":"a","duplicate_of":"a"}`,
      `{"id":"e","text":"${OTHER}","cluster":"e","duplicate_of":null}`,
    ]);
    const kept = path.join(dir, 'no-text.kept');
    const removed = path.join(dir, 'no-text.removed');
    const split = runCli(['dedup', '--jsonl', input, '--output', kept, '--removed', removed]);
    expect(split.code, split.stderr).toBe(0);
    expect(fs.readFileSync(kept, 'utf8')).toBe(`${[lines[0], lines[1], lines[2], lines[4]].join('\n')}\n`);
    expect(fs.readFileSync(removed, 'utf8')).toBe(`{"id":"d","text":"${TEXT}","cluster":"a","duplicate_of":"a"}\n`);
    expect(split.stderr).toMatch(/kept 2 of 3 documents .*removed 1 .*; 2 records without a text passed through/);

    // A CSV row too short to hold the text column: the same, its missing cells padded.
    const csv = file('no-text.csv', `id,text,note\n1,${TEXT},n\n2\n3,${TEXT},m\n`);
    const rows = runCli(['dedup', '--csv', csv, '--output', '-', '--annotate']);
    expect(rows.code, rows.stderr).toBe(0);
    expect(rows.stdout).toBe(`id,text,note,cluster,duplicate_of\n1,${TEXT},n,1,\n2,,,,\n3,${TEXT},m,1,1\n`);
    const keptRows = runCli(['dedup', '--csv', csv, '--output', '-']);
    expect(keptRows.stdout).toBe(`id,text,note\n1,${TEXT},n\n2\n`);
  });

  it('refuses to add a cluster or duplicate_of column a CSV has already, writing nothing', () => {
    for (const column of ['cluster', 'duplicate_of']) {
      const input = file(`has-${column}.csv`, `id,text,${column}\n1,${TEXT},old\n2,${TEXT},old\n`);
      const out = path.join(dir, `has-${column}.out`);
      for (const args of [
        ['--output', out, '--annotate'],
        ['--removed', out],
      ]) {
        const r = runCli(['dedup', '--csv', input, ...args]);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr).toContain(`${input}: its header row has a column "${column}" already`);
        expect(fs.existsSync(out)).toBe(false);
      }
      // Without annotations there is nothing to repeat.
      expect(runCli(['dedup', '--csv', input, '--output', '-']).code).toBe(0);
    }
  });

  it('a byte order mark stays with the first record when it is written (JSON Lines, --lines)', () => {
    const bom = '\ufeff';
    const a = `{"id":"a","text":"${TEXT}"}`;
    const b = `{"id":"b","text":"${TEXT} now"}`;
    const jsonl = file('bom.jsonl', `${bom}${a}\n${b}\n`);
    const kept = runCli(['dedup', '--jsonl', jsonl, '--output', '-']);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout).toBe(`${bom}${a}\n`);
    // The id is read without the mark.
    expect(runCli(['dedup', '--jsonl', jsonl]).stdout).toBe('{"cluster":"a","size":2,"members":["a","b"]}\n');
    // The record that begins with it removed: it takes its mark to --removed, and --output has none.
    const other = path.join(dir, 'bom.removed');
    const later = runCli(['dedup', '--jsonl', jsonl, '--output', '-', '--removed', other, '--keep', 'longest']);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout).toBe(`${b}\n`);
    expect(fs.readFileSync(other, 'utf8')).toBe(`${bom}${a.slice(0, -1)},"cluster":"a","duplicate_of":"b"}\n`);
    const annotated = runCli(['dedup', '--jsonl', jsonl, '--output', '-', '--annotate']);
    expect(annotated.stdout.startsWith(`${bom}{"id":"a"`)).toBe(true);
    const plain = file('bom.txt', `${bom}${TEXT}\n${OTHER}\n${TEXT}\n`);
    const lines = runCli(['dedup', '--lines', plain, '--output', '-']);
    expect(lines.stdout).toBe(`${bom}${TEXT}\n${OTHER}\n`);
  });

  it('--keep longest measures UTF-8 bytes of the text in every format', () => {
    // 6 ASCII letters against 5 two-byte letters: longer in bytes, shorter in UTF-16 units.
    const ascii = `${TEXT} eeeeee`;
    const accented = `${TEXT} ééééé`;
    expect(Buffer.byteLength(accented)).toBeGreaterThan(Buffer.byteLength(ascii));
    expect(accented.length).toBeLessThan(ascii.length);
    const escaped = accented.replace(/é/g, '\\u00e9');
    const inputs: Array<[string[], string]> = [
      [['--lines', file('keep.txt', `${ascii}\n${accented}\n`)], `${accented}\n`],
      [
        ['--jsonl', file('keep.jsonl', `{"id":"1","text":"${ascii}"}\n{"id":"2","text":"${accented}"}\n`)],
        `{"id":"2","text":"${accented}"}\n`,
      ],
      // Escapes send the line to JSON.parse rather than the WebAssembly reader.
      [
        ['--jsonl', file('keep-escaped.jsonl', `{"id":"1","text":"${ascii}"}\n{"id":"2","text":"${escaped}"}\n`)],
        `{"id":"2","text":"${escaped}"}\n`,
      ],
      [['--csv', file('keep.csv', `id,text\n1,${ascii}\n2,${accented}\n`)], `id,text\n2,${accented}\n`],
    ];
    for (const [args, want] of inputs) {
      const r = runCli(['dedup', ...args, '--keep', 'longest', '--output', '-']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, args.join(' ')).toBe(want);
      const shortest = runCli(['dedup', ...args, '--keep', 'shortest', '--output', '-']);
      expect(shortest.stdout, args.join(' ')).not.toContain('é');
    }
  });

  it('--id-field naming no column of a CSV header is reported with the columns there', () => {
    const input = file('ids.csv', `key,text\nk1,${TEXT}\nk2,${TEXT}\n`);
    const r = runCli(['dedup', '--csv', input, '--id-field', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${input}: no column "nope" in its header row ("key", "text")`);
    expect(r.stderr).toContain('--id-field names the id column');
    // The default "id", absent, still falls back to FILE:LINE names.
    const fallback = runCli(['dedup', '--csv', input]);
    expect(fallback.code, fallback.stderr).toBe(0);
    expect(JSON.parse(fallback.stdout).members).toEqual([`${input}:2`, `${input}:3`]);
  });

  it('--output / --removed named .gz are gzip: gzip -dc gives the plain output byte for byte', () => {
    const input = file(
      'names.jsonl',
      `{"id":1,"text":"${TEXT}"}\n{"id":2,"text":"${TEXT}"}\n{"id":3,"text":"${OTHER}"}\n`,
    );
    const plain = [path.join(dir, 'kept.jsonl'), path.join(dir, 'removed.jsonl')];
    const packed = [path.join(dir, 'kept.jsonl.gz'), path.join(dir, 'removed.jsonl.GZ')];
    for (const [out, removed] of [plain, packed]) {
      const r = runCli(['dedup', '--jsonl', input, '--output', out!, '--removed', removed!]);
      expect(r.code, r.stderr).toBe(0);
    }
    plain.forEach((p, q) => {
      const unpacked = spawnSync('gzip', ['-dc', packed[q]!]);
      expect(unpacked.status, unpacked.stderr.toString()).toBe(0);
      expect(unpacked.stdout).toEqual(fs.readFileSync(p));
    });
    expect(fs.readFileSync(plain[0]!, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('--output / --removed named .zst are Zstandard where Node can write it (22.15 on), else refused (exit 2)', () => {
    const input = file('zst.jsonl', `{"text":"${TEXT}"}\n{"text":"${TEXT}"}\n{"text":"${OTHER}"}\n`);
    const plain = [path.join(dir, 'zst-kept.jsonl'), path.join(dir, 'zst-removed.jsonl')];
    expect(runCli(['dedup', '--jsonl', input, '--output', plain[0]!, '--removed', plain[1]!]).code).toBe(0);
    const packed = [path.join(dir, 'kept.jsonl.zst'), path.join(dir, 'removed.jsonl.zstd')];
    const r = runCli(['dedup', '--jsonl', input, '--output', packed[0]!, '--removed', packed[1]!]);
    if (typeof (zlib as { zstdCompress?: unknown }).zstdCompress !== 'function') {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `--output ${packed[0]}: writing Zstandard needs Node 22.15 or later (this is Node ${process.version})`,
      );
      for (const p of packed) expect(fs.existsSync(p)).toBe(false);
      return;
    }
    expect(r.code, r.stderr).toBe(0);
    // Read back by Debian's zstd, byte for byte the plain run's files.
    plain.forEach((p, q) => {
      const unpacked = spawnSync('zstd', ['-dc', packed[q]!]);
      expect(unpacked.status, unpacked.stderr.toString()).toBe(0);
      expect(unpacked.stdout).toEqual(fs.readFileSync(p));
    });
  });
});
