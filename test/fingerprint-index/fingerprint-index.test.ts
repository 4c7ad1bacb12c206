import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FingerprintIndex, type FingerprintId, type IndexLayout, type Neighbors } from '../../src/index.js';
import { columns, type Neighbor } from './neighbors.js';
import { wasm } from '../../src/runtime/wasm.js';
import { planIndex, probeRadius } from '../../src/fingerprint-index/planner.js';
import { xorshiftRng } from '../reference.js';

// ---- plain TypeScript reference: a brute-force scan over a Map ----

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** 32-bit words of a fingerprint, low first (the reference works on Numbers: BigInt loops are slow). */
function words32(fp: bigint, out: Uint32Array, at: number, count: number): void {
  for (let i = 0; i < count; i++) out[at + i] = Number((fp >> BigInt(32 * i)) & 0xffffffffn);
}

function compareNeighbors(a: Neighbor, b: Neighbor): number {
  return (
    a.distance - b.distance ||
    (typeof a.id === 'number' ? (a.id as number) - (b.id as number) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Brute force over a snapshot of the model: every (id, distance) within k, sorted by distance then id. */
class Reference {
  private readonly ids: FingerprintId[];
  private readonly words: Uint32Array;
  private readonly per: number;
  constructor(model: Map<FingerprintId, bigint>, bits: number) {
    this.per = bits / 32;
    this.ids = [...model.keys()];
    this.words = new Uint32Array(this.ids.length * this.per);
    let i = 0;
    for (const fp of model.values()) words32(fp, this.words, this.per * i++, this.per);
  }
  query(q: bigint, k: number): Neighbors<FingerprintId[]> {
    const qw = new Uint32Array(this.per);
    words32(q, qw, 0, this.per);
    const out: Neighbor[] = [];
    for (let i = 0; i < this.ids.length; i++) {
      let distance = 0;
      for (let w = 0; w < this.per; w++) distance += popcount32(this.words[i * this.per + w]! ^ qw[w]!);
      if (distance <= k) out.push({ id: this.ids[i]!, distance });
    }
    return columns(out.sort(compareNeighbors));
  }
}

// ---- seeded randomness ----

const rng = xorshiftRng;

function randomFp(r: () => number, bits: number): bigint {
  let x = 0n;
  for (let i = 0; i < bits; i += 32) x = (x << 32n) | BigInt(Math.floor(r() * 2 ** 32));
  return x;
}

/** `fp` with `flips` distinct random bits flipped. */
function near(r: () => number, fp: bigint, flips: number, bits: number): bigint {
  const positions = new Set<number>();
  while (positions.size < flips) positions.add(Math.floor(r() * bits));
  for (const p of positions) fp ^= 1n << BigInt(p);
  return fp;
}

function toWords(fps: bigint[], bits: number): BigUint64Array {
  const words = bits / 64;
  const out = new BigUint64Array(fps.length * words);
  fps.forEach((fp, i) => {
    out[i * words] = fp & 0xffffffffffffffffn;
    if (words === 2) out[i * words + 1] = fp >> 64n;
  });
  return out;
}

/** Queries: copies of stored fingerprints moved by 0..k+2 bits, plus unrelated ones. */
function queriesFor(
  r: () => number,
  model: Map<FingerprintId, bigint>,
  bits: number,
  k: number,
  count: number,
): bigint[] {
  const stored = [...model.values()];
  const out: bigint[] = [];
  for (let i = 0; i < count; i++) {
    if (stored.length > 0 && r() < 0.8)
      out.push(near(r, stored[Math.floor(r() * stored.length)]!, Math.floor(r() * (k + 3)), bits));
    else out.push(randomFp(r, bits));
  }
  return out;
}

function checkAll(
  index: FingerprintIndex,
  model: Map<FingerprintId, bigint>,
  queries: bigint[],
  k: number,
  bits: number,
  label: string,
): void {
  const reference = new Reference(model, bits);
  for (let kk = 0; kk <= k; kk += Math.max(1, Math.floor(k / 3))) {
    const many = index.queryMany(toWords(queries, bits), kk);
    queries.forEach((q, i) => {
      const expected = reference.query(q, kk);
      expect(index.query(q, kk), `${label} k=${kk} query ${i}`).toEqual(expected);
      expect(many[i], `${label} queryMany k=${kk} query ${i}`).toEqual(expected);
    });
  }
  expect(index.size).toBe(model.size);
}

/** A data set with planted clusters, so that queries have many neighbours at every distance. */
function dataset(r: () => number, n: number, bits: number, k: number): bigint[] {
  const out: bigint[] = [];
  while (out.length < n) {
    const base = randomFp(r, bits);
    out.push(base);
    const cluster = Math.floor(r() * 4);
    for (let j = 0; j < cluster && out.length < n; j++) out.push(near(r, base, Math.floor(r() * (k + 2)), bits));
  }
  return out;
}

const LAYOUTS: Array<IndexLayout | undefined> = [
  undefined,
  'linear',
  { blocks: 4, leading: 1 },
  { blocks: 5, leading: 2 },
  { blocks: 6, leading: 3, tailBits: 32 },
  { blocks: 3, leading: 1, directoryBits: 5 },
  { blocks: 2, leading: 1, directoryBits: 0, tailBits: 16 },
  { blocks: 7, leading: 2, tailBits: 32 },
];

describe('FingerprintIndex matches a brute-force scan', () => {
  for (const bits of [64, 128] as const) {
    it(`random layouts, sizes and k at ${bits} bits, through adds, removes, re-adds and a round trip`, () => {
      const r = rng(bits * 7919);
      for (let trial = 0; trial < 10; trial++) {
        const layout = LAYOUTS[trial % LAYOUTS.length];
        const maxK = bits === 64 ? 8 : 16;
        const k = [0, 1, 3, Math.floor(r() * (maxK + 1)), maxK][trial % 5]!;
        const n = [0, 1, 50, 700, 2500][Math.floor(r() * 5)]!;
        const label = `bits=${bits} layout=${JSON.stringify(layout)} k=${k} n=${n}`;
        let index = new FingerprintIndex({ bits, maxDistance: k, ...(layout ? { layout } : {}) });
        const model = new Map<FingerprintId, bigint>();
        const fps = dataset(r, n, bits, k);
        // Half in bulk (ids shuffled), half one by one (through the insert buffer).
        const bulk = Math.floor(n / 2);
        const ids = Array.from({ length: n }, (_, i) => i * 7 + 3).sort(() => r() - 0.5);
        index.addMany(ids.slice(0, bulk), toWords(fps.slice(0, bulk), bits));
        for (let i = 0; i < bulk; i++) model.set(ids[i]!, fps[i]!);
        for (let i = bulk; i < n; i++) {
          index.add(ids[i]!, fps[i]!);
          model.set(ids[i]!, fps[i]!);
        }
        checkAll(index, model, queriesFor(r, model, bits, k, 25), k, bits, `${label} built`);
        // Remove a third, re-add some of them with moved fingerprints, add the same fingerprint under new ids.
        const present = [...model.keys()];
        for (const id of present) {
          if (r() < 0.33) {
            expect(index.remove(id)).toBe(true);
            model.delete(id);
            expect(index.has(id)).toBe(false);
            if (r() < 0.5) {
              const fp = near(r, fps[0] ?? 0n, Math.floor(r() * (k + 2)), bits);
              index.add(id, fp);
              model.set(id, fp);
            }
          }
        }
        if (n > 0) {
          index.add(1_000_001, fps[0]!);
          index.add(1_000_002, fps[0]!);
          model.set(1_000_001, fps[0]!);
          model.set(1_000_002, fps[0]!);
        }
        checkAll(index, model, queriesFor(r, model, bits, k, 25), k, bits, `${label} after removes`);
        const bytes = index.serialize();
        index.free();
        index = FingerprintIndex.deserialize(bytes);
        checkAll(index, model, queriesFor(r, model, bits, k, 20), k, bits, `${label} after round trip`);
        index.free();
      }
    });
  }

  it('string ids, sorted by distance then id', () => {
    const r = rng(42);
    const index = new FingerprintIndex({ maxDistance: 4 });
    const model = new Map<FingerprintId, bigint>();
    const fps = dataset(r, 1500, 64, 4);
    const names = fps.map((_, i) => `doc-${(i * 7919) % 1500}`);
    index.addMany(names.slice(0, 1000), toWords(fps.slice(0, 1000), 64));
    for (let i = 0; i < 1000; i++) model.set(names[i]!, fps[i]!);
    for (let i = 1000; i < 1500; i++) {
      index.add(names[i]!, fps[i]!);
      model.set(names[i]!, fps[i]!);
    }
    for (let i = 0; i < 1500; i += 3) {
      index.remove(names[i]!);
      model.delete(names[i]!);
    }
    checkAll(index, model, queriesFor(r, model, 64, 4, 40), 4, 64, 'strings');
    const again = FingerprintIndex.deserialize(index.serialize());
    checkAll(again, model, queriesFor(r, model, 64, 4, 20), 4, 64, 'strings round trip');
    index.free();
    again.free();
  });

  it('a planned index at 20k fingerprints, k = 3 and k = 8 (buffer merges and tables)', () => {
    const r = rng(7);
    for (const k of [3, 8]) {
      const index = new FingerprintIndex({ maxDistance: k });
      const model = new Map<FingerprintId, bigint>();
      const fps = dataset(r, 20000, 64, k);
      index.addMany(
        Uint32Array.from({ length: 15000 }, (_, i) => i),
        toWords(fps.slice(0, 15000), 64),
      );
      fps.slice(0, 15000).forEach((fp, i) => model.set(i, fp));
      for (let i = 15000; i < 20000; i++) {
        index.add(i, fps[i]!);
        model.set(i, fps[i]!);
      }
      expect(index.explain().layout).toBe('tables');
      checkAll(index, model, queriesFor(r, model, 64, k, 30), k, 64, `20k k=${k}`);
      index.free();
    }
  });
});

describe('FingerprintIndex probes, property-tested against the brute-force scan', () => {
  // The probe gathers buckets over every table before walking them and verifies survivors in batches (256 of
  // each): layouts with many tables and a wide radius overflow both within one query.
  const layouts: IndexLayout[] = [
    { blocks: 4, leading: 1 },
    { blocks: 6, leading: 3, directoryBits: 12 },
    { blocks: 6, leading: 3, directoryBits: 8 },
    { blocks: 6, leading: 2, directoryBits: 10, tailBits: 32 },
    { blocks: 5, leading: 2, directoryBits: 0 },
    { blocks: 3, leading: 1, directoryBits: 6, tailBits: 16 },
  ];
  it('random sets (clusters, copies), layouts, k from 0 to maxDistance, removals, at 64 and 128 bits', () => {
    fc.assert(
      fc.property(
        fc.record({
          bits: fc.constantFrom(64 as const, 128 as const),
          layout: fc.constantFrom(...layouts),
          n: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 200, max: 1500 })),
          maxDistance: fc.integer({ min: 0, max: 8 }),
          copies: fc.integer({ min: 0, max: 400 }),
          removeShare: fc.constantFrom(0, 0.3),
          seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        }),
        ({ bits, layout, n, maxDistance, copies, removeShare, seed }) => {
          const r = rng(seed);
          const fps = dataset(r, n, bits, maxDistance);
          // Copies of one fingerprint: hundreds of survivors in the same buckets of every table.
          for (let i = 0; i < copies && n > 0; i++)
            fps.push(near(r, fps[0]!, Math.floor(r() * (maxDistance + 1)), bits));
          const index = new FingerprintIndex({ bits, maxDistance, layout });
          const model = new Map<FingerprintId, bigint>();
          try {
            index.addMany(
              Uint32Array.from(fps, (_, i) => i),
              toWords(fps, bits),
            );
            fps.forEach((fp, i) => model.set(i, fp));
            for (const id of [...model.keys()]) {
              if (r() < removeShare) {
                index.remove(id);
                model.delete(id);
              }
            }
            const label = `bits ${bits}, layout ${JSON.stringify(layout)}, n ${fps.length}, k ${maxDistance}, seed ${seed}`;
            checkAll(index, model, queriesFor(r, model, bits, maxDistance, 8), maxDistance, bits, label);
          } finally {
            index.free();
          }
        },
      ),
      { seed: 0x15b, numRuns: 40 },
    );
  });
});

describe('boundaries', () => {
  it('an empty index returns nothing', () => {
    for (const bits of [64, 128] as const) {
      const index = new FingerprintIndex({ bits, maxDistance: 3 });
      expect(index.size).toBe(0);
      expect(index.query(0n)).toEqual(columns([]));
      expect(index.queryMany(new BigUint64Array((bits / 64) * 3))).toEqual([columns([]), columns([]), columns([])]);
      expect(index.has(1)).toBe(false);
      expect(index.remove(1)).toBe(false);
      index.addMany([], new BigUint64Array(0));
      expect(FingerprintIndex.deserialize(index.serialize()).size).toBe(0);
      index.free();
    }
  });

  it('one element, at distance exactly k and k + 1', () => {
    for (const bits of [64, 128] as const) {
      for (const k of [0, 1, 3, bits === 64 ? 8 : 16]) {
        const index = new FingerprintIndex({ bits, maxDistance: k });
        const fp = randomFp(rng(k + bits), bits);
        index.add(5, fp);
        index.compact();
        const r = rng(99);
        expect(index.query(near(r, fp, k, bits))).toEqual(columns([{ id: 5, distance: k }]));
        expect(index.query(near(r, fp, k + 1, bits))).toEqual(columns([]));
        index.free();
      }
    }
  });

  it('all fingerprints equal: every id is a result (never collapsed)', () => {
    for (const layout of LAYOUTS) {
      const index = new FingerprintIndex({ maxDistance: 2, ...(layout ? { layout } : {}) });
      const fp = 0x0123456789abcdefn;
      const n = 3000;
      index.addMany(
        Uint32Array.from({ length: n }, (_, i) => n - i),
        toWords(new Array(n).fill(fp), 64),
      );
      const ascending = (distance: number) => columns(Array.from({ length: n }, (_, i) => ({ id: i + 1, distance })));
      expect(index.query(fp ^ 3n)).toEqual(ascending(2));
      expect(index.query(fp ^ 7n)).toEqual(columns([]));
      // Results larger than the output buffer: the batch resumes where it stopped.
      const many = index.queryMany(new BigUint64Array([fp, fp ^ 7n, fp ^ 1n, fp]));
      expect(many).toEqual([ascending(0), columns([]), ascending(1), ascending(0)]);
      index.free();
    }
  });

  it('k = 0 finds exact copies only; the largest supported k (8 at 64 bits, 16 at 128) works with a planned layout', () => {
    const r = rng(3);
    for (const [bits, k] of [
      [64, 0],
      [64, 8],
      [128, 0],
      [128, 16],
      [64, 64],
    ] as const) {
      const index = new FingerprintIndex({ bits, maxDistance: k });
      const model = new Map<FingerprintId, bigint>();
      const fps = dataset(r, 3000, bits, Math.min(k, 16));
      index.addMany(
        fps.map((_, i) => i),
        toWords(fps, bits),
      );
      fps.forEach((fp, i) => model.set(i, fp));
      const qs = queriesFor(r, model, bits, Math.min(k, 16), 20);
      const reference = new Reference(model, bits);
      for (const q of qs) expect(index.query(q)).toEqual(reference.query(q, k));
      index.free();
    }
  });

  it('explain() shows the plan and the bytes held', () => {
    const index = new FingerprintIndex({ maxDistance: 3 });
    const n = 50000;
    const r = rng(5);
    index.addMany(
      Uint32Array.from({ length: n }, (_, i) => i),
      toWords(
        Array.from({ length: n }, () => randomFp(r, 64)),
        64,
      ),
    );
    const plan = index.explain();
    expect(plan.layout).toBe('tables');
    expect(plan.tables.length).toBeGreaterThan(0);
    expect(plan.tables[0]!.leadingBits).toBeGreaterThanOrEqual(plan.directoryBits);
    expect(plan.expectedCandidatesPerProbe).toBeGreaterThan(0);
    expect(plan.size).toBe(n);
    expect(plan.bytesPerFingerprintActual).toBeLessThanOrEqual(40);
    expect(() => JSON.stringify(plan)).not.toThrow();
    const forced = new FingerprintIndex({ maxDistance: 3, layout: { blocks: 5, leading: 2 } });
    forced.add(1, 1n);
    forced.compact();
    expect(forced.explain()).toMatchObject({ forced: true, leading: 2, layout: 'tables' });
    expect(forced.explain().tables.length).toBe(10);
    index.free();
    forced.free();
  });
});

describe('bad input', () => {
  it('unknown id on remove returns false and changes nothing', () => {
    const index = new FingerprintIndex();
    index.add(1, 1n);
    expect(index.remove(2)).toBe(false);
    expect(index.remove(1)).toBe(true);
    expect(index.remove(1)).toBe(false);
    expect(index.size).toBe(0);
    index.free();
  });

  it('wrong fingerprint width or type, k above maxDistance, bad ids: TypeError/RangeError before any change', () => {
    const index = new FingerprintIndex({ bits: 64, maxDistance: 3 });
    expect(() => index.add(1, 1n << 64n)).toThrow(RangeError);
    expect(() => index.add(1, -1n)).toThrow(RangeError);
    expect(() => index.add(1, 5 as unknown as bigint)).toThrow(TypeError);
    expect(() => index.query(1n << 64n)).toThrow(/64-bit/);
    expect(() => index.query(1n, 4)).toThrow(/maxDistance \(3\)/);
    expect(() => index.query(1n, -1)).toThrow(RangeError);
    expect(() => index.query(1n, 1.5)).toThrow(RangeError);
    expect(() => index.add(-1, 1n)).toThrow(RangeError);
    expect(() => index.add(2 ** 32, 1n)).toThrow(RangeError);
    expect(() => index.add(1.5, 1n)).toThrow(RangeError);
    expect(() => index.add({} as unknown as number, 1n)).toThrow(TypeError);
    expect(() => index.addMany([1, 2], new BigUint64Array(3))).toThrow(/2 words|1 word/);
    expect(() => index.addMany([1, 'a'], new BigUint64Array(2))).toThrow(TypeError);
    expect(() => index.addMany([1, 1], new BigUint64Array(2))).toThrow(/twice/);
    expect(index.size).toBe(0);
    index.add(1, 1n);
    expect(() => index.add(1, 2n)).toThrow(/already/);
    expect(() => index.addMany([5, 1], new BigUint64Array(2))).toThrow(/already/);
    expect(() => index.add('x', 1n)).toThrow(TypeError);
    expect(index.size).toBe(1);
    expect(index.query(1n)).toEqual(columns([{ id: 1, distance: 0 }]));
    const wide = new FingerprintIndex({ bits: 128, maxDistance: 16 });
    expect(() => wide.queryMany(new BigUint64Array(3))).toThrow(RangeError);
    expect(() => wide.query(1n << 128n)).toThrow(RangeError);
    expect(() => new FingerprintIndex({ bits: 32 as 64 })).toThrow(RangeError);
    expect(() => new FingerprintIndex({ maxDistance: 65 })).toThrow(RangeError);
    expect(() => new FingerprintIndex({ layout: { blocks: 10, leading: 5 } })).toThrow(/tables/);
    expect(() => new FingerprintIndex({ layout: { blocks: 4, leading: 1, directoryBits: 17 } })).toThrow(RangeError);
    expect(() => new FingerprintIndex({ foo: 1 } as never)).toThrow(TypeError);
    index.free();
    wide.free();
    expect(() => index.query(1n)).toThrow(/used after free/);
  });

  it('freed indexes give their memory back for reuse', async () => {
    await settleFinalizers(); // indexes other tests dropped are released now, not in the middle of this test
    const heap = wasm().heap;
    const r = rng(11);
    const n = 20000;
    const fps = toWords(
      Array.from({ length: n }, () => randomFp(r, 64)),
      64,
    );
    const ids = Uint32Array.from({ length: n }, (_, i) => i);
    const build = (): void => {
      const index = new FingerprintIndex({ maxDistance: 3 });
      index.addMany(ids, fps);
      for (let i = 0; i < 300; i++) index.add(n + i, BigInt(i));
      index.query(fps[0]!);
      index.free();
    };
    build();
    const live = heap.liveBytes;
    const length = heap.byteLength;
    for (let i = 0; i < 5; i++) build();
    expect(heap.liveBytes).toBe(live);
    expect(heap.byteLength).toBe(length);
  });
});

describe('planner', () => {
  it('probe radius: some s of m blocks always differ in at most R bits (random distributions, and tight)', () => {
    const r = rng(77);
    for (let m = 1; m <= 12; m++) {
      for (let s = 1; s <= m; s++) {
        for (let k = 0; k <= 16; k++) {
          const R = probeRadius(m, s, k);
          let worst = 0;
          for (let trial = 0; trial < 40; trial++) {
            const d = new Array<number>(m).fill(0);
            for (let i = 0; i < k; i++) d[Math.floor(r() * m)]!++;
            const smallest = [...d]
              .sort((a, b) => a - b)
              .slice(0, s)
              .reduce((a, b) => a + b, 0);
            worst = Math.max(worst, smallest);
          }
          // The most even spread reaches R exactly.
          const even = Array.from({ length: m }, (_, i) => Math.floor(k / m) + (i < k % m ? 1 : 0));
          const evenSmallest = [...even]
            .sort((a, b) => a - b)
            .slice(0, s)
            .reduce((a, b) => a + b, 0);
          expect(worst, `m=${m} s=${s} k=${k}`).toBeLessThanOrEqual(R);
          expect(evenSmallest, `m=${m} s=${s} k=${k}`).toBe(R);
        }
      }
    }
  });

  it('scans tiny indexes, builds tables for large ones, keeps the directory inside the leading bits', () => {
    expect(planIndex({ bits: 64, maxDistance: 3, size: 50 }).layout).toBe('linear');
    for (const [bits, k, size] of [
      [64, 3, 1e7],
      [64, 6, 1e6],
      [64, 8, 1e7],
      [128, 8, 1e6],
      [128, 16, 1e6],
      [64, 0, 1e5],
    ] as const) {
      const plan = planIndex({ bits, maxDistance: k, size });
      expect(plan.layout, `${bits} ${k} ${size}`).toBe('tables');
      for (const t of plan.tables) {
        expect(t.leadingBits).toBeGreaterThanOrEqual(plan.directoryBits);
        expect(t.segments.reduce((a, [, len]) => a + len, 0)).toBe(plan.directoryBits + plan.tailBits);
      }
      expect(plan.estimatedQueryNs).toBeLessThan(size * 0.4); // cheaper than the linear scan it replaces
    }
    // The memory goal at k = 3: at most 40 bytes per 64-bit fingerprint.
    expect(planIndex({ bits: 64, maxDistance: 3, size: 1e7 }).bytesPerFingerprint).toBeLessThanOrEqual(40);
  });
});

/** Runs the garbage collector until pending FinalizationRegistry callbacks have run (vitest passes --expose-gc). */
async function settleFinalizers(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('FingerprintIndex memory', () => {
  it('repeated build/free cycles and dropped indexes do not grow the heap without bound', async () => {
    const { wasm } = await import('../../src/runtime/wasm.js');
    const heap = wasm().heap;
    const fps = new BigUint64Array(20_000).map((_, i) => BigInt.asUintN(64, BigInt(i) * 0x9e3779b97f4a7c15n));
    const ids = Array.from({ length: fps.length }, (_, i) => i);
    const build = () => {
      const index = new FingerprintIndex({ maxDistance: 3 });
      index.addMany(ids, fps);
      return index;
    };
    await settleFinalizers();
    build().free();
    const live = heap.liveBytes;
    const size = heap.byteLength;
    for (let i = 0; i < 10; i++) build().free();
    expect(heap.liveBytes).toBe(live);
    expect(heap.byteLength).toBe(size);
    // Dropped without free(): the FinalizationRegistry returns the blocks once collected (vitest runs with --expose-gc).
    const gc = (globalThis as { gc?: () => void }).gc;
    expect(gc, 'tests run with --expose-gc').toBeTypeOf('function');
    const perIndex = (() => {
      const before = heap.liveBytes;
      const index = build();
      const bytes = heap.liveBytes - before;
      index.free();
      return bytes;
    })();
    expect(perIndex).toBeGreaterThan(100_000);
    for (let i = 0; i < 5; i++) build();
    expect(heap.liveBytes).toBeGreaterThanOrEqual(live + 4 * perIndex);
    await settleFinalizers();
    expect(heap.liveBytes).toBe(live);
  });
});
