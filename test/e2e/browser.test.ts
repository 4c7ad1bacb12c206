// End to end in headless Chromium: the example page (build/examples/browser, which loads the built dist/index.mjs)
// served by scripts/serve.mjs, driven through playwright-core. Checks that the library gives the same fingerprints
// in the page (main thread and Web Worker, SIMD and scalar builds) as in Node, that the page clusters a known
// near-duplicate pair, computes distances and the histogram right, and stays responsive on a large input.
// Leaves a screenshot in test-results/browser.png.
// Needs /usr/bin/chromium (scripts/install-chromium.sh); runs once (in the simd project) when Chromium is there, is
// required with SIMHASH_E2E=1 and off with SIMHASH_E2E=0 (test/e2e/gate.ts). Builds dist/ and the page first when
// missing or older than the sources (test/e2e/build.ts).
import { execFile, spawnSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hammingDistance, simhashMany, toHex, type SimHashOptions } from '../../src/index.js';
import { clusters } from '../../src/dedup/dedup.js';
import { findNearDuplicates } from '../../src/join/find-near-duplicates.js';
import { randomDocument, rng } from '../reference.js';
import { ensureBuilt } from './build.js';
import { browserGate, CHROMIUM, ONCE } from './gate.js';
interface Server {
  url: string;
  close(): Promise<void>;
}
/** scripts/serve.mjs is plain JavaScript without declarations: loaded by URL and typed here. */
async function startServer(options: { root: string; port: number; isolated?: boolean }): Promise<Server> {
  const serve = (await import(new URL('../../scripts/serve.mjs', import.meta.url).href)) as {
    startServer(o: typeof options): Promise<Server>;
  };
  return serve.startServer(options);
}

const root = path.resolve(import.meta.dirname, '../..');
const site = path.join(root, 'build/examples/browser');
const gate = browserGate();
const title = !gate.run
  ? `browser example in headless Chromium (skipped: ${gate.skipped})`
  : !ONCE
    ? 'browser example in headless Chromium (skipped in the scalar project: runs once, in the simd project)'
    : 'browser example in headless Chromium';

/** The summary the page's run() resolves to (examples/browser/main.js). */
interface RunSummary {
  documents: number;
  build: string;
  bits: number;
  k: number;
  fingerprints: string[];
  clusterOf: number[];
  clusterCount: number;
  pairs: number;
  histogram: number[];
  histogramPairs: number;
  histogramSampled: boolean;
  progressLog: number[];
  maxStallMs: number;
}

interface Doc {
  name: string;
  text: string;
}

/** The page's test hook, window.simhashDemo, as far as these tests use it. */
interface Demo {
  ready: Promise<{ build: string }>;
  lib: {
    simhashMany(texts: string[], options?: object): BigUint64Array;
    toHex(fp: bigint, bits?: number): string;
    loadedBuild(): string;
  };
  run(): Promise<RunSummary>;
  setDocuments(docs: Doc[]): void;
  documents(): Doc[];
  sampleDocuments(): Doc[];
  generatedDocuments(count: number): Doc[];
}
declare global {
  interface Window {
    simhashDemo: Demo;
  }
}

const PAGE_TEXTS = [
  'the quick brown fox jumps over the lazy dog near the river bank',
  'Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich 🥊 — naïve café',
  '',
  '日本語のテキストも同じ指紋になるはずです',
  'lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(300),
];
const PAGE_OPTIONS: SimHashOptions[] = [
  {},
  { bits: 128 },
  { bits: 32 },
  { tokenizer: 'words' },
  { tokenizer: 'ngrams', width: 3 },
];

function hexes(texts: string[], options: SimHashOptions = {}): string[] {
  const bits = options.bits ?? 64;
  const fps = simhashMany(texts, options);
  return texts.map((_, i) => toHex(bits === 128 ? (fps[2 * i + 1]! << 64n) | fps[2 * i]! : fps[i]!, bits));
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Node's answer for a run of the page with 64-bit fingerprints: pairs and clusters by the library, the histogram
 * by brute force over every pair in plain JavaScript (32-bit halves, so 12.5 M pairs take well under a second).
 */
function reference(texts: string[], k: number) {
  const fps = simhashMany(texts);
  const pairs = findNearDuplicates(fps, { k, bits: 64 });
  const histogram = new Array<number>(65).fill(0);
  const halves = new Uint32Array(fps.buffer, fps.byteOffset, fps.length * 2);
  for (let i = 0; i < texts.length; i++) {
    const lo = halves[2 * i]!;
    const hi = halves[2 * i + 1]!;
    for (let j = i + 1; j < texts.length; j++)
      histogram[popcount32(lo ^ halves[2 * j]!) + popcount32(hi ^ halves[2 * j + 1]!)]!++;
  }
  return {
    fps,
    fingerprints: hexes(texts),
    clusterOf: Array.from(clusters(texts.length, pairs).clusterOf),
    pairs: pairs.a.length,
    histogram,
  };
}

describe.skipIf(!gate.run || !ONCE)(title, () => {
  let server: Server;
  let isolatedServer: Server;
  let browser: Browser;
  const errors: string[] = [];

  async function open(query = '', from = server): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    await page.goto(from.url + query);
    await page.evaluate(() => window.simhashDemo.ready);
    return page;
  }

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing (SIMHASH_E2E=1 requires it): run scripts/install-chromium.sh`);
    }
    await ensureBuilt();
    if (!fs.existsSync(path.join(site, 'index.html'))) {
      throw new Error('build/examples/browser is missing after npm run build:examples');
    }
    for (const [shipped, copy] of [
      ['dist/index.mjs', 'lib/simhash-wasm.mjs'],
      ['dist/wasm.mjs', 'lib/wasm.mjs'],
    ]) {
      if (!fs.readFileSync(path.join(root, shipped!)).equals(fs.readFileSync(path.join(site, copy!)))) {
        throw new Error(`build/examples/browser/${copy} differs from ${shipped}: run "npm run build:examples" again`);
      }
    }
    server = await startServer({ root: site, port: 0 });
    isolatedServer = await startServer({ root: site, port: 0, isolated: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 600_000); // may build dist/ and the page first

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await isolatedServer?.close();
  });

  it('runs the library on the page with the SIMD build and gets the fingerprints Node gets', async () => {
    const page = await open();
    expect(await page.evaluate(() => window.simhashDemo.ready)).toEqual({ build: 'simd' });
    for (const options of PAGE_OPTIONS) {
      const inPage = await page.evaluate(
        ([texts, options]) => {
          const { simhashMany, toHex } = window.simhashDemo.lib;
          const bits = (options as { bits?: number }).bits ?? 64;
          const fps = simhashMany(texts, options);
          return texts.map((_, i) => toHex(bits === 128 ? (fps[2 * i + 1]! << 64n) | fps[2 * i]! : fps[i]!, bits));
        },
        [PAGE_TEXTS, options] as const,
      );
      expect(inPage, JSON.stringify(options)).toEqual(hexes(PAGE_TEXTS, options));
    }
    await page.close();
    expect(errors).toEqual([]);
  });

  it('clusters a known near-duplicate pair from pasted text and files, and shows their distance', async () => {
    const page = await open();
    const sample = await page.evaluate(() => window.simhashDemo.sampleDocuments());
    const pasted = sample.slice(0, 4);
    const files = sample.slice(4);
    // Paste four documents separated by blank lines, choose the rest as files, drop one more onto the box.
    await page.fill('#paste', pasted.map((d) => d.text).join('\n\n'));
    // One of the files is gzip-compressed (by Debian's gzip when installed, else node:zlib): the page reads it as
    // the command line does, by its first bytes.
    const gz = (text: string) => {
      const r = spawnSync('gzip', ['-c'], { input: text });
      return r.status === 0 ? r.stdout : gzipSync(text);
    };
    await page.setInputFiles(
      '#files',
      files.map((d, i) =>
        i === 0
          ? { name: `${d.name}.gz`, mimeType: 'application/gzip', buffer: gz(d.text) }
          : { name: d.name, mimeType: 'text/plain', buffer: Buffer.from(d.text) },
      ),
    );
    // Files are read asynchronously: wait for them, so the dropped one comes after them in a known order.
    await page.waitForFunction((n) => window.simhashDemo.documents().length === n, pasted.length + files.length);
    const dropped: Doc = {
      name: 'dropped.txt',
      text: 'A file dropped onto the page, about nothing in particular, with its own words.',
    };
    await page.evaluate(async (doc) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([doc.text], doc.name, { type: 'text/plain' }));
      document
        .getElementById('dropzone')!
        .dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, dropped);
    const docs = [...pasted.map((d) => d.text), ...files.map((d) => d.text), dropped.text];
    await page.waitForFunction((n) => window.simhashDemo.documents().length === n, docs.length);
    expect(await page.textContent('#doc-count')).toContain(`${docs.length} documents`);

    const k = 10;
    await page.fill('#k', String(k));
    await page.click('#run');
    await page.waitForSelector('#status[data-state="done"]', { timeout: 60_000 });

    const expected = reference(docs, k);
    const rows = await page.$$eval('#documents tbody tr', (trs) =>
      trs.map((tr) => ({ fp: (tr as HTMLElement).dataset.fp, cluster: Number((tr as HTMLElement).dataset.cluster) })),
    );
    expect(rows.map((r) => r.fp)).toEqual(expected.fingerprints);
    expect(rows.map((r) => r.cluster)).toEqual(expected.clusterOf);
    expect(await page.textContent('#pair-count')).toBe(String(expected.pairs));

    // The known pair: the lighthouse text and its one-word edit (pasted #1, file "lighthouse (one word changed)").
    const original = 0;
    const edited = docs.indexOf(sample.find((d) => d.name.startsWith('lighthouse (one word'))!.text);
    const unrelated = docs.indexOf(sample.find((d) => d.name === 'marathon.txt')!.text);
    const distance = hammingDistance(expected.fps[original]!, expected.fps[edited]!);
    expect(distance).toBeLessThanOrEqual(k); // the fixture is a near-duplicate at this k
    expect(rows[edited]!.cluster).toBe(rows[original]!.cluster);
    expect(rows[unrelated]!.cluster).not.toBe(rows[original]!.cluster);

    // The deduplicated documents as a download: the first of each cluster, in order, as JSON Lines.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    expect(download.suggestedFilename()).toBe('deduplicated.jsonl');
    const kept = fs
      .readFileSync(await download.path(), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as Doc).text);
    expect(kept).toEqual(docs.filter((_, i) => expected.clusterOf[i] === i));
    expect(kept).not.toContain(docs[edited]);

    // Compare panel: by number, then by clicking two documents.
    await page.fill('#pick-a', String(original + 1));
    await page.fill('#pick-b', String(edited + 1));
    await page.dispatchEvent('#pick-b', 'change');
    expect(await page.getAttribute('#compare', 'data-distance')).toBe(String(distance));
    expect(await page.textContent('#compare')).toContain('same cluster');
    await page.click(`#documents tbody tr[data-doc="${unrelated}"]`);
    await page.click(`#documents tbody tr[data-doc="${original}"]`);
    expect(await page.getAttribute('#compare', 'data-distance')).toBe(
      String(hammingDistance(expected.fps[unrelated]!, expected.fps[original]!)),
    );

    // Histogram: every pair counted, drawn on the canvas.
    expect(await page.getAttribute('#histogram', 'data-pairs')).toBe(String((docs.length * (docs.length - 1)) / 2));
    const painted = await page.evaluate(() => {
      const canvas = document.getElementById('histogram') as HTMLCanvasElement;
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let opaque = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) opaque++;
      return opaque / (pixels.length / 4);
    });
    expect(painted).toBeGreaterThan(0.01);

    fs.mkdirSync(path.join(root, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(root, 'test-results/browser.png'), fullPage: true });
    await page.close();
    expect(errors).toEqual([]);
  });

  it('reads a Parquet table written by DuckDB, one document per row, and names a table it cannot read', async () => {
    const page = await open();
    const sample = await page.evaluate(() => window.simhashDemo.sampleDocuments());
    const rows = sample.map((d, i) => ({ id: `row-${i}`, text: d.text }));
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-page-parquet-'));
    const table = async (name: string, codec: string) => {
      const json = path.join(dir, `${name}.jsonl`);
      fs.writeFileSync(json, rows.map((r) => JSON.stringify(r)).join('\n'));
      const file = path.join(dir, `${name}.parquet`);
      await db.run(
        `COPY (SELECT * FROM read_json('${json}', columns = {id: 'VARCHAR', text: 'VARCHAR'})) TO '${file}' (FORMAT parquet, COMPRESSION ${codec})`,
      );
      return { name: `${name}.parquet`, mimeType: 'application/vnd.apache.parquet', buffer: fs.readFileSync(file) };
    };
    try {
      // Snappy, DuckDB's default, is one hyparquet reads itself; Zstandard goes through zstddec (lib/zstddec.mjs);
      // Brotli needs the codecs only the command line loads.
      await page.setInputFiles('#files', [
        await table('table', 'snappy'),
        await table('zstd', 'zstd'),
        await table('brotli', 'brotli'),
      ]);
      await page.waitForFunction((n) => window.simhashDemo.documents().length === n, 2 * rows.length);
      const docs = await page.evaluate(() => window.simhashDemo.documents());
      expect(docs.map((d) => d.text)).toEqual([...rows, ...rows].map((r) => r.text));
      expect(docs.map((d) => d.name)).toEqual([
        ...rows.map((r) => `table.parquet: ${r.id}`),
        ...rows.map((r) => `zstd.parquet: ${r.id}`),
      ]);
      await page.waitForSelector('#status[data-state="error"]');
      expect(await page.textContent('#status')).toMatch(/Could not read: brotli\.parquet \(.*BROTLI/i);

      const k = 10;
      await page.fill('#k', String(k));
      await page.click('#run');
      await page.waitForSelector('#status[data-state="done"]', { timeout: 60_000 });
      const clusterOf = await page.$$eval('#documents tbody tr', (trs) =>
        trs.map((tr) => Number((tr as HTMLElement).dataset.cluster)),
      );
      expect(clusterOf).toEqual(
        reference(
          [...rows, ...rows].map((r) => r.text),
          k,
        ).clusterOf,
      );
    } finally {
      db.closeSync();
      fs.rmSync(dir, { recursive: true, force: true });
      await page.close();
    }
    expect(errors).toEqual([]);
  });

  it('processes 5,000 documents in the worker with progress, the page staying responsive', async () => {
    const page = await open();
    const texts = await page.evaluate(() => {
      const docs = window.simhashDemo.generatedDocuments(5000);
      window.simhashDemo.setDocuments(docs);
      return docs.map((d) => d.text);
    });
    const summary = await page.evaluate(() => window.simhashDemo.run());
    const expected = reference(texts, summary.k);
    expect(summary.build).toBe('simd');
    expect(summary.fingerprints).toEqual(expected.fingerprints);
    expect(summary.clusterOf).toEqual(expected.clusterOf);
    expect(summary.pairs).toBe(expected.pairs);
    expect(summary.histogramSampled).toBe(false);
    expect(summary.histogram).toEqual(expected.histogram);
    expect(summary.clusterCount).toBeLessThan(5000); // the generator's edited copies are found
    // Progress arrived in many steps, increasing, while the work ran off the main thread.
    expect(summary.progressLog.length).toBeGreaterThanOrEqual(10);
    expect(summary.progressLog).toEqual([...summary.progressLog].sort((a, b) => a - b));
    // Generous bound (a shared CI machine): with the work on the main thread the stall would be the whole run.
    expect(summary.maxStallMs).toBeLessThan(1000);
    expect(await page.getAttribute('#status', 'data-state')).toBe('done');
    await page.close();
    expect(errors).toEqual([]);
  });

  it('samples the histogram above 20,000 documents and says so', async () => {
    const page = await open();
    const summary = await page.evaluate(() => {
      const docs = Array.from({ length: 20_001 }, (_, i) => ({
        name: `d${i}`,
        text: `record ${i % 997} of batch ${i % 13} item ${i}`,
      }));
      window.simhashDemo.setDocuments(docs);
      return window.simhashDemo.run();
    });
    expect(summary.documents).toBe(20_001);
    expect(summary.histogramSampled).toBe(true);
    expect(summary.histogram.reduce((a, b) => a + b, 0)).toBe(summary.histogramPairs);
    expect(summary.histogramPairs).toBe(4000 * 20_000);
    expect(await page.textContent('#histogram-info')).toContain('randomly sampled pairs');
    await page.close();
    expect(errors).toEqual([]);
  });

  it('fingerprints, joins and queries on module Web Workers (threads: 2) from dist/ exactly as on one thread', async () => {
    const page = await open();
    const next = rng(2);
    const texts = Array.from({ length: 4000 }, (_, i) =>
      i % 7 === 3 ? `${randomDocument(next, 5)} copy` : randomDocument(next, 40),
    );
    const optionSets: SimHashOptions[] = [
      {},
      { bits: 128 },
      { bits: 32, tokenizer: 'words' },
      { tokenizer: 'segmenter' },
      { preset: 'java' },
      { preset: 'python-simhash' },
    ];
    const inPage = await page.evaluate(
      async ([texts, optionSets]) => {
        type Pairs = { a: Uint32Array; b: Uint32Array; distance: Uint8Array };
        const lib = window.simhashDemo.lib as unknown as {
          simhashMany(texts: string[], options?: object): BigUint64Array;
          simhashManyAsync(texts: string[], options?: object): Promise<BigUint64Array>;
          findNearDuplicates(fps: BigUint64Array, options: object): Pairs | Promise<Pairs>;
          FingerprintIndex: new () => {
            addMany(ids: Uint32Array, fps: BigUint64Array): void;
            queryMany(fps: BigUint64Array, k: number): unknown;
            queryManyAsync(fps: BigUint64Array, k: number, options: object): Promise<unknown>;
            free(): void;
          };
        };
        // Count the pool's workers: the library starts them with the global Worker constructor.
        const started: string[] = [];
        const Native = window.Worker;
        window.Worker = class extends Native {
          constructor(url: string | URL, options?: WorkerOptions) {
            super(url, options);
            started.push(`${options?.type} ${options?.name}`);
          }
        };
        const words = (fps: BigUint64Array) => Array.from(fps, (x) => x.toString(16));
        const fingerprints = [];
        for (const options of optionSets) {
          const two = await lib.simhashManyAsync(texts, { ...options, threads: 2 });
          fingerprints.push({ two: words(two), one: words(lib.simhashMany(texts, options)) });
        }
        // A join above the cut-over (a million fingerprints) really runs in a worker.
        const many = new BigUint64Array(1_000_000);
        for (let at = 0; at < many.length; at += 8192) crypto.getRandomValues(many.subarray(at, at + 8192));
        many.set(lib.simhashMany(texts));
        const pairs = async (threads: number) => {
          const p = await lib.findNearDuplicates(many, { k: 3, threads });
          return Array.from(p.a, (a, i) => `${a},${p.b[i]},${p.distance[i]}`);
        };
        const [joinOne, joinTwo] = [await pairs(1), await pairs(2)];
        const index = new lib.FingerprintIndex();
        index.addMany(
          Uint32Array.from(many.subarray(0, 200_000), (_, i) => i),
          many.subarray(0, 200_000),
        );
        const queries = many.subarray(0, 20_000);
        const queried = JSON.stringify(await index.queryManyAsync(queries, 3, { threads: 2 }));
        const wanted = JSON.stringify(index.queryMany(queries, 3));
        // Not cross-origin isolated: each worker got a copy of the index's snapshot of its own.
        const handover = (index as unknown as { handover: { bytes: Uint8Array } }).handover.bytes;
        const snapshot = { isolated: crossOriginIsolated, shared: handover.buffer instanceof ArrayBuffer === false };
        index.free();
        window.Worker = Native;
        return {
          fingerprints,
          joinSame: joinOne.join() === joinTwo.join(),
          joinPairs: joinOne.length,
          querySame: queried === wanted,
          snapshot,
          started,
        };
      },
      [texts, optionSets] as const,
    );
    optionSets.forEach((options, o) => {
      const { one, two } = inPage.fingerprints[o]!;
      expect(two, JSON.stringify(options)).toEqual(one);
      // And Node's fingerprints of the same texts.
      expect(two, JSON.stringify(options)).toEqual(Array.from(simhashMany(texts, options), (x) => x.toString(16)));
    });
    expect(inPage.joinSame).toBe(true);
    expect(inPage.joinPairs).toBeGreaterThan(100);
    expect(inPage.querySame).toBe(true);
    expect(inPage.snapshot).toEqual({ isolated: false, shared: false });
    // One pool for everything: two module workers, started once.
    expect(inPage.started).toEqual(['module simhash-wasm pool worker', 'module simhash-wasm pool worker']);
    await page.close();
    expect(errors).toEqual([]);
  });

  it('hands an index to its Web Workers in one SharedArrayBuffer on a cross-origin isolated page', async () => {
    const page = await open('', isolatedServer);
    const inPage = await page.evaluate(async () => {
      const lib = window.simhashDemo.lib as unknown as {
        FingerprintIndex: new (
          options?: object,
        ) => {
          addMany(ids: ArrayLike<number | string>, fps: BigUint64Array): void;
          queryMany(fps: BigUint64Array, k: number): unknown;
          queryManyAsync(fps: BigUint64Array, k: number, options: object): Promise<unknown>;
          free(): void;
        };
      };
      const many = new BigUint64Array(300_000);
      for (let at = 0; at < many.length; at += 8192) crypto.getRandomValues(many.subarray(at, at + 8192));
      // Near neighbours for every tenth query, at distance 1 to 3.
      const queries = many.slice(0, 30_000);
      for (let i = 0; i < queries.length; i += 10)
        queries[i] = queries[i]! ^ ((1n << BigInt(i % 64)) | (1n << BigInt((i >> 6) % 64)));
      const results = [];
      for (const [bits, strings] of [
        [64, false],
        [128, true],
      ] as const) {
        const index = new lib.FingerprintIndex({ bits, maxDistance: 3 });
        const n = many.length / (bits / 64);
        const ids = strings
          ? Array.from({ length: n }, (_, i) => `id \u{d800}${i}`)
          : Array.from({ length: n }, (_, i) => i);
        index.addMany(ids, many);
        const asked = bits === 64 ? queries : queries.subarray(0, 20_000);
        const queried = JSON.stringify(await index.queryManyAsync(asked, 3, { threads: 2 }));
        const handover = (index as unknown as { handover: { bytes: Uint8Array } }).handover.bytes;
        results.push({
          bits,
          same: queried === JSON.stringify(index.queryMany(asked, 3)),
          found: (queried.match(/"distance"/g) ?? []).length,
          shared: handover.buffer instanceof SharedArrayBuffer,
        });
        index.free();
      }
      return { isolated: crossOriginIsolated, results };
    });
    expect(inPage.isolated).toBe(true);
    for (const r of inPage.results) {
      expect(r, `${r.bits} bits`).toMatchObject({ same: true, shared: true });
      expect(r.found, `${r.bits} bits`).toBeGreaterThan(1000);
    }
    await page.close();
    expect(errors).toEqual([]);
  });

  it('runs the scalar build when asked (?build=scalar), with the same fingerprints', async () => {
    const page = await open('?build=scalar');
    expect(await page.evaluate(() => window.simhashDemo.lib.loadedBuild())).toBe('scalar');
    const texts = PAGE_TEXTS.filter((t) => t.length > 0);
    await page.evaluate(
      (docs) => window.simhashDemo.setDocuments(docs.map((text, i) => ({ name: `doc ${i}`, text }))),
      texts,
    );
    const summary = await page.evaluate(() => window.simhashDemo.run());
    expect(summary.build).toBe('scalar');
    expect(summary.fingerprints).toEqual(hexes(texts));
    await page.close();
    expect(errors).toEqual([]);
  });

  it('works from a bundler: a Vite build of `import { init, simhash } from "simhash-wasm"` runs in the browser', async () => {
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-vite-'));
    try {
      fs.mkdirSync(path.join(app, 'node_modules'));
      fs.symlinkSync(root, path.join(app, 'node_modules/simhash-wasm'), 'dir'); // resolved through package.json "exports"
      fs.writeFileSync(
        path.join(app, 'package.json'),
        JSON.stringify({ name: 'vite-app', private: true, type: 'module' }),
      );
      fs.writeFileSync(
        path.join(app, 'index.html'),
        '<!doctype html><pre id="out"></pre><script type="module" src="./app.js"></script>\n',
      );
      fs.writeFileSync(
        path.join(app, 'app.js'),
        `import { init, simhash, toHex, loadedBuild } from 'simhash-wasm';\n` +
          `await init();\n` +
          `document.getElementById('out').textContent = JSON.stringify({ build: loadedBuild(), fp: toHex(simhash(${JSON.stringify(PAGE_TEXTS[1])})) });\n`,
      );
      const vite = path.join(root, 'node_modules/vite/bin/vite.js');
      const built = await promisify(execFile)(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: app });
      expect(built.stderr + built.stdout).not.toMatch(/externalized|warn|error/i); // node: imports are marked for bundlers
      const bundled = await startServer({ root: path.join(app, 'dist'), port: 0 });
      try {
        const page = await browser.newPage();
        page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
        await page.goto(bundled.url);
        await page.waitForFunction(() => (document.getElementById('out')?.textContent ?? '') !== '');
        expect(JSON.parse((await page.textContent('#out'))!)).toEqual({
          build: 'simd',
          fp: hexes([PAGE_TEXTS[1]!])[0],
        });
        await page.close();
      } finally {
        await bundled.close();
      }
    } finally {
      fs.rmSync(app, { recursive: true, force: true });
    }
    expect(errors).toEqual([]);
  });

  it('reports bad settings on the page and keeps working afterwards', async () => {
    const page = await open();
    await page.click('#run');
    await page.waitForSelector('#status[data-state="error"]');
    expect(await page.textContent('#status')).toContain('Add some documents');
    await page.click('#sample');
    await page.fill('#k', '65');
    await page.click('#run');
    await page.waitForSelector('#status[data-state="error"]');
    expect(await page.textContent('#status')).toContain('k must be an integer from 0 to 64, got 65');
    await page.fill('#k', '3');
    await page.click('#run');
    await page.waitForSelector('#status[data-state="done"]');
    // Cancelling a large run stops the worker; the next run starts a fresh one.
    await page.click('#generate');
    const outcome = await page.evaluate(async () => {
      const running = window.simhashDemo.run();
      document.getElementById('cancel')!.click(); // before the worker can answer: deterministic
      return running.then(
        () => 'finished',
        (error: Error) => error.message,
      );
    });
    expect(outcome).toBe('cancelled');
    expect(await page.getAttribute('#status', 'data-state')).toBe('idle');
    expect(await page.textContent('#status')).toBe('Cancelled.');
    await page.click('#sample');
    await page.click('#run');
    await page.waitForSelector('#status[data-state="done"]');
    expect(await page.textContent('#status')).toContain('Done: 11 documents');
    await page.close();
    expect(errors).toEqual([]);
  });
});
