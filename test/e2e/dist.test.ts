// Smoke tests of the published package: `npm pack` the built dist/, install the tarball into a fresh project
// (offline: the package has no runtime dependencies) and use it the way users do: `import`, `require`, the
// TypeScript declarations under NodeNext, Node16 and bundler resolution, and the CLI binary; and hold the package
// to its budget (1 MB unpacked, the WebAssembly once).
// Runs once (in the simd project) unless SIMHASH_E2E=0 (test/e2e/gate.ts); builds dist/ first when it is missing or
// older than the sources (test/e2e/build.ts).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simhashMany, toHex } from '../../src/index.js';
import { dedup } from '../../src/dedup/dedup.js';
import { fencedBlocks } from '../markdown.js';
import { ensureBuilt } from './build.js';
import { distGate, ONCE } from './gate.js';

const run = promisify(execFile);
/** The package's budget, unpacked as `npm pack` counts it (issue 41: ≤ 1 MB). */
const UNPACKED_BUDGET = 1_000_000;
const root = path.resolve(import.meta.dirname, '../..');
const gate = distGate();
const title = !gate.run
  ? `packaged dist (skipped: ${gate.skipped})`
  : !ONCE
    ? 'packaged dist (skipped in the scalar project: runs once, in the simd project)'
    : 'packaged dist';

/** Inputs covering ASCII, multi-byte UTF-8, empty text, bytes and repeated documents. */
const TEXTS = [
  'the quick brown fox jumps over the lazy dog',
  'the quick brown fox jumped over the lazy dog',
  'Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich 🥊',
  '',
  'a',
  'lorem ipsum dolor sit amet '.repeat(200),
];
const DEDUP_K = 12;
const OPTIONS = [{}, { bits: 128 }, { bits: 32, tokenizer: 'words' }, { tokenizer: 'ngrams', width: 3 }] as const;

/** What the consumer scripts print: hex fingerprints for every TEXTS × OPTIONS, plus facts about the module. */
function consumerBody(): string {
  return `
  const texts = ${JSON.stringify(TEXTS)};
  const options = ${JSON.stringify(OPTIONS)};
  const build = process.argv[2];
  await lib.init({ build });
  const out = {
    build: lib.loadedBuild(),
    spec: lib.SPEC_ID,
    exports: Object.keys(lib).filter((k) => k !== 'default').sort(),
    fingerprints: options.map((o) => {
      const bits = o.bits ?? 64;
      const fps = lib.simhashMany(texts, o);
      const words = bits === 128 ? 2 : 1;
      return texts.map((_, i) => lib.toHex(words === 2 ? (fps[2 * i + 1] << 64n) | fps[2 * i] : fps[i], bits));
    }),
    bytesEqualText: lib.simhash(new TextEncoder().encode(texts[0])) === lib.simhash(texts[0]),
  };
  if (typeof lib.simhashManyAsync === 'function') {
    // Two pool workers load this very entry (ESM or CJS) from the installed package.
    out.threaded = await Promise.all(
      options.map(async (o) => (await lib.simhashManyAsync(texts, { ...o, threads: 2 })).join() === lib.simhashMany(texts, o).join()),
    );
  }
  if (typeof lib.dedup === 'function') {
    const result = lib.dedup(texts, { k: ${DEDUP_K} });
    out.dedup = { clusterOf: Array.from(result.clusterOf), pairs: Array.from(result.pairs.a, (a, i) => [a, result.pairs.b[i]]) };
  }
  console.log(JSON.stringify(out));`;
}

function expectedFingerprints(): string[][] {
  return OPTIONS.map((o) => {
    const bits = 'bits' in o ? o.bits : 64;
    const fps = simhashMany(TEXTS, o);
    return TEXTS.map((_, i) => toHex(bits === 128 ? (fps[2 * i + 1]! << 64n) | fps[2 * i]! : fps[i]!, bits));
  });
}

/** A documentation file's ```sh blocks, each with the ```text block right after it (the output it shows), if any. */
function shellExamples(file: string): Array<{ script: string; shown?: string }> {
  const blocks = fencedBlocks(fs.readFileSync(path.join(root, file), 'utf8'));
  const out: Array<{ script: string; shown?: string }> = [];
  blocks.forEach((block, i) => {
    if (block.lang !== 'sh') return;
    const next = blocks[i + 1];
    out.push({ script: block.body, shown: next?.lang === 'text' ? next.body : undefined });
  });
  return out;
}

describe.skipIf(!gate.run || !ONCE)(title, () => {
  let work: string;
  let consumer: string;
  let packedFiles: string[];
  let unpackedSize: number;

  beforeAll(async () => {
    await ensureBuilt();
    for (const file of ['dist/index.mjs', 'dist/index.cjs', 'dist/index.d.cts', 'dist/wasm.mjs']) {
      if (!fs.existsSync(path.join(root, file))) throw new Error(`${file} is missing after npm run build`);
    }
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-dist-'));
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root });
    const info = JSON.parse(packed.stdout) as Array<{
      filename: string;
      unpackedSize: number;
      files: Array<{ path: string }>;
    }>;
    const tarball = path.join(work, info[0]!.filename);
    packedFiles = info[0]!.files.map((f) => f.path);
    unpackedSize = info[0]!.unpackedSize;
    consumer = path.join(work, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(
      path.join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, version: '0.0.0' }),
    );
    await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--no-package-lock'], {
      cwd: consumer,
    });
    fs.writeFileSync(path.join(consumer, 'esm.mjs'), `import * as lib from 'simhash-wasm';\n${consumerBody()}\n`);
    fs.writeFileSync(
      path.join(consumer, 'cjs.cjs'),
      `const lib = require('simhash-wasm');\n(async () => {${consumerBody()}\n})().catch((e) => { console.error(e); process.exit(1); });\n`,
    );
  }, 600_000); // may build dist/ first (about a minute on a loaded machine)

  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('packs only dist/ (plus package.json and docs): both entries, one declaration file each, the WASM once', () => {
    expect(packedFiles.sort()).toEqual(
      [
        'LICENSE',
        'README.md',
        'package.json',
        'dist/cli.mjs',
        'dist/clickhouse.cjs',
        'dist/clickhouse.d.cts',
        'dist/clickhouse.mjs',
        'dist/index.cjs',
        'dist/index.d.cts',
        'dist/index.mjs',
        'dist/sample/licenses.jsonl.gz',
        'dist/wasm.mjs',
      ]
        .filter((f) => f !== 'LICENSE' || fs.existsSync(path.join(root, f)))
        .sort(),
    );
    expect(unpackedSize).toBeLessThanOrEqual(UNPACKED_BUDGET);
  });

  it('ships JavaScript in short lines: an uncaught error prints the line it came from, not the library', () => {
    const installed = path.join(consumer, 'node_modules/simhash-wasm/dist');
    for (const file of ['index.mjs', 'index.cjs', 'cli.mjs', 'clickhouse.mjs', 'clickhouse.cjs']) {
      const longest = Math.max(
        ...fs
          .readFileSync(path.join(installed, file), 'utf8')
          .split('\n')
          .map((l) => l.length),
      );
      expect(longest, file).toBeLessThan(1000);
    }
  });

  it('embeds each WebAssembly build once, in wasm.mjs, which both entries import', async () => {
    const installed = path.join(consumer, 'node_modules/simhash-wasm/dist');
    const { SIMD_WASM_GZ, SCALAR_WASM_GZ } = (await import(path.join(installed, 'wasm.mjs'))) as Record<string, string>;
    for (const [build, gz] of [
      ['simd', SIMD_WASM_GZ],
      ['scalar', SCALAR_WASM_GZ],
    ] as const) {
      // The compiler's own output (scripts/build-wasm.mjs), byte for byte.
      const compiled = fs.readFileSync(path.join(root, `build/simhash.${build}.wasm`));
      expect(zlib.gunzipSync(Buffer.from(gz!, 'base64')).equals(compiled), build).toBe(true);
    }
    for (const entry of ['index.mjs', 'index.cjs', 'cli.mjs']) {
      const code = fs.readFileSync(path.join(installed, entry), 'utf8');
      expect(code.includes(SIMD_WASM_GZ!.slice(0, 64)), entry).toBe(false);
      expect(code.includes(SCALAR_WASM_GZ!.slice(0, 64)), entry).toBe(false);
      if (entry !== 'cli.mjs') expect(code, entry).toMatch(/import\(["']\.\/wasm\.mjs["']\)/);
    }
  });

  for (const [kind, script] of [
    ['import (ESM)', 'esm.mjs'],
    ['require (CJS)', 'cjs.cjs'],
  ] as const) {
    for (const build of ['simd', 'scalar'] as const) {
      it(`${kind} with the ${build} build gives the same fingerprints as the sources`, async () => {
        const { stdout } = await run(process.execPath, [script, build], { cwd: consumer });
        const out = JSON.parse(stdout) as {
          build: string;
          spec: string;
          exports: string[];
          fingerprints: string[][];
          bytesEqualText: boolean;
          dedup?: { clusterOf: number[]; pairs: number[][] };
          threaded?: boolean[];
        };
        expect(out.build).toBe(build);
        expect(out.fingerprints).toEqual(expectedFingerprints());
        expect(out.bytesEqualText).toBe(true);
        for (const name of ['init', 'simhash', 'simhashMany', 'hammingDistance', 'toHex', 'SPEC_ID'])
          expect(out.exports).toContain(name);
        expect(out.exports).toContain('dedup');
        expect(out.threaded).toEqual(OPTIONS.map(() => true));
        const expected = dedup(TEXTS, { k: DEDUP_K });
        expect(out.dedup).toEqual({
          clusterOf: Array.from(expected.clusterOf),
          pairs: Array.from(expected.pairs.a, (a, i) => [a, expected.pairs.b[i]]),
        });
      });
    }
  }

  it('ESM and CJS entries export the same names', async () => {
    const [esm, cjs] = await Promise.all([
      run(process.execPath, ['esm.mjs', 'auto'], { cwd: consumer }),
      run(process.execPath, ['cjs.cjs', 'auto'], { cwd: consumer }),
    ]);
    expect(JSON.parse(cjs.stdout).exports).toEqual(JSON.parse(esm.stdout).exports);
  });

  for (const resolution of ['NodeNext', 'Node16', 'Bundler'] as const) {
    it(`type-checks under moduleResolution ${resolution}, for import${resolution === 'Bundler' ? '' : ' and require'}, from one declaration file`, async () => {
      const use = `
      export async function main(): Promise<string> {
        await lib.init({ build: 'auto' });
        const fps: BigUint64Array = lib.simhashMany(['a b c', 'a b d']);
        const d: number = lib.hammingDistance(fps[0]!, fps[1]!);
        // @ts-expect-error: 65 is not a fingerprint width (proves the declarations are real, not any)
        lib.simhash('x', { bits: 65 });
        return lib.toHex(fps[0]!) + d;
      }`;
      fs.writeFileSync(path.join(consumer, 'use-import.mts'), `import * as lib from 'simhash-wasm';\n${use}\n`);
      fs.writeFileSync(path.join(consumer, 'use-require.cts'), `import lib = require('simhash-wasm');\n${use}\n`);
      const config = `tsconfig.${resolution}.json`;
      fs.writeFileSync(
        path.join(consumer, config),
        JSON.stringify({
          compilerOptions: {
            module: resolution === 'Bundler' ? 'ESNext' : resolution,
            moduleResolution: resolution,
            target: 'ES2022',
            lib: ['ES2022', 'DOM'],
            strict: true,
            noUncheckedIndexedAccess: true,
            noEmit: true,
            skipLibCheck: false, // check the package's own .d.ts files...
            skipDefaultLibCheck: true, // ...but not TypeScript's lib files
            types: [],
          },
          files: resolution === 'Bundler' ? ['use-import.mts'] : ['use-import.mts', 'use-require.cts'],
        }),
      );
      const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
      const { stdout, stderr, code } = await run(process.execPath, [tsc, '-p', config, '--traceResolution'], {
        cwd: consumer,
        maxBuffer: 64 * 1024 * 1024,
      }).then(
        (done) => ({ ...done, code: 0 }),
        (error: { stdout?: string; stderr?: string; code?: number | string }) => ({
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
          code: error.code,
        }),
      );
      expect(stdout.split('\n').filter((line) => /error TS\d+/.test(line))).toEqual([]);
      // A crash or a configuration tsc rejects prints no "error TS" line on stdout: the exit code says it.
      expect(code, `tsc exited with ${code}: ${stderr.slice(0, 2000)}`).toBe(0);
      // import and require both resolve to the one declaration file.
      const resolved = [...stdout.matchAll(/'simhash-wasm' was successfully resolved to '([^']*)'/g)].map((m) => m[1]);
      expect(resolved.length).toBeGreaterThan(0);
      for (const file of resolved) expect(file).toMatch(/simhash-wasm\/dist\/index\.d\.cts$/);
    });
  }

  it('installs the simhash-wasm binary, which shares the library and hashes like it', async () => {
    const bin = path.join(consumer, 'node_modules/.bin/simhash-wasm');
    expect(fs.existsSync(bin)).toBe(true);
    const help = await run(bin, ['--help'], { cwd: consumer });
    expect(help.stdout).toContain('Usage: simhash-wasm');
    // One copy of the library in the package: the CLI imports ./index.mjs instead of bundling its own.
    const cli = fs.readFileSync(path.join(consumer, 'node_modules/simhash-wasm/dist/cli.mjs'), 'utf8');
    expect(cli).toMatch(/from\s*["']\.\/index\.mjs["']/);
    expect(cli.length).toBeLessThan(100_000);
    fs.writeFileSync(path.join(consumer, 'doc.txt'), TEXTS[2]!);
    const hashed = await run(bin, ['hash', 'doc.txt'], { cwd: consumer });
    expect(hashed.stdout.split('\t')[0]).toBe(expectedFingerprints()[0]![2]);
  });

  it('the installed binary prints its version and runs on the sample shipped in the package', async () => {
    const bin = path.join(consumer, 'node_modules/.bin/simhash-wasm');
    const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect((await run(bin, ['--version'], { cwd: consumer })).stdout).toBe(`${version}\n`);
    expect(packedFiles).toContain('dist/sample/licenses.jsonl.gz');
    const sample = await run(bin, ['dedup', '--sample'], { cwd: consumer });
    // The packed sample is the whole lines of data/sample/licenses.jsonl within its first 0.8 MB.
    const lines = fs.readFileSync(path.join(root, 'data/sample/licenses.jsonl'), 'utf8').split('\n');
    let bytes = 0;
    let documents = 0;
    for (const line of lines) {
      const next = bytes + Buffer.byteLength(line) + 1;
      if (next > 800_000 || line === '') break;
      bytes = next;
      documents++;
    }
    expect(sample.stdout).toMatch(
      new RegExp(
        `^${documents} documents \\(${(bytes / 1e6).toFixed(1).replace('.', '\\.')} MB\\) from .*node_modules/simhash-wasm/dist/sample/licenses\\.jsonl\\.gz`,
      ),
    );
    expect(sample.stdout).toMatch(/clusters of 2 or more/);
  });

  // The README's and the CLI guide's runnable examples (```sh), as a user runs them after installing the package:
  // each in a fresh folder, every command must succeed, and the output a README block shows must be what it prints.
  for (const file of ['README.md', 'docs/cli.md']) {
    for (const [i, example] of shellExamples(file).entries()) {
      it(`${file}: shell example ${i + 1} runs against the installed package`, async () => {
        const dir = fs.mkdtempSync(path.join(work, 'example-'));
        fs.symlinkSync(path.join(consumer, 'node_modules'), path.join(dir, 'node_modules'));
        fs.writeFileSync(path.join(dir, 'package.json'), '{"private": true}');
        const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', example.script], {
          cwd: dir,
          env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
          maxBuffer: 64 * 1024 * 1024,
        });
        if (example.shown !== undefined) {
          // A shown line with … stands for a longer one: its text up to the … must start a printed line. Shown lines
          // may come from either stream (the CLI's closing count goes to stderr).
          const printed = `${stdout}\n${stderr}`.split('\n');
          for (const line of example.shown.split('\n').filter((l) => l.trim() !== '')) {
            const [head, tail] = line.split('…', 2) as [string, string | undefined];
            const found =
              tail === undefined
                ? printed.includes(line)
                : printed.some((p) => p.startsWith(head) || (head.trim() === '' && p.includes(tail.trim())));
            expect(
              found,
              `${file} shows a line the command does not print:\n${line}\n--- printed:\n${stdout}\n${stderr}`,
            ).toBe(true);
          }
        }
      }, 120_000);
    }
  }
});
