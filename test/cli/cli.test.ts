// The CLI as users run it: a subprocess on a temporary directory, asserting stdout, stderr and exit codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hammingDistance, simhash, toHex } from '../../src/index.js';
import { readOriginalVectors } from '../original-vectors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'src/cli/cli.ts');

function run(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    input,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const words =
  'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon'.split(
    ' ',
  );
function text(seed: number, n = 300): string {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(words[x % words.length]!);
  }
  return out.join(' ');
}

// The CLI loads the default (SIMD where available) build itself; running these once is enough.
describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('simhash-wasm CLI', () => {
  let dir: string;
  const base = text(1);
  const variant = base.replace(/^(\S+ \S+ \S+) \S+/, '$1 changed');
  const other = text(2);
  const K = 12;

  beforeAll(() => {
    // The planted documents must be near (≤ K) and far (> K) for the assertions below to mean anything.
    expect(hammingDistance(simhash(base), simhash(variant))).toBeLessThanOrEqual(K);
    expect(hammingDistance(simhash(base), simhash(other))).toBeGreaterThan(K);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-cli-'));
    fs.mkdirSync(path.join(dir, 'docs/sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'docs/a.txt'), base);
    fs.writeFileSync(path.join(dir, 'docs/b.txt'), variant);
    fs.writeFileSync(path.join(dir, 'docs/c.txt'), other);
    fs.writeFileSync(path.join(dir, 'docs/sub/d.txt'), base);
    fs.writeFileSync(
      path.join(dir, 'corpus.jsonl'),
      [
        JSON.stringify({ id: 'one', body: base }),
        JSON.stringify({ id: 'two', body: other }),
        '{"id": "broken", "body": ',
        JSON.stringify({ id: 'nobody' }),
        '',
        JSON.stringify({ id: 'three', body: variant }),
      ].join('\n') + '\n',
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prints help for the tool and every command', () => {
    for (const args of [['--help'], ['dedup', '--help'], ['hash', '--help'], ['help', 'dedup']]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: simhash-wasm/);
    }
    expect(run(['dedup', '--help']).stdout).toMatch(/--k N/);
    expect(run(['hash', '--help']).stdout).toMatch(/one fingerprint per document/);
  });

  it('exits 2 on usage errors', () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /Usage: simhash-wasm <command>/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['dedup', '--nope'], /Unknown option '--nope'/],
      [['dedup', '--k', 'x'], /--k must be an integer from 0 to 64, got "x"/],
      [['dedup', '--k', '65'], /--k must be an integer/],
      [['dedup', '--format', 'xml'], /--format must be one of jsonl, csv/],
      [['dedup', '--field', 'body', 'x'], /--field and --id-field name fields: add --jsonl/],
      [['dedup', '--bits', '32', 'x'], /--bits 32: dedup joins 64- or 128-bit fingerprints/],
      [
        ['hash', '--preset', 'nope'],
        /preset must be 'default', 'simhash-wasm\/2', 'simhash-wasm\/1', 'java' or 'python-simhash', got "nope"/,
      ],
      [['hash', '--preset', 'java', '--tokenizer', 'words'], /preset 'java' tokenizes on whitespace only/],
      [['dedup', '--sample', 'extra'], /give no inputs/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout + r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('dedups a directory recursively: JSON Lines and CSV', () => {
    const docs = path.join(dir, 'docs');
    const r = run(['dedup', '--k', String(K), docs]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        cluster: path.join(docs, 'a.txt'),
        size: 3,
        members: [path.join(docs, 'a.txt'), path.join(docs, 'b.txt'), path.join(docs, 'sub/d.txt')],
      },
    ]);
    const all = run(['dedup', '--k', String(K), '--all', docs])
      .stdout.trim()
      .split('\n');
    expect(all).toHaveLength(2);
    const csv = run(['dedup', '--k', String(K), '--format', 'csv', docs]);
    expect(csv.stdout.trim().split('\n')).toEqual([
      'document,cluster,size',
      `${path.join(docs, 'a.txt')},${path.join(docs, 'a.txt')},3`,
      `${path.join(docs, 'b.txt')},${path.join(docs, 'a.txt')},3`,
      `${path.join(docs, 'sub/d.txt')},${path.join(docs, 'a.txt')},3`,
    ]);
    // Exact duplicates only at k = 0; pairs as JSON Lines.
    const exact = run(['dedup', '--k', '0', '--pairs', docs]);
    expect(
      exact.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([{ a: path.join(docs, 'a.txt'), b: path.join(docs, 'sub/d.txt'), distance: 0, jaccard: 1 }]);
  });

  it('--pairs lists the pairs that explain the clusters; --all-pairs every pair', () => {
    const copies = path.join(dir, 'copies');
    fs.mkdirSync(copies);
    for (const name of ['1.txt', '2.txt', '3.txt']) fs.writeFileSync(path.join(copies, name), 'one text three times');
    const lines = (r: { stdout: string }) =>
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    const at = (name: string) => path.join(copies, name);
    expect(lines(run(['dedup', '--pairs', copies]))).toEqual([
      { a: at('1.txt'), b: at('2.txt'), distance: 0, jaccard: 1 },
      { a: at('1.txt'), b: at('3.txt'), distance: 0, jaccard: 1 },
    ]);
    expect(lines(run(['dedup', '--pairs', '--all-pairs', copies]))).toHaveLength(3);
    const bad = run(['dedup', '--all-pairs', copies]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--all-pairs prints pairs: add --pairs/);
  });

  it('reads JSON Lines, reports bad lines with file and line, and stops on them with --strict', () => {
    const file = path.join(dir, 'corpus.jsonl');
    const r = run(['dedup', '--jsonl', '--field', 'body', '--k', String(K), file]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ cluster: 'one', size: 2, members: ['one', 'three'] });
    expect(r.stderr).toContain(`${file}:3: invalid JSON`);
    expect(r.stderr).toContain(`${file}:4: field "body" is missing`);
    const strict = run(['dedup', '--jsonl', '--field', 'body', '--strict', file]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toContain(`${file}:3: invalid JSON`);
  });

  it('reads JSON Lines texts and ids as JSON.parse does, also the lines the WebAssembly reader leaves to it', () => {
    const lines: Buffer[] = [
      Buffer.from('\ufeff{"id":"s","text":"plain words here"}'),
      Buffer.from('{"id":12,"text":"escapes \\" \\\\ \\n\\t \\u00e9 \\ud83d\\ude00 caf\u00e9 \u{1f600}"}'),
      Buffer.from('{"id":1.50,"text":"a number id"}'),
      Buffer.from('{"id":"a\\"b","text":"an escaped id"}'),
      Buffer.from('{"id":{"x":1},"text":"an object id"}'),
      Buffer.from('{"id":true,"id":1e999,"text":"no id"}'),
      Buffer.from('{"text":"lone \\ud800 surrogate"}'),
      Buffer.from('{"id":"k","text":"first","te\\u0078t":"the escaped key wins"}'),
      Buffer.concat([Buffer.from('{"id":"u","text":"caf'), Buffer.from([0xff, 0xc3]), Buffer.from(' bytes"}')]),
      Buffer.from('{"id":"bad","text":"trailing comma",}'),
      Buffer.from('{"id":"none","body":"no text"}'),
      Buffer.from(`{"id":"long","text":"${'a long line past one read chunk '.repeat(150_000)}"}`),
      Buffer.from('  {"id":"last","meta":{"text":"inner"},"text":"outer"}  '),
    ];
    const file = path.join(dir, 'tricky.jsonl');
    fs.writeFileSync(file, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
    const r = run(['hash', '--jsonl', '--format', 'jsonl', file]);
    expect(r.code).toBe(0);
    const expected = lines.flatMap((l, q) => {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(l.toString('utf8').replace(/^\ufeff/, ''));
      } catch {
        return [];
      }
      if (typeof record.text !== 'string') return [];
      const id = record.id;
      const named = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
      return [{ id: named ? id : `${file}:${q + 1}`, fingerprint: toHex(simhash(record.text)) }];
    });
    expect(expected).toHaveLength(11);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(expected);
    expect(r.stderr).toContain(`${file}:10: invalid JSON`);
    expect(r.stderr).toContain(`${file}:11: field "text" is missing`);
  });

  it('reports unreadable files and skips them, or fails with --strict', () => {
    const missing = path.join(dir, 'missing.txt');
    const r = run(['hash', path.join(dir, 'docs/a.txt'), missing]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${missing}: cannot read (ENOENT)`);
    const strict = run(['hash', '--strict', path.join(dir, 'docs/a.txt'), missing]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(`${missing}: cannot read (ENOENT)`);
  });

  it('hash prints the library fingerprint of each input, from files and stdin', () => {
    const a = path.join(dir, 'docs/a.txt');
    const c = path.join(dir, 'docs/c.txt');
    const r = run(['hash', a, c]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${toHex(simhash(base))}\t${a}\n${toHex(simhash(other))}\t${c}\n`);
    const stdin = run(['hash', '--bits', '128', '--tokenizer', 'words'], 'hello near duplicate world');
    expect(stdin.stdout).toBe(
      `${toHex(simhash('hello near duplicate world', { bits: 128, tokenizer: 'words' }), 128)}\t-\n`,
    );
    const lines = run(['hash', '--lines', '--format', 'jsonl', '-'], 'first line\n\nsecond line\n');
    expect(
      lines.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { id: '-:1', fingerprint: toHex(simhash('first line')) },
      { id: '-:3', fingerprint: toHex(simhash('second line')) },
    ]);
  });

  it("hash takes every preset, with the original implementations' values (test/vectors/original)", () => {
    const first = (file: string) =>
      readOriginalVectors<{
        bits: 64;
        text: string;
        fingerprint: string;
      }>(file)[0]!;
    for (const [preset, file] of [
      ['python-simhash', 'python-simhash.jsonl'],
      ['java', 'seed-java.jsonl'],
    ] as const) {
      const v = first(file);
      expect(v.bits).toBe(64);
      const r = run(['hash', '--preset', preset], v.text);
      expect(r.code, preset).toBe(0);
      expect(r.stdout, preset).toBe(`${v.fingerprint}\t-\n`);
    }
  });

  it('dedup reads JSON Lines from stdin', () => {
    const input = [base, other, base].map((t, i) => JSON.stringify({ id: `doc${i}`, text: t })).join('\n');
    const r = run(['dedup', '--jsonl', '--k', '0'], input);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ cluster: 'doc0', size: 2, members: ['doc0', 'doc2'] });
  });

  it('--sample summarises the bundled sample', () => {
    const count = fs.readFileSync(path.join(root, 'data/sample/licenses.jsonl'), 'utf8').trim().split('\n').length;
    const r = run(['dedup', '--sample']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${count} documents`);
    expect(r.stdout).toMatch(/\d+ near-duplicate pairs; \d+ clusters of 2 or more/);
    expect(r.stdout).toMatch(/Largest clusters:\n +\d+ documents, e\.g\. \S+/);
    expect(r.stdout).toMatch(/Time: read and hash [\d.]+ m?s, join .* total /);
  });
});
