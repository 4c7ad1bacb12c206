// Issue 13: every mutation of a FingerprintIndex is all-or-nothing (memory exhaustion included), string ids
// of any kind and count round-trip, deserialize checks what the caller expects, and misuse gets the library's
// errors. Expected query results come from a brute-force scan over a Map kept beside the index.
import { describe, expect, it } from 'vitest';
import { FingerprintIndex, type FingerprintId, type Neighbors } from '../../src/index.js';
import { columns, type Neighbor } from './neighbors.js';
import { wasm } from '../../src/runtime/wasm.js';
import { checksum, setStringMapCapacity } from '../../src/fingerprint-index/fingerprint-index.js';
import { withHeapLimit } from '../runtime/heap-limit.js';
import { xorshiftRng } from '../reference.js';

const rng = xorshiftRng;
const M64 = 0xffffffffffffffffn;

function popcount(x: bigint): number {
  let n = 0;
  for (; x > 0n; x &= x - 1n) n++;
  return n;
}

/** Brute force: every (id, distance) of the model within k, by distance then id. */
function reference(model: Map<FingerprintId, bigint>, q: bigint, k: number): Neighbors<FingerprintId[]> {
  const out: Neighbor[] = [];
  for (const [id, fp] of model) {
    const distance = popcount(fp ^ q);
    if (distance <= k) out.push({ id, distance });
  }
  return columns(
    out.sort(
      (a, b) =>
        a.distance - b.distance ||
        (typeof a.id === 'number' ? (a.id as number) - (b.id as number) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    ),
  );
}

function randomFp(r: () => number, bits: number): bigint {
  let x = 0n;
  for (let i = 0; i < bits; i += 32) x = (x << 32n) | BigInt(Math.floor(r() * 2 ** 32));
  // Keep 128-bit fingerprints clear of the 64-bit mix-up check (their upper word is never 0 here).
  return bits === 128 && x >> 64n === 0n ? x | (1n << 100n) : x;
}

function near(r: () => number, fp: bigint, flips: number, bits: number): bigint {
  const positions = new Set<number>();
  while (positions.size < flips) positions.add(Math.floor(r() * bits));
  for (const p of positions) fp ^= 1n << BigInt(p);
  return fp;
}

function toWords(fps: readonly bigint[], bits: number): BigUint64Array {
  const w = bits / 64;
  const out = new BigUint64Array(fps.length * w);
  fps.forEach((fp, i) => {
    out[i * w] = fp & M64;
    if (w === 2) out[i * w + 1] = fp >> 64n;
  });
  return out;
}

/** Everything observable about an index, and the heap blocks in use. */
function snapshot(index: FingerprintIndex, queries: BigUint64Array, probe: readonly FingerprintId[]): unknown {
  const state = {
    size: index.size,
    explain: index.explain(),
    bytes: Buffer.from(index.serialize()).toString('base64'), // a string: compared much faster than a Uint8Array
    results: index.queryMany(queries),
    has: probe.map((id) => index.has(id)),
    heapLive: 0,
  };
  state.heapLive = wasm().heap.liveBytes;
  return state;
}

/** Runs `fn` with the `n`th heap allocation failing like exhausted memory; returns what it threw. */
function failingAllocation(n: number, fn: () => void): unknown {
  const heap = wasm().heap as unknown as { alloc(bytes: number): number };
  const alloc = heap.alloc;
  let count = 0;
  heap.alloc = function (this: unknown, bytes: number): number {
    if (++count === n) throw new RangeError(`cannot allocate ${bytes} bytes: injected failure of allocation ${n}`);
    return alloc.call(this, bytes);
  };
  try {
    fn();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    delete (heap as { alloc?: unknown }).alloc;
  }
}

/**
 * Fails the 1st, 2nd, … allocation of `op` in turn, checking after each failure that the index is exactly as
 * before; then lets `op` succeed. Returns how many allocation points it failed.
 */
function allOrNothing(
  index: FingerprintIndex,
  op: () => void,
  queries: BigUint64Array,
  probe: readonly FingerprintId[],
  label: string,
): number {
  const before = snapshot(index, queries, probe);
  for (let n = 1; ; n++) {
    const error = failingAllocation(n, op);
    if (error === undefined) return n - 1;
    expect(error, `${label}: allocation ${n}`).toBeInstanceOf(RangeError);
    expect((error as Error).message, `${label}: allocation ${n}`).toMatch(/injected failure/);
    expect(snapshot(index, queries, probe), `${label}: allocation ${n} failed`).toEqual(before);
  }
}

function checkModel(index: FingerprintIndex, model: Map<FingerprintId, bigint>, qs: bigint[], label: string): void {
  expect(index.size, label).toBe(model.size);
  for (const q of qs) expect(index.query(q), label).toEqual(reference(model, q, index.maxDistance));
}

describe('every mutation is all-or-nothing', () => {
  for (const bits of [64, 128] as const) {
    for (const kind of ['number', 'string'] as const) {
      it(`each allocation of addMany, add, remove, compact and merges fails cleanly (${bits} bits, ${kind} ids)`, () => {
        const r = rng(bits + (kind === 'string' ? 1 : 0) * 17);
        const id = (i: number): FingerprintId => (kind === 'number' ? (i * 2654435761) >>> 0 : `d${i}\uD800`);
        const index = new FingerprintIndex({ bits, maxDistance: 3 });
        const model = new Map<FingerprintId, bigint>();
        const bases = Array.from({ length: 40 }, () => randomFp(r, bits));
        const fp = (): bigint => near(r, bases[Math.floor(r() * bases.length)]!, Math.floor(r() * 5), bits);
        const qs = Array.from({ length: 12 }, () => fp());
        const queries = toWords(qs, bits);
        const probe = [id(0), id(1), id(1500), id(2000), id(5000)];
        let points = 0;
        const step = (label: string, op: () => void): void => {
          points += allOrNothing(index, op, queries, probe, label);
        };

        // A bulk build into the empty index, ids in no order (sorted in WASM).
        const first = Array.from({ length: 1500 }, (_, i) => id(i));
        const firstFps = first.map(() => fp());
        step('addMany into an empty index', () => index.addMany(first, toWords(firstFps, bits)));
        first.forEach((x, i) => model.set(x, firstFps[i]!));
        checkModel(index, model, qs, 'after addMany');
        // Single adds: the buffer grows, then fills and is merged with the one that overflows it.
        for (let i = 1500; i < 1800; i++) {
          const f = fp();
          step(`add ${i}`, () => index.add(id(i), f));
          model.set(id(i), f);
        }
        checkModel(index, model, qs, 'after adds');
        // A few removes and adds pending, then a batch: the merge takes the sorted part, the buffer and the batch.
        for (let i = 0; i < 10; i++) {
          step(`remove ${i}`, () => expect(index.remove(id(i))).toBe(true));
          model.delete(id(i));
        }
        for (let i = 1800; i < 1810; i++) {
          const f = fp();
          step(`add ${i}`, () => index.add(id(i), f));
          model.set(id(i), f);
        }
        const batch = Array.from({ length: 200 }, (_, i) => id(2000 + i));
        const batchFps = batch.map(() => fp());
        step('addMany with a buffer and removals pending', () => index.addMany(batch, toWords(batchFps, bits)));
        batch.forEach((x, i) => model.set(x, batchFps[i]!));
        checkModel(index, model, qs, 'after the second addMany');
        // Removes until the pending removals trigger a purge (at 1024): that remove rebuilds everything.
        let purged = false;
        for (let i = 10; !purged; i++) {
          const pending = index.explain().removedPending;
          if (pending >= 1020) step(`remove ${i}`, () => expect(index.remove(id(i))).toBe(true));
          else expect(index.remove(id(i))).toBe(true);
          model.delete(id(i));
          purged = index.explain().removedPending === 0;
        }
        checkModel(index, model, qs, 'after the purge');
        for (let i = 1810; i < 1830; i++) {
          const f = fp();
          index.add(id(i), f);
          model.set(id(i), f);
          if (i % 3 === 0) {
            index.remove(id(i - 1));
            model.delete(id(i - 1));
          }
        }
        step('compact', () => index.compact());
        expect(index.explain()).toMatchObject({ buffered: 0, removedPending: 0 });
        checkModel(index, model, qs, 'after compact');
        // Still usable: a later add and a round trip.
        const f = fp();
        index.add(id(9999), f);
        model.set(id(9999), f);
        checkModel(index, model, qs, 'after a later add');
        const again = FingerprintIndex.deserialize(index.serialize());
        checkModel(again, model, qs, 'round trip');
        // A bulk build in id order into an empty index keeps the batch's blocks (another code path).
        const ordered = new FingerprintIndex({ bits, maxDistance: 3 });
        const ids = kind === 'number' ? Uint32Array.from({ length: 3000 }, (_, i) => i * 3) : first;
        const fresh = Array.from({ length: ids.length }, () => fp());
        points += allOrNothing(
          ordered,
          () => ordered.addMany(ids, toWords(fresh, bits)),
          queries,
          [ids[0]!],
          'addMany in id order',
        );
        const orderedModel = new Map<FingerprintId, bigint>();
        Array.from(ids as ArrayLike<FingerprintId>).forEach((x, i) => orderedModel.set(x, fresh[i]!));
        checkModel(ordered, orderedModel, qs, 'ordered');
        expect(points).toBeGreaterThan(30);
        index.free();
        again.free();
        ordered.free();
      });
    }
  }

  it('addMany past the memory limit (heap limit sweep) leaves size, ids and tables as they were; the retry succeeds', () => {
    const r = rng(13);
    const index = new FingerprintIndex({ maxDistance: 3 });
    const model = new Map<FingerprintId, bigint>();
    const base = Array.from({ length: 3000 }, () => randomFp(r, 64));
    index.addMany(
      base.map((_, i) => i + 1_000_000),
      toWords(base, 64),
    );
    base.forEach((fp, i) => model.set(i + 1_000_000, fp));
    index.add(5, 5n);
    model.set(5, 5n);
    const n = 20_000;
    const ids = Uint32Array.from({ length: n }, (_, i) => i * 2 + 6);
    const fps = Array.from({ length: n }, () => randomFp(r, 64));
    const words = toWords(fps, 64);
    const qs = [...base.slice(0, 10), ...fps.slice(0, 10)].map((fp) => near(r, fp, 2, 64));
    const queries = toWords(qs, 64);
    const probe = [6, 5, 1_000_000];
    const tablesBefore = index.explain().tables.length;
    expect(tablesBefore).toBeGreaterThan(0);
    let failures = 0;
    for (let headroom = 0; ; headroom += 40_000) {
      const before = snapshot(index, queries, probe);
      let error: unknown;
      try {
        withHeapLimit(headroom, () => index.addMany(ids, words));
      } catch (e) {
        error = e;
      }
      if (error === undefined) break;
      // Too small a limit is caught up front ("cannot add"); the rest fail at some allocation ("cannot allocate").
      expect((error as Error).message).toMatch(/cannot allocate|cannot add/);
      if (/cannot allocate/.test((error as Error).message)) failures++;
      expect(snapshot(index, queries, probe), `headroom ${headroom}`).toEqual(before);
      expect(index.explain().tables.length).toBe(tablesBefore);
    }
    expect(failures).toBeGreaterThan(3);
    ids.forEach((id, i) => model.set(id, fps[i]!));
    checkModel(index, model, qs, 'after the retry');
    index.free();
  });
});

describe('huge batches', () => {
  it('an addMany that cannot fit in WebAssembly memory fails up front, naming the sizes', () => {
    const index = new FingerprintIndex();
    index.add(1, 1n);
    const heap = wasm().heap;
    const limit = heap.limit;
    heap.limit = 1_000_000; // stands for the 4 GiB limit: 10^5 entries need at least 2·10^6 bytes
    try {
      const ids = Uint32Array.from({ length: 100_000 }, (_, i) => i + 2);
      expect(() => index.addMany(ids, new BigUint64Array(100_000))).toThrow(
        /cannot add 100000 fingerprints to an index of 1: that needs more than \d+ bytes/,
      );
    } finally {
      heap.limit = limit;
    }
    expect(index.size).toBe(1);
    expect(index.query(1n, 0)).toEqual(columns([{ id: 1, distance: 0 }]));
    index.free();
  });
});

describe('string ids', () => {
  it('lone surrogates and other UTF-16 edge cases round-trip exactly through serialize/deserialize', () => {
    const ids = ['\uD800', '\uDC00', 'a\uDFFFb', '\uDC00\uD800', '\uD83D\uDE00', '\uFFFD', '', 'x'.repeat(5000)];
    const index = new FingerprintIndex({ maxDistance: 2 });
    index.addMany(ids, new BigUint64Array(ids.map((_, i) => BigInt(i) * 0x1111n)));
    const back = FingerprintIndex.deserialize(index.serialize());
    expect(back.size).toBe(ids.length);
    for (const [i, id] of ids.entries()) {
      expect(back.has(id), JSON.stringify(id)).toBe(true);
      expect(back.query(BigInt(i) * 0x1111n, 0)).toEqual(columns([{ id, distance: 0 }]));
    }
    // A single lone surrogate comes back as itself, not U+FFFD.
    const one = new FingerprintIndex();
    one.add('\uDBFF', 7n);
    const oneBack = FingerprintIndex.deserialize(one.serialize());
    expect(oneBack.query(7n)).toEqual(columns([{ id: '\uDBFF', distance: 0 }]));
    expect(oneBack.has('\uFFFD')).toBe(false);
    for (const x of [index, back, one, oneBack]) x.free();
  });

  it('removed string ids release their memory: JS heap flat over 10^6 add/remove cycles', () => {
    const gc = (globalThis as { gc?: () => void }).gc!;
    const index = new FingerprintIndex();
    for (let i = 0; i < 1000; i++) index.add(`keep-${i}`, BigInt(i));
    const cycle = (from: number, to: number): void => {
      for (let i = from; i < to; i++) {
        index.add(`cycle-${i}`, BigInt(i));
        index.remove(`cycle-${i}`);
      }
    };
    cycle(0, 100_000); // warm up: the buffer, the maps and the JIT reach their steady state
    gc();
    const before = process.memoryUsage().heapUsed;
    cycle(100_000, 1_100_000);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(grown, `heap grew by ${grown} bytes`).toBeLessThan(2_000_000);
    expect(index.size).toBe(1000);
    expect(index.query(5n, 0)).toEqual(columns([{ id: 'keep-5', distance: 0 }]));
    index.free();
  });

  it("past a Map's capacity (injected: 64 entries per Map, so 5000 ids need chains of Maps) nothing is lost", () => {
    // The store never puts more than its capacity (2^23 by default) in one Map, so JavaScript's 2^24 limit is
    // out of reach by construction; this exercises the same code with a capacity small enough to fill.
    setStringMapCapacity(64);
    let index: FingerprintIndex;
    try {
      index = new FingerprintIndex({ maxDistance: 1 });
    } finally {
      setStringMapCapacity(undefined);
    }
    const n = 5000;
    const ids = Array.from({ length: n }, (_, i) => `b${i}`);
    const fps = new BigUint64Array(n).map((_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n) & M64);
    index.addMany(ids.slice(0, 4000), fps.slice(0, 4000));
    for (let i = 4000; i < n; i++) index.add(ids[i]!, fps[i]!);
    expect(index.size).toBe(n);
    for (let i = 0; i < n; i += 7) {
      expect(index.has(ids[i]!)).toBe(true);
      expect(index.query(fps[i]!, 0)).toEqual(columns([{ id: ids[i]!, distance: 0 }]));
    }
    expect(() => index.add('b0', 1n)).toThrow(/already/);
    expect(() => index.addMany(['fresh', 'b4999'], new BigUint64Array(2))).toThrow(/b4999.*already/);
    expect(index.has('fresh')).toBe(false);
    for (let i = 0; i < n; i += 2) expect(index.remove(ids[i]!)).toBe(true);
    expect(index.has('b0')).toBe(false);
    index.add('b0', 1n);
    const back = FingerprintIndex.deserialize(index.serialize());
    expect(back.size).toBe(n / 2 + 1);
    expect(back.query(1n, 0)).toEqual(columns([{ id: 'b0', distance: 0 }]));
    expect(back.query(fps[4999]!, 0)).toEqual(columns([{ id: 'b4999', distance: 0 }]));
    index.free();
    back.free();
  });
});

describe('deserialize expectations and index widths', () => {
  it('deserialize checks bits and maxDistance when given (RangeError naming both values)', () => {
    const wide = new FingerprintIndex({ bits: 128, maxDistance: 6 });
    wide.add(1, (3n << 64n) | 1n);
    const bytes = wide.serialize();
    expect(() => FingerprintIndex.deserialize(bytes, { bits: 64 })).toThrow(RangeError);
    expect(() => FingerprintIndex.deserialize(bytes, { bits: 64 })).toThrow(/128-bit.*64-bit/);
    expect(() => FingerprintIndex.deserialize(bytes, { maxDistance: 3 })).toThrow(/maxDistance 6.*3 was expected/);
    expect(() => FingerprintIndex.deserialize(bytes, { bits: 32 as 64 })).toThrow(RangeError);
    expect(() => FingerprintIndex.deserialize(bytes, { foo: 1 } as never)).toThrow(TypeError);
    const ok = FingerprintIndex.deserialize(bytes, { bits: 128, maxDistance: 6 });
    expect(ok.query((3n << 64n) | 1n)).toEqual(columns([{ id: 1, distance: 0 }]));
    ok.free();
    wide.free();
  });

  it('a 64-bit fingerprint against a 128-bit index, and a 128-bit one against a 64-bit index, are RangeErrors naming the widths', () => {
    const wide = new FingerprintIndex({ bits: 128, maxDistance: 3 });
    const narrow = new FingerprintIndex({ bits: 64, maxDistance: 3 });
    const fp64 = 0x0123456789abcdefn;
    const fp128 = (0xfedcba9876543210n << 64n) | fp64;
    expect(() => wide.query(fp64)).toThrow(/64-bit.*128-bit/);
    expect(() => wide.add(1, fp64)).toThrow(/64-bit.*128-bit/);
    expect(() => narrow.query(fp128)).toThrow(/64-bit.*128 bits/);
    expect(() => narrow.add(1, fp128)).toThrow(RangeError);
    expect(wide.size + narrow.size).toBe(0);
    // 0 is a valid fingerprint of either width (a featureless document).
    expect(wide.query(0n)).toEqual(columns([]));
    wide.free();
    narrow.free();
  });

  it('addMany, queryMany and queryManyAsync refuse the 64-bit fingerprint that add and query refuse, as words (low, then 0)', async () => {
    const wide = new FingerprintIndex({ bits: 128, maxDistance: 3 });
    const fp64 = 0x0123456789abcdefn;
    const fp128 = (0xfedcba9876543210n << 64n) | fp64;
    wide.add(1, fp128);
    // [fp64, 0n] is the value fp64 in addMany's layout, the one add(2, fp64) refuses.
    expect(() => wide.add(2, fp64)).toThrow(/64-bit.*128-bit/);
    const batch = new BigUint64Array([fp128 & M64, fp128 >> 64n, fp64, 0n]);
    expect(() => wide.addMany([2, 3], batch)).toThrow(RangeError);
    expect(() => wide.addMany([2, 3], batch)).toThrow(/fingerprints\[2\.\.3\] \(ids\[1\] 3\).*64-bit.*128-bit/);
    expect(() => wide.addMany(['x', 'y'] as never, batch)).toThrow(TypeError); // the id kind is checked first
    expect(() => wide.addMany(Uint32Array.of(2, 3), batch)).toThrow(/ids\[1\] 3/);
    expect(wide.size).toBe(1);
    expect(wide.has(2) || wide.has(3)).toBe(false);
    expect(() => wide.queryMany(new BigUint64Array([0n, 0n, fp64, 0n]))).toThrow(/\(query 1\).*64-bit.*128-bit/);
    await expect(wide.queryManyAsync(new BigUint64Array([fp64, 0n]), 3, { threads: 2 })).rejects.toThrow(/query 0/);
    // Fingerprint 0, and any fingerprint with a non-zero high word, are 128-bit fingerprints as add takes them.
    wide.addMany([4, 5], new BigUint64Array([0n, 0n, fp64, 1n]));
    expect(wide.queryMany(new BigUint64Array([0n, 0n, fp64, 1n]), 0).map((r) => [...r.id])).toEqual([[4], [5]]);
    wide.free();
  });

  it('deserialize still loads a file whose 128-bit fingerprint has a high word of 0 (addMany took them before)', () => {
    const wide = new FingerprintIndex({ bits: 128, maxDistance: 3 });
    wide.add(1, (7n << 64n) | 5n);
    const bytes = wide.serialize();
    wide.free();
    // The fingerprints follow the header padded to 8 bytes (format.ts); the first one's high word becomes 0.
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const at = Math.ceil((38 + view.getUint16(36, true)) / 8) * 8;
    expect(view.getBigUint64(at, true)).toBe(5n);
    view.setBigUint64(at + 8, 0n, true);
    view.setBigUint64(bytes.length - 8, checksum(wasm(), bytes.subarray(0, bytes.length - 8)), true);
    const back = FingerprintIndex.deserialize(bytes);
    expect(back.query((1n << 64n) | 5n, 1)).toEqual(columns([{ id: 1, distance: 1 }]));
    // What the file held loads; adding such a fingerprint is still refused afterwards.
    expect(() => back.addMany([2], new BigUint64Array([5n, 0n]))).toThrow(/64-bit/);
    back.free();
  });
});

describe('misuse', () => {
  it('every method of a freed index throws the library TypeError', () => {
    const index = new FingerprintIndex();
    index.add(1, 1n);
    index.free();
    const calls: Array<() => unknown> = [
      () => index.size,
      () => index.add(2, 2n),
      () => index.addMany([3], new BigUint64Array(1)),
      () => index.remove(1),
      () => index.has(1),
      () => index.query(1n),
      () => index.queryMany(new BigUint64Array(1)),
      () => index.compact(),
      () => index.explain(),
      () => index.serialize(),
    ];
    for (const call of calls) {
      expect(call).toThrow(TypeError);
      expect(call).toThrow('FingerprintIndex was used after free(); create a new one');
    }
    index.free(); // twice is fine
  });

  it('detached buffers give the library TypeError, not the engine message', () => {
    const detach = <T extends ArrayBufferView>(view: T): T => {
      structuredClone(view.buffer, { transfer: [view.buffer as ArrayBuffer] });
      return view;
    };
    const index = new FingerprintIndex();
    expect(() => index.addMany([], detach(new BigUint64Array(4)))).toThrow(/fingerprints is a view of a detached/);
    expect(() => index.addMany(detach(new Uint32Array(2)), new BigUint64Array(2))).toThrow(
      /ids is a view of a detached/,
    );
    expect(() => index.queryMany(detach(new BigUint64Array(2)))).toThrow(TypeError);
    const bytes = index.serialize();
    expect(() => FingerprintIndex.deserialize(detach(bytes))).toThrow(/bytes is a view of a detached/);
    expect(index.size).toBe(0);
    index.free();
  });
});
