// The threaded APIs on the worker pool: simhashManyAsync (and the hasher's hashManyAsync), findNearDuplicates with
// threads > 1 and FingerprintIndex.queryManyAsync give exactly what one thread gives (compared with the
// single-thread calls, which the other suites check against plain references, and with the original
// implementations' vectors for the java and python-simhash presets); bad input fails before any worker gets work;
// a worker's error keeps its class and message and leaves the pool usable; the pool stays bounded and does not
// keep the process alive.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  FingerprintIndex,
  type SimHashInput,
  type SimHashOptions,
  createSimHasher,
  findNearDuplicates,
  simhashMany,
  simhashManyAsync,
  toHex,
} from '../../src/index.js';
import { findInThreads } from '../../src/join/find-near-duplicates.js';
import { planJoin } from '../../src/join/join-plan.js';
import { JOIN_TASK } from '../../src/join/join.js';
import { MAX_DOCUMENT_BYTES, readsStrings, shrinkingChunks } from '../../src/fingerprint/fingerprint.js';
import type { Plan } from '../../src/fingerprint/options.js';
import { type PackedTexts, packTexts } from '../../src/runtime/pool-texts.js';
import { MAX_THREADS, sharedPool } from '../../src/runtime/pool.js';
import { CHUNK_BUFFER_BYTES, keptBuffers, recycleBuffer, spareBuffer } from '../../src/runtime/spare-buffers.js';
import { wasm } from '../../src/runtime/wasm.js';
import { readOriginalVectors } from '../original-vectors.js';
import { randomDocument, rng } from '../reference.js';

const root = path.resolve(import.meta.dirname, '../..');

function sameWords(a: BigUint64Array, b: BigUint64Array): void {
  expect(a.length).toBe(b.length);
  expect(Array.from(a, (x) => x.toString(16))).toEqual(Array.from(b, (x) => x.toString(16)));
}

/** The outcome of a call that may throw: its error's class and message, or its value. */
async function outcome<T>(f: () => T | Promise<T>): Promise<{ error: string } | { value: T }> {
  try {
    return { value: await f() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

const OPTION_SETS: SimHashOptions[] = [
  {},
  { bits: 32 },
  { bits: 128 },
  { tokenizer: 'whitespace' },
  { tokenizer: 'words', bits: 128 },
  { tokenizer: 'shingles', width: 1 },
  { tokenizer: 'ngrams', width: 3, bits: 32 },
  { tokenizer: 'segmenter' },
  { normalize: 'NFKC', tokenizer: 'words' },
  { preset: 'java' },
  { preset: 'java', bits: 128 },
  { preset: 'python-simhash' },
  { preset: 'python-simhash', bits: 128 },
];

/** A batch mixing strings, UTF-8 bytes, feature lists and Maps (feature lists only where a preset takes them). */
function randomBatch(next: () => number, n: number, withFeatures: boolean): SimHashInput[] {
  const encoder = new TextEncoder();
  return Array.from({ length: n }, (): SimHashInput => {
    const text = randomDocument(next, 1 + Math.floor(next() * 40));
    const kind = next();
    if (kind < 0.3) return encoder.encode(text);
    if (withFeatures && kind < 0.4) return text.split(/\s+/).filter((w) => w.length > 0);
    if (withFeatures && kind < 0.45) return new Map(text.split(/\s+/).map((w, i) => [w, (i % 5) + 0.5] as const));
    return text;
  });
}

describe('simhashManyAsync', () => {
  it('equals simhashMany for every width, tokenizer and preset, 2 to 4 threads, texts only or mixed (seeded)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: OPTION_SETS.length - 1 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 2, max: 4 }),
        fc.integer(),
        fc.boolean(),
        async (o, n, threads, seed, withFeatures) => {
          const options = OPTION_SETS[o]!;
          // Texts only take the one-pass check and, packed as UTF-8, the worker's one-copy path.
          const batch = randomBatch(rng(seed), n, withFeatures);
          // Errors too (python-simhash rejects lone surrogates, say): the same class and message.
          const one = await outcome(() => createSimHasher(options).hashManyDetailed(batch));
          expect(await outcome(() => createSimHasher(options).hashManyDetailedAsync(batch, { threads }))).toEqual(one);
          const fps = 'value' in one ? one.value.fingerprints : undefined;
          expect(await outcome(() => simhashManyAsync(batch, { ...options, threads }))).toEqual(
            fps ? { value: fps } : one,
          );
        },
      ),
      { seed: 0x15a, numRuns: 60 },
    );
    expect(sharedPool().size).toBeLessThanOrEqual(4);
  });

  it('a worker copies a chunk packed as UTF-8 in one piece for the UTF-8 kernels, and only for them', () => {
    const next = rng(33);
    const encoder = new TextEncoder();
    const texts = Array.from({ length: 300 }, (_, i) => {
      const t = randomDocument(next, 1 + (i % 50));
      return i % 3 === 0 ? encoder.encode(t) : t;
    });
    for (const options of OPTION_SETS) {
      const hasher = createSimHasher(options) as unknown as {
        options: Plan;
        runPacked(packed: PackedTexts): { fingerprints: BigUint64Array; featureCounts: Float64Array } | null;
        hashManyDetailed(inputs: SimHashInput[]): { fingerprints: BigUint64Array; featureCounts: Float64Array };
      };
      const utf8 = !readsStrings(hasher.options);
      const got = hasher.runPacked(packTexts(texts, utf8));
      // The default preset's built-in tokenizers read UTF-8; presets that read strings, and normalization, do not.
      expect(got === null, JSON.stringify(options)).toBe(!utf8 || options.preset !== undefined);
      if (got) expect(got).toEqual(hasher.hashManyDetailed(texts));
      // Strings kept as strings (a plan that reads strings packs them so) never take the one-copy path.
      expect(hasher.runPacked(packTexts(texts, false))).toBeNull();
    }
  });

  it('splits a batch into contiguous chunks that shrink towards the end (seeded)', () => {
    const max = 4 << 20;
    const min = 256 << 10;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 64, max: 3 << 20 }), { maxLength: 400 }),
        fc.integer({ min: 2, max: 8 }),
        (work, threads) => {
          const total = work.reduce((a, b) => a + b, 0);
          const runs = shrinkingChunks(Float64Array.from(work), threads);
          let next = 0;
          let left = total;
          for (const [start, end] of runs) {
            expect(start).toBe(next);
            expect(end).toBeGreaterThan(start);
            const bytes = work.slice(start, end).reduce((a, b) => a + b, 0);
            // Within its share of what was left, unless one text alone is larger.
            const limit = Math.min(max, Math.max(min, left / (2 * threads)));
            if (end - start > 1) expect(bytes).toBeLessThanOrEqual(limit);
            if (end < work.length) expect(bytes + work[end]!).toBeGreaterThan(limit); // nothing left out that fit
            left -= bytes;
            next = end;
          }
          expect(next).toBe(work.length);
        },
      ),
      { seed: 0x5c, numRuns: 200 },
    );
    // 32 MiB of equal texts on 2 threads: full chunks first, then ever smaller ones down to the minimum.
    const runs = shrinkingChunks(new Float64Array(32 << 10).fill(1024), 2);
    const sizes = runs.map(([a, b]) => (b - a) * 1024);
    expect(sizes[0]).toBe(max);
    expect(sizes.at(-1)).toBeLessThanOrEqual(min);
    for (let i = 1; i < sizes.length - 1; i++) expect(sizes[i]).toBeLessThanOrEqual(sizes[i - 1]!);
  });

  it('reproduces the java and python-simhash vectors of the original implementations on two threads', async () => {
    for (const [file, preset] of [
      ['seed-java.jsonl', 'java'],
      ['python-simhash.jsonl', 'python-simhash'],
    ] as const) {
      const vectors = readOriginalVectors<{ bits: 64 | 128; text: string; fingerprint: string }>(file);
      for (const bits of [64, 128] as const) {
        const of = vectors.filter((v) => v.bits === bits);
        expect(of.length).toBeGreaterThan(0);
        const fps = await simhashManyAsync(
          of.map((v) => v.text),
          { preset, bits, threads: 2 },
        );
        const words = bits / 64;
        const hex = of.map((_, i) => toHex(words === 2 ? (fps[2 * i + 1]! << 64n) | fps[2 * i]! : fps[i]!, bits));
        expect(hex).toEqual(of.map((v) => v.fingerprint));
      }
    }
  });

  it('empty batches, batches of one and batches smaller than the thread count', async () => {
    for (const options of [{}, { bits: 128 as const }, { preset: 'python-simhash' as const }]) {
      sameWords(await simhashManyAsync([], { ...options, threads: 4 }), new BigUint64Array(0));
      sameWords(
        await simhashManyAsync(['one document'], { ...options, threads: 4 }),
        simhashMany(['one document'], options),
      );
      const three = ['a b c d', '', 'e f g h i j'];
      sameWords(await simhashManyAsync(three, { ...options, threads: 8 }), simhashMany(three, options));
      sameWords(await simhashManyAsync(three, options), simhashMany(three, options)); // default threads
    }
  });

  it('10^5 documents on two threads equal one thread', async () => {
    const next = rng(105);
    const docs = Array.from({ length: 100_000 }, () => randomDocument(next, 30));
    sameWords(await simhashManyAsync(docs, { threads: 2 }), simhashMany(docs));
    sameWords(
      await createSimHasher({ bits: 128 }).hashManyAsync(docs, { threads: 2 }),
      simhashMany(docs, { bits: 128 }),
    );
  });

  it('by default keeps small batches on this thread and starts no worker', async () => {
    await sharedPool().close();
    const docs = Array.from({ length: 1000 }, (_, i) => `small document number ${i}`);
    sameWords(await simhashManyAsync(docs), simhashMany(docs));
    const index = new FingerprintIndex();
    index.addMany(Uint32Array.from([1, 2, 3]), simhashMany(docs.slice(0, 3)));
    expect(await index.queryManyAsync(simhashMany(docs), 3)).toEqual(index.queryMany(simhashMany(docs), 3));
    index.free();
    expect(sharedPool().size).toBe(0);
  });

  it('runs a tokenizer function on the calling thread, with the same fingerprints', async () => {
    await sharedPool().close();
    const tokenizer = (text: string) => text.split('').reverse();
    const docs = ['abc', 'hello world', ''];
    sameWords(await simhashManyAsync(docs, { tokenizer, threads: 4 }), simhashMany(docs, { tokenizer }));
    expect(sharedPool().size).toBe(0); // no worker started
  });

  it('rejects bad input and options with one thread’s error before any worker gets work', async () => {
    await sharedPool().close();
    const huge = new Uint8Array(MAX_DOCUMENT_BYTES + 1);
    const detached = new Uint8Array(8);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    const cases: Array<[SimHashInput[], SimHashOptions & { threads?: number }]> = [
      [['fine', 42 as unknown as string], {}],
      [['fine', huge], {}],
      [['fine', detached], {}],
      [['fine', [['feature', Number.NaN]]], {}],
      [['x'], { bits: 7 as 32 }],
      [['x'], { threads: 0 }],
      [['x'], { threads: MAX_THREADS + 1 }],
      [['x'], { threads: 1.5 }],
      [['x'], { threads: '2' as unknown as number }],
    ];
    for (const [batch, options] of cases) {
      const { threads: _t, ...hashOptions } = options;
      const async = await outcome(() => simhashManyAsync(batch, { threads: 2, ...options }));
      expect('error' in async, JSON.stringify(options)).toBe(true);
      if (_t === undefined) expect(async).toEqual(await outcome(() => simhashMany(batch, hashOptions)));
      else expect((async as { error: string }).error).toMatch(/threads must be/);
    }
    await expect(simhashManyAsync('text' as never, { threads: 2 })).rejects.toThrow(TypeError);
    await expect(createSimHasher().hashManyAsync(['x'], { threds: 2 } as never)).rejects.toThrow(
      /unknown option "threds"/,
    );
    expect(sharedPool().size).toBe(0); // nothing reached a worker
  });

  it('a bad option rejects with the class and message of one thread; the pool stays usable', async () => {
    // The locale is checked with the options, before any text is hashed or any worker is asked (a worker's own
    // failure keeping its class is test/runtime/pool.test.ts's).
    const options: SimHashOptions = { tokenizer: 'segmenter', locale: '!!' };
    const docs = Array.from({ length: 50 }, (_, i) => `document ${i}`);
    const one = await outcome(() => simhashMany(docs, options));
    expect(one).toEqual({
      error: `RangeError: locale must be a BCP 47 language tag such as 'ja' or 'zh-Hant', got "!!"`,
    });
    expect(await outcome(() => simhashManyAsync(docs, { ...options, threads: 2 }))).toEqual(one);
    // A batch of several chunks, each failing in its worker: still one error, the same.
    const large = Array.from({ length: 4000 }, (_, i) => `document ${i} `.repeat(30));
    expect(await outcome(() => simhashManyAsync(large, { ...options, threads: 2 }))).toEqual(one);
    sameWords(await simhashManyAsync(docs, { threads: 2 }), simhashMany(docs));
    sameWords(await simhashManyAsync(large, { threads: 2 }), simhashMany(large));
  });

  it('keeps a few chunk buffers while calls come, and lets them go once the pool is idle', async () => {
    const next = rng(21);
    const docs = Array.from({ length: 12_000 }, () => randomDocument(next, 120)); // several chunks
    const want = simhashMany(docs);
    for (let round = 0; round < 3; round++) sameWords(await simhashManyAsync(docs, { threads: 2 }), want);
    expect(keptBuffers()).toBeGreaterThan(0);
    expect(keptBuffers()).toBeLessThanOrEqual(8);
    // A buffer handed out is never one still held for reuse, whatever its size.
    const a = spareBuffer(100);
    const b = spareBuffer(CHUNK_BUFFER_BYTES);
    expect(a).not.toBe(b);
    expect(a.byteLength).toBe(CHUNK_BUFFER_BYTES);
    expect(spareBuffer(CHUNK_BUFFER_BYTES + 1).byteLength).toBe(CHUNK_BUFFER_BYTES + 1);
    recycleBuffer(a);
    recycleBuffer(b);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(keptBuffers()).toBe(0);
  });

  it('repeated calls reuse the same workers and grow neither their memory nor this thread’s', async () => {
    const next = rng(7);
    const docs = Array.from({ length: 20_000 }, () => randomDocument(next, 20));
    const want = simhashMany(docs);
    const fps = planted(1_000_000, 64, 8);
    const pairs = pairStrings(findNearDuplicates(fps, { k: 3 }));
    const index = new FingerprintIndex();
    index.addMany(
      Uint32Array.from({ length: 20_000 }, (_, i) => i),
      want,
    );
    const answers = index.queryMany(want, 3);
    const round = async () => {
      sameWords(await simhashManyAsync(docs, { threads: 2 }), want);
      expect(pairStrings(await findNearDuplicates(fps, { k: 3, threads: 2 }))).toEqual(pairs);
      expect(await index.queryManyAsync(want, 3, { threads: 2 })).toEqual(answers);
    };
    await round();
    await round();
    // The join and one-thread tasks run on the first worker: its memory is the one the join grows.
    const memory = () =>
      sharedPool().run<{ heap: number; residents: number; postedModule: boolean }>('worker-memory', null, 1);
    const heap = wasm().heap.byteLength;
    const worker = await memory();
    expect(worker.postedModule).toBe(true); // the main thread's compiled module, not a compile of its own
    const workers = sharedPool().size;
    for (let i = 0; i < 2; i++) await round();
    expect(sharedPool().size).toBe(workers);
    expect(workers).toBeLessThanOrEqual(4); // earlier tests asked for up to 4
    expect(wasm().heap.byteLength).toBe(heap);
    expect(await memory()).toEqual(worker);
    expect(worker.residents).toBeGreaterThan(0); // the index copy is there...
    index.free();
    expect((await memory()).residents).toBe(worker.residents - 1); // ...and goes with the index
  });

  it('does not keep the process alive', async () => {
    const script = `
      import { init, simhashManyAsync, findNearDuplicates } from ${JSON.stringify(path.join(root, 'src/index.ts'))};
      await init();
      const fps = await simhashManyAsync(['a b c', 'd e f'], { threads: 2 });
      await findNearDuplicates(fps, { k: 3, threads: 2 });
      console.log('done');
    `;
    const file = path.join(root, 'build/threads-exit.test.mts');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, script);
    try {
      const started = Date.now();
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
        cwd: root,
        timeout: 60_000,
      });
      expect(stdout.trim()).toBe('done');
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});

/** n random fingerprints with planted near-duplicates (every tenth one within 3 bits of another). */
function planted(n: number, bits: 64 | 128, seed: number): BigUint64Array {
  const words = bits / 64;
  const next = rng(seed);
  const word = () => BigInt(Math.floor(next() * 2 ** 32)) | (BigInt(Math.floor(next() * 2 ** 32)) << 32n);
  const fps = new BigUint64Array(n * words);
  for (let i = 0; i < n * words; i++) fps[i] = word();
  for (let i = 10; i < n; i += 10) {
    const from = Math.floor(next() * i);
    for (let w = 0; w < words; w++) fps[i * words + w] = fps[from * words + w]!;
    for (let f = Math.floor(next() * 4); f > 0; f--) {
      const bit = Math.floor(next() * bits);
      fps[i * words + (bit >> 6)]! ^= 1n << BigInt(bit & 63);
    }
  }
  return fps;
}

function pairStrings(p: { a: Uint32Array; b: Uint32Array; distance: Uint8Array }): string[] {
  return Array.from(p.a, (a, i) => `${a},${p.b[i]},${p.distance[i]}`);
}

describe('findNearDuplicates on N threads', () => {
  it('gives one thread’s pairs for 2, 3 and 4 threads at 64 and 128 bits, every k', async () => {
    for (const bits of [64, 128] as const) {
      const n = 3000;
      const fps = planted(n, bits, bits);
      for (const k of [0, 1, 3, 6]) {
        const one = pairStrings(findNearDuplicates(fps, { k, bits }));
        expect(one.length).toBeGreaterThan(0);
        for (const threads of [2, 3, 4]) {
          // Small joins stay on one thread: the threaded path is forced with the planned tables.
          const plan = planJoin(n, k, bits);
          expect(
            pairStrings(await findInThreads(fps, plan, threads)),
            `bits ${bits} k ${k} threads ${threads}`,
          ).toEqual(one);
          expect(pairStrings(await findNearDuplicates(fps, { k, bits, threads }))).toEqual(one);
        }
      }
    }
  });

  it('runs a join above the cut-over on the pool, with the same pairs; the caller keeps its fingerprints', async () => {
    const fps = planted(1_000_000, 64, 11);
    const before = fps.slice();
    const one = findNearDuplicates(fps, { k: 3 });
    const run = vi.spyOn(sharedPool(), 'run');
    try {
      for (let round = 0; round < 3; round++) {
        // The worker gets a transferred copy (in a buffer recycled from the round before): never the caller's.
        const promise = findNearDuplicates(fps, { k: 3, threads: 2 });
        expect(promise).toBeInstanceOf(Promise);
        expect(pairStrings(await promise)).toEqual(pairStrings(one));
        expect(fps.length).toBe(before.length);
        expect(fps.every((x, i) => x === before[i])).toBe(true);
      }
      const sent = run.mock.calls.map((c) => [c[0], (c[1] as { fps: BigUint64Array }).fps]);
      // Both shares in workers, each round: this thread only plans, copies and merges.
      expect(sent.map(([kind]) => kind)).toEqual(new Array(6).fill(JOIN_TASK));
      for (const [, copy] of sent) expect(copy === fps).toBe(false);
    } finally {
      run.mockRestore();
    }
  });

  it('walks no share of a threaded join on the calling thread: the workers walk them all', async () => {
    const fps = planted(1_000_000, 64, 12);
    // This thread's join kernels, counted: the walk of a share is histogram and scatter passes over its tables.
    const rt = wasm() as { kernels: object };
    const real = rt.kernels;
    let walks = 0;
    rt.kernels = new Proxy(real, {
      get(target, key) {
        if (typeof key === 'string' && /^join(Histogram|Scatter)/.test(key)) walks++;
        return Reflect.get(target, key);
      },
    });
    try {
      const one = findNearDuplicates(fps, { k: 3 });
      expect(walks).toBeGreaterThan(0); // one thread walks here, and the count sees it
      walks = 0;
      const pairs = await findNearDuplicates(fps, { k: 3, threads: 2 });
      expect(walks).toBe(0);
      expect(pairStrings(pairs)).toEqual(pairStrings(one));
    } finally {
      rt.kernels = real;
    }
  });

  it('threads: 1 stays synchronous; bad thread counts are errors', () => {
    const fps = planted(100, 64, 3);
    expect(findNearDuplicates(fps, { k: 3, threads: 1 })).not.toBeInstanceOf(Promise);
    expect(() => findNearDuplicates(fps, { k: 3, threads: MAX_THREADS + 1 })).toThrow(
      new RangeError(`threads must be an integer from 1 to ${MAX_THREADS}, got ${MAX_THREADS + 1}`),
    );
    expect(() => findNearDuplicates(fps, { k: 3, threads: 0 })).toThrow(RangeError);
    expect(() => findNearDuplicates(fps, { k: 3, threads: '2' as unknown as number })).toThrow(TypeError);
  });
});

describe('FingerprintIndex.queryManyAsync', () => {
  it('equals queryMany at 64 and 128 bits, number and string ids, through changes (seeded)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(64 as const, 128 as const),
        fc.boolean(),
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 2, max: 3 }),
        fc.integer(),
        async (bits, strings, n, k, threads, seed) => {
          const words = bits / 64;
          const fps = planted(n, bits, seed);
          const index = new FingerprintIndex({ bits, maxDistance: 3 });
          try {
            const ids = strings
              ? Array.from({ length: n }, (_, i) => `id-${i}`)
              : Uint32Array.from({ length: n }, (_, i) => i);
            index.addMany(ids, fps);
            const queries = planted(500, bits, seed + 1);
            queries.set(fps.subarray(0, Math.min(fps.length, queries.length)));
            expect(await index.queryManyAsync(queries, k, { threads })).toEqual(index.queryMany(queries, k));
            // A change makes a new version: the workers' copies are replaced, not reused.
            if (n > 1) index.remove(strings ? 'id-0' : 0);
            index.add(strings ? 'extra' : n + 1, words === 2 ? (fps[1]! << 64n) | fps[0]! : fps[0]!);
            expect(await index.queryManyAsync(queries, k, { threads })).toEqual(index.queryMany(queries, k));
          } finally {
            index.free();
          }
        },
      ),
      { seed: 0x15b, numRuns: 12 },
    );
  });

  it('sends the index to the workers once per version', async () => {
    const fps = planted(5000, 64, 5);
    const index = new FingerprintIndex();
    index.addMany(
      Uint32Array.from({ length: 5000 }, (_, i) => i),
      fps,
    );
    const encode = vi.spyOn(index as unknown as { encode: (...args: unknown[]) => Uint8Array }, 'encode');
    try {
      const want = index.queryMany(fps, 3);
      for (let i = 0; i < 3; i++) expect(await index.queryManyAsync(fps, 3, { threads: 2 })).toEqual(want);
      expect(encode).toHaveBeenCalledTimes(1);
      // One snapshot in shared memory that both workers read (Node shares memory with its workers), without the
      // checksum of serialize(): the calling thread copies the index once and hashes nothing.
      const snapshot = encode.mock.results[0]!.value as Uint8Array;
      expect(snapshot.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(encode.mock.calls[0]![0]).toBeNull();
      index.add(99_999, 12345n);
      expect(await index.queryManyAsync(fps, 3, { threads: 2 })).toEqual(index.queryMany(fps, 3));
      expect(encode).toHaveBeenCalledTimes(2);
      // Bad input fails like queryMany, before any worker gets work.
      await expect(index.queryManyAsync(new BigUint64Array(1), 9)).rejects.toThrow(RangeError);
      await expect(index.queryManyAsync([1n] as never, 3)).rejects.toThrow(TypeError);
      await expect(index.queryManyAsync(fps, 3, { threads: 0 })).rejects.toThrow(/threads must be an integer/);
    } finally {
      index.free();
    }
    await expect(index.queryManyAsync(fps, 3, { threads: 2 })).rejects.toThrow(/used after free/);
  });

  it('where memory cannot be shared (a browser page that is not cross-origin isolated), each worker gets a copy', async () => {
    const fps = planted(2000, 128, 8);
    const index = new FingerprintIndex({ bits: 128 });
    const ids = Array.from({ length: 2000 }, (_, i) => `\u{dc00}-${i}`); // lone surrogates survive the hand-over
    index.addMany(ids, fps);
    const encode = vi.spyOn(index as unknown as { encode: (...args: unknown[]) => Uint8Array }, 'encode');
    const global = globalThis as { crossOriginIsolated?: boolean };
    global.crossOriginIsolated = false;
    try {
      expect(await index.queryManyAsync(fps, 3, { threads: 2 })).toEqual(index.queryMany(fps, 3));
      const snapshot = encode.mock.results[0]!.value as Uint8Array;
      expect(snapshot.buffer).toBeInstanceOf(ArrayBuffer);
      // The cached snapshot is intact: the workers were sent copies, not the snapshot's buffer.
      expect(snapshot.byteLength).toBeGreaterThan(2000 * 16);
      expect(await index.queryManyAsync(fps, 2, { threads: 2 })).toEqual(index.queryMany(fps, 2));
    } finally {
      delete global.crossOriginIsolated;
      index.free();
    }
  });
});
