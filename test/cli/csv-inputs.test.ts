// CSV and TSV inputs with a header row (--csv / --tsv, --field and --id-field naming columns): fixtures written by
// this test's own RFC 4180 writer (quoted fields holding commas, doubled quotes and newlines; CRLF row ends; a
// byte-order mark), the texts checked against what the library's dedup() finds on the same texts, and the kept,
// removed and annotated rows checked byte for byte against the rows written.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dedup } from '../../src/dedup/dedup.js';
import { init } from '../../src/runtime/wasm.js';
import { rng } from '../reference.js';
import { runCli } from './run.js';

let dir: string;
beforeAll(async () => {
  await init();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-csv-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const quote = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

interface Table {
  file: string;
  header: string;
  /** Each data row's bytes as written, without the final "\n" (a "\r" before it stays). */
  rows: string[];
  texts: string[];
  ids: string[];
}

/** Seeded rows (id, text, note) of near-duplicate groups, texts with the characters CSV must quote. */
function table(name: string, delimiter: ',' | '\t', seed: number, crlf: boolean): Table {
  const next = rng(seed);
  const words = Array.from({ length: 800 }, (_, i) => `mot${i.toString(36)}`);
  const pick = () => words[Math.floor(next() * words.length)]!;
  const texts: string[] = [];
  for (let g = 0; g < 60; g++) {
    const base = Array.from({ length: 30 }, pick);
    if (delimiter === ',') base.splice(5, 0, 'a, "quoted"\nline');
    const copies = 1 + Math.floor(next() * 4);
    for (let c = 0; c < copies; c++) {
      const t = base.slice();
      if (c > 0) t[10 + Math.floor(next() * 10)] = pick();
      texts.push(t.join(' '));
    }
  }
  const ids = texts.map((_, i) => `r${i}`);
  const end = crlf ? '\r' : '';
  const cellOf = (v: string) => (delimiter === ',' ? quote(v) : v);
  const header = ['id', 'text', 'note'].join(delimiter) + end;
  const rows = texts.map((t, i) => [ids[i]!, cellOf(t), cellOf(`n${i}`)].join(delimiter) + end);
  const file = path.join(dir, name);
  fs.writeFileSync(file, `\ufeff${[header, ...rows].join('\n')}\n`);
  return { file, header, rows, texts, ids };
}

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('CSV and TSV inputs', () => {
  for (const [kind, delimiter, crlf] of [
    ['csv', ',', true],
    ['tsv', '\t', false],
  ] as const) {
    it(`--${kind}: the kept rows byte for byte, after the header row`, () => {
      const t = table(`t.${kind}`, delimiter, 5, crlf);
      const r = runCli(['dedup', `--${kind}`, t.file, '--output', '-']);
      expect(r.code, r.stderr).toBe(0);
      const lib = dedup(t.texts);
      const kept = t.rows.filter((_, i) => lib.duplicateOf[i] === -1);
      expect(kept.length).toBeLessThan(t.rows.length * 0.8);
      // The file's byte order mark goes out with its header row.
      expect(r.stdout).toBe(`\ufeff${[t.header, ...kept].map((row) => `${row}\n`).join('')}`);
    });

    it(`--${kind}: removed and annotated rows carry the cluster and the kept row's id`, () => {
      const t = table(`a.${kind}`, delimiter, 6, crlf);
      const lib = dedup(t.texts);
      const end = crlf ? '\r' : '';
      const bare = (row: string) => row.replace(/\r$/, '');
      const annotated = (i: number) =>
        `${bare(t.rows[i]!)}${delimiter}${t.ids[lib.clusterOf[i]!]}${delimiter}${lib.duplicateOf[i] === -1 ? '' : t.ids[lib.duplicateOf[i]!]}${end}\n`;
      const head = `\ufeff${bare(t.header)}${delimiter}cluster${delimiter}duplicate_of${end}\n`;
      const removed = runCli(['dedup', `--${kind}`, t.file, '--removed', '-']);
      expect(removed.code, removed.stderr).toBe(0);
      const dropped = t.rows.map((_, i) => i).filter((i) => lib.duplicateOf[i] !== -1);
      expect(removed.stdout).toBe(head + dropped.map(annotated).join(''));
      const all = runCli(['dedup', `--${kind}`, t.file, '--output', '-', '--annotate']);
      expect(all.stdout).toBe(head + t.rows.map((_, i) => annotated(i)).join(''));
    });
  }

  it('--field and --id-field name the columns; clusters are named by the id column', () => {
    const file = path.join(dir, 'named.csv');
    const body = 'the same words in two rows of this little table, enough for several shingles';
    fs.writeFileSync(file, `key,body\nk1,"${body}"\nk2,"${body}"\nk3,something else entirely different here\n`);
    const r = runCli(['dedup', '--csv', file, '--field', 'body', '--id-field', 'key']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"cluster":"k1","size":2,"members":["k1","k2"]}\n');
  });

  it('a missing text column, a short row and an unclosed quote are reported', () => {
    const noColumn = path.join(dir, 'no-column.csv');
    fs.writeFileSync(noColumn, 'id,body\n1,hello\n');
    const r1 = runCli(['dedup', '--csv', noColumn]);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toMatch(/no column "text" in its header row \("id", "body"\)/);
    const broken = path.join(dir, 'broken.csv');
    fs.writeFileSync(broken, 'id,text\n1,fine row here\n2\n3,"never closed\n');
    const r2 = runCli(['dedup', '--csv', broken, '--all']);
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stderr).toMatch(/broken\.csv:3: 1 fields, no column "text"/);
    expect(r2.stderr).toMatch(/broken\.csv:4: a quoted field is not closed before the end of the input/);
    expect(r2.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('inputs with different header rows cannot share one output', () => {
    const a = path.join(dir, 'h1.csv');
    const b = path.join(dir, 'h2.csv');
    fs.writeFileSync(a, 'id,text\n1,one two three four\n');
    fs.writeFileSync(b, 'text,id\nfive six seven eight,2\n');
    const out = path.join(dir, 'h.out');
    const r = runCli(['dedup', '--csv', a, b, '--output', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/header row differs from the first input's/);
    expect(fs.existsSync(out)).toBe(false);
  });
});
