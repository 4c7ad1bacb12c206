import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clusters, dedup, defaultDedupK } from '../../src/dedup/dedup.js';
import { findInThreads, findNearDuplicates } from '../../src/join/find-near-duplicates.js';
import { sortPairs } from '../../src/dedup/dedup-groups.js';
import { findWithPlan, tableShares } from '../../src/join/join.js';
import { planJoin, planWithBlocks, tableRule } from '../../src/join/join-plan.js';
import { planWithRadii } from '../../src/join/join-probe.js';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { hammingDistance } from '../../src/fingerprint/bits.js';
import { wasm } from '../../src/runtime/wasm.js';
import { asStrings, bruteForce } from '../join/join-reference.js';
import { rng as unitRng } from '../reference.js';

// ---- references (plain TypeScript) ----

/** Deterministic PRNG (xorshift128+ on bigints) for reproducible fingerprints. */
function rng(seed: number): () => bigint {
  let s0 = BigInt(seed) * 0x9e3779b97f4a7c15n + 1n;
  let s1 = BigInt(seed) ^ 0x2545f4914f6cdd1dn;
  const M = (1n << 64n) - 1n;
  return () => {
    let x = s0;
    const y = s1;
    s0 = y;
    x = (x ^ (x << 23n)) & M;
    s1 = x ^ y ^ (x >> 17n) ^ (y >> 26n);
    return (s1 + y) & M;
  };
}

function flipBits(fp: bigint, count: number, bits: number, next: () => bigint): bigint {
  const used = new Set<number>();
  while (used.size < count) used.add(Number(next() % BigInt(bits)));
  for (const b of used) fp ^= 1n << BigInt(b);
  return fp;
}

/** Random fingerprints plus planted relatives at distances 0, k, k + 1 and 1..k, shuffled in. */
function planted(n: number, k: number, bits: 64 | 128, seed: number): BigUint64Array {
  const next = rng(seed);
  const words = bits / 64;
  const values: bigint[] = [];
  const random = (): bigint => (bits === 64 ? next() : (next() << 64n) | next());
  while (values.length < n) {
    const base = random();
    values.push(base);
    const kind = Number(next() % 6n);
    if (kind === 0)
      values.push(base); // exact duplicate
    else if (kind === 1) values.push(flipBits(base, k, bits, next));
    else if (kind === 2) values.push(flipBits(base, k + 1, bits, next));
    else if (kind === 3) values.push(flipBits(base, Number(next() % BigInt(k + 1)), bits, next), base);
  }
  values.length = n;
  // Shuffle so relatives are not adjacent.
  for (let i = n - 1; i > 0; i--) {
    const j = Number(next() % BigInt(i + 1));
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  const fps = new BigUint64Array(n * words);
  values.forEach((v, i) => {
    fps[i * words] = v & ((1n << 64n) - 1n);
    if (words === 2) fps[i * 2 + 1] = v >> 64n;
  });
  return fps;
}

/** Fingerprints clustered in few high bits, so sorted tables have long runs (many candidates per run). */
function skewed(n: number, bits: 64 | 128, seed: number): BigUint64Array {
  const next = rng(seed);
  const fps = new BigUint64Array(n * (bits / 64));
  for (let i = 0; i < fps.length; i++) fps[i] = next() & 0x0000_0000_0f0f_00ffn;
  return fps;
}

// ---- findNearDuplicates ----

describe('findNearDuplicates', () => {
  for (const bits of [64, 128] as const) {
    for (const k of bits === 64 ? [0, 1, 3, 4, 7] : [0, 3, 6, 10]) {
      it(`equals the brute-force join on planted data (${bits} bits, k=${k})`, () => {
        const fps = planted(1500, k, bits, 1000 + k);
        const expected = bruteForce(fps, k, bits);
        expect(expected.length).toBeGreaterThan(50);
        const got = findNearDuplicates(fps, { k, bits });
        expect(asStrings(got)).toEqual(expected);
        expect(got.distance.some((d) => d === k)).toBe(true);
      });
    }
    it(`equals the brute-force join on random and skewed data (${bits} bits)`, () => {
      for (const [seed, fps] of [
        [1, planted(3000, 3, bits, 7)],
        [2, skewed(800, bits, 9)],
      ] as const) {
        for (const k of [2, 3, 5]) {
          expect(asStrings(findNearDuplicates(fps, { k, bits })), `seed ${seed} k ${k}`).toEqual(
            bruteForce(fps, k, bits),
          );
        }
      }
    });
    it(`every block count and sort width gives the same pairs (${bits} bits)`, () => {
      const k = 3;
      const fps = planted(1200, k, bits, 42);
      const expected = bruteForce(fps, k, bits);
      for (const b of [0, 4, 5, 6, 8, 11]) {
        for (const sortBits of [1, 7, 13, 64]) {
          const plan = planWithBlocks(k, bits, b, sortBits);
          expect(asStrings(findWithPlan(fps, plan)), `b=${b} sortBits=${plan.sortBits}`).toEqual(expected);
        }
      }
    });
  }

  it('128-bit plans of more than 16 blocks (large k) give the same pairs as brute force', () => {
    // With at most 16 blocks, k = 16 or more at 128 bits (the default k is 21) could only compare all pairs.
    for (const [k, blocks] of [
      [20, [21, 22, 23]],
      [28, [29, 30]],
    ] as const) {
      const fps = planted(600, k, 128, k);
      const expected = bruteForce(fps, k, 128);
      expect(expected.length).toBeGreaterThan(50);
      for (const b of blocks) {
        for (const sortBits of [1, 9, 64]) {
          const plan = planWithBlocks(k, 128, b, sortBits);
          expect(asStrings(findWithPlan(fps, plan)), `k=${k} b=${b} sortBits=${plan.sortBits}`).toEqual(expected);
        }
      }
      expect(planJoin(336_060, 21, 128).blocks.length).toBeGreaterThan(16);
    }
  });

  it('bucketed 64-bit walk (tables grouped by first block) equals brute force for random plans (seeded)', () => {
    // Any k, block count, sort width and digit width: covers groups whose block is narrower than a digit, digits
    // that do not end at the top bit, one-pass plans, and buckets of 0, 1 and many fingerprints.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 2, max: 400 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 64 }),
        (k, extra, sortBits, maxDigit, n, seed, spread) => {
          const b = Math.min(16, k + extra);
          const fps = planted(n, k, 64, seed);
          // Confined to `spread` random bits (64: all), so equal sort bits are common and runs are long.
          if (spread < 64) {
            const next = rng(seed + 1);
            let mask = 0n;
            for (let i = 0; i < spread; i++) mask |= 1n << (next() % 64n);
            for (let i = 0; i < n; i++) fps[i]! &= mask;
          }
          const plan = planWithBlocks(k, 64, b, sortBits, maxDigit);
          expect(asStrings(findWithPlan(fps, plan))).toEqual(bruteForce(fps, k, 64));
        },
      ),
      { seed: 15, numRuns: 120 },
    );
    // Blocks narrower than the top digit (the digit then varies within a bucket and must be sorted), on
    // fingerprints confined to a few bits so runs are long.
    const fps = planted(2000, 3, 64, 7).map((x) => x & 0x8421_0842_1084_2108n);
    const expected = bruteForce(fps, 3, 64);
    for (const [b, sortBits] of [
      [9, 16],
      [12, 16],
      [16, 8],
      [16, 24],
    ] as const) {
      const plan = planWithBlocks(3, 64, b, sortBits, 8);
      expect(asStrings(findWithPlan(fps, plan)), `b=${b} sortBits=${plan.sortBits}`).toEqual(expected);
    }
  });

  it('bucketed walk of one-block keys no wider than the group digit (no sort inside a bucket) equals brute force', () => {
    for (const k of [7, 12]) {
      const fps = planted(1500, k, 64, 100 + k);
      const expected = bruteForce(fps, k, 64);
      for (const sortBits of [2, 4, 64]) {
        const plan = planWithBlocks(k, 64, k + 1, sortBits);
        expect(asStrings(findWithPlan(fps, plan)), `k ${k} sortBits ${plan.sortBits}`).toEqual(expected);
      }
    }
  });

  it('resumes the walk when the output fills (many exact duplicates)', () => {
    const n = 3000; // 4.5 M pairs: more than the first output block holds
    const fps = new BigUint64Array(n).fill(0x0123456789abcdefn);
    fps[17] = 0x0123456789abcdeen; // distance 1 from the rest
    const got = findNearDuplicates(fps, { k: 1 });
    expect(got.a.length).toBe((n * (n - 1)) / 2);
    let ones = 0;
    for (let i = 0; i < got.a.length; i++) {
      if (got.a[i]! >= got.b[i]!) throw new Error(`pair ${i} not ordered`);
      if (got.distance[i] === 1) ones++;
    }
    expect(ones).toBe(n - 1);
    expect(findNearDuplicates(fps, { k: 0 }).a.length).toBe(((n - 1) * (n - 2)) / 2);
  });

  it('handles empty and single inputs and sizes around boundaries', () => {
    expect(findNearDuplicates(new BigUint64Array(0), { k: 3 }).a.length).toBe(0);
    expect(findNearDuplicates(new BigUint64Array(1), { k: 3 }).a.length).toBe(0);
    expect(findNearDuplicates(new BigUint64Array(2), { k: 0, bits: 128 }).a.length).toBe(0);
    expect(asStrings(findNearDuplicates(new BigUint64Array([5n, 5n]), { k: 0 }))).toEqual(['0,1,0']);
    for (const n of [2, 3, 15, 16, 17, 255, 256, 257]) {
      const fps = planted(n, 3, 64, n);
      expect(asStrings(findNearDuplicates(fps, { k: 3 })), `n=${n}`).toEqual(bruteForce(fps, 3, 64));
    }
  });

  it('rejects bad input before WebAssembly and stays usable', () => {
    const fps = new BigUint64Array([1n, 2n, 3n]);
    expect(() => findNearDuplicates([1n] as unknown as BigUint64Array, { k: 3 })).toThrow(TypeError);
    expect(() => findNearDuplicates(fps, { k: -1 })).toThrow(/k must be an integer from 0 to 64, got -1/);
    expect(() => findNearDuplicates(fps, { k: 1.5 })).toThrow(RangeError);
    expect(() => findNearDuplicates(fps, { k: '3' as unknown as number })).toThrow(TypeError);
    expect(() => findNearDuplicates(fps, { k: 3, bits: 32 as 64 })).toThrow(/bits must be 64 or 128, got 32/);
    expect(() => findNearDuplicates(fps, { k: 3, bits: 128 })).toThrow(/two words each/);
    expect(() => findNearDuplicates(fps, { k: 3, threads: 257 })).toThrow(
      /threads must be an integer from 1 to 256, got 257/,
    );
    expect(() => findNearDuplicates(fps, { k: 3, threads: 0 })).toThrow(RangeError);
    expect(() => findNearDuplicates(fps, { k: 3, typo: 1 } as never)).toThrow(/unknown option "typo"/);
    expect(asStrings(findNearDuplicates(fps, { k: 2 }))).toEqual(['0,1,2', '0,2,1', '1,2,1']);
  });

  it('does not grow memory over repeated calls', () => {
    const fps = planted(5000, 3, 64, 5);
    findNearDuplicates(fps, { k: 3 });
    const before = wasm().heap.byteLength;
    for (let i = 0; i < 5; i++) findNearDuplicates(fps, { k: 3 });
    expect(wasm().heap.byteLength).toBe(before);
  });

  it('threads: 2 gives the same pairs as one thread', async () => {
    for (const bits of [64, 128] as const) {
      const fps = planted(4000, 4, bits, 77);
      const one = findNearDuplicates(fps, { k: 4, bits });
      // Small joins stay on one thread: the worker path is forced here with the planned tables.
      const viaWorker = await findInThreads(fps, planJoin(4000, 4, bits), 2);
      expect(asStrings(viaWorker)).toEqual(asStrings(one));
      expect(asStrings(await findNearDuplicates(fps, { k: 4, bits, threads: 2 }))).toEqual(asStrings(one));
    }
  });
});

describe('planJoin', () => {
  it('uses sorted tables, not brute force, for large inputs', () => {
    const plan = planJoin(1_000_000, 3, 64);
    expect(plan.tables.length).toBeGreaterThan(1);
    expect(plan.sortBits).toBeGreaterThan(8);
  });
  it("a table's rule accepts a pair exactly when it is the first table whose key the pair agrees on", () => {
    for (const [k, b] of [
      [3, 6],
      [2, 7],
      [5, 9],
      [12, 14],
      [1, 2],
    ] as const) {
      const plan = planWithBlocks(k, 64, b);
      const keyMasks = plan.tables.map((key) => key.reduce((m, id) => m | (1 << id), 0));
      const rules = plan.tables.map((_, t) => tableRule(plan, t));
      rules.forEach(({ keyWidth }, t) =>
        expect(keyWidth).toBe(plan.tables[t]!.reduce((w, id) => w + plan.blocks[id]!.width, 0)),
      );
      const wrong: string[] = [];
      for (let agree = 0; agree < 1 << b; agree++) {
        // The reference: a search over the tables in order (independent of the rule's lexicographic argument).
        const first = keyMasks.findIndex((m) => (m & agree) === m);
        for (let t = 0; t < rules.length; t++) {
          const accepts = (keyMasks[t]! & agree) === keyMasks[t] && (rules[t]!.earlier & agree) === 0;
          if (accepts !== (first === t)) wrong.push(`k ${k} b ${b} agree ${agree} table ${t}`);
        }
      }
      expect(wrong).toEqual([]);
    }
  });
});

describe('tableShares', () => {
  /** `split` is `shares` non-empty shares holding each of tables 0 … count - 1 exactly once. */
  const expectPartition = (split: number[][], shares: number, count: number, what: string) => {
    expect(split.length, what).toBe(shares);
    for (const share of split) expect(share.length, what).toBeGreaterThan(0);
    expect(
      split.flat().sort((x, y) => x - y),
      what,
    ).toEqual(Array.from({ length: count }, (_, t) => t));
  };
  it('splits every table into exactly one non-empty share, keeping groups of a first key block whole', () => {
    for (const [k, b, sortBits] of [
      [3, 5, 20],
      [3, 4, 16],
      [6, 9, 16],
      [12, 15, 20],
      [3, 6, 0],
      [2, 3, 8],
    ] as const) {
      for (const bits of [64, 128] as const) {
        const plan = planWithBlocks(k, bits, b, sortBits);
        const groups = new Set(plan.tables.map((key) => key[0]));
        for (let shares = 1; shares <= Math.min(4, plan.tables.length); shares++) {
          const split = tableShares(plan, shares);
          const what = `k ${k} b ${b} sortBits ${plan.sortBits} bits ${bits} shares ${shares}`;
          expectPartition(split, shares, plan.tables.length, what);
          if (bits === 64 && plan.sortBits > 0 && groups.size >= shares) {
            const home = new Map<number, number>();
            split.forEach((share, s) => {
              for (const t of share) {
                const first = plan.tables[t]![0]!;
                expect(home.get(first) ?? s, `${what}: group ${first} split`).toBe(s);
                home.set(first, s);
              }
            });
          }
        }
      }
    }
  });
  it('balances 10^7 at k = 3 (groups of 4, 3, 2 and 1 tables) 7 : 7, each group scattered once', () => {
    const plan = planJoin(10_000_000, 3, 64);
    const split = tableShares(plan, 2);
    // A share costs about a table per table plus one per group it scatters.
    const cost = (share: number[]) => share.length + new Set(share.map((t) => plan.tables[t]![0])).size;
    expect(split.map(cost)).toEqual([7, 7]);
  });
  it('splits a probe plan by its probes per fingerprint: 2 GB of edited copies (radii 1, 2, 2, 2, 1) 184 : 119', () => {
    // Probes of a block of w bits within radius r: the masks of at most r bits set, counted here by hand.
    const probes = (w: number, r: number) => [1, w, (w * (w - 1)) / 2, (w * (w - 1) * (w - 2)) / 6].slice(0, r + 1);
    const costOf = (plan: ReturnType<typeof planWithRadii>) =>
      plan.tables.map(([q]) => probes(plan.blocks[q!]!.width, plan.radii![q!]!).reduce((s, c) => s + c, 0));
    const plan = planWithRadii(12, [1, 2, 2, 2, 1]);
    expect(plan.blocks.map((b) => b.width)).toEqual([13, 13, 13, 13, 12]);
    const split = tableShares(plan, 2);
    const cost = costOf(plan);
    expect(split).toEqual([
      [1, 3],
      [0, 2, 4],
    ]);
    expect(split.map((share) => share.reduce((s, t) => s + cost[t]!, 0))).toEqual([184, 119]);
    // Any radii: every table in one non-empty share, the shares within the dearest table of each other.
    for (let seed = 1; seed <= 40; seed++) {
      const r = unitRng(seed);
      const blocks = 4 + Math.floor(r() * 7); // blocks of at most 16 bits
      const radii = Array.from({ length: blocks }, () => Math.floor(r() * 4));
      const k = Math.max(0, radii.reduce((s, x) => s + x + 1, 0) - 1);
      const p = planWithRadii(k, radii);
      const c = costOf(p);
      for (let shares = 1; shares <= Math.min(4, blocks); shares++) {
        const got = tableShares(p, shares);
        const what = `radii ${radii.join(' ')} shares ${shares}`;
        expectPartition(got, shares, p.tables.length, what);
        const sums = got.map((share) => share.reduce((s, t) => s + c[t]!, 0));
        expect(Math.max(...sums) - Math.min(...sums), what).toBeLessThanOrEqual(Math.max(...c));
      }
    }
  });
});

// ---- clusters ----

function referenceComponents(n: number, a: Uint32Array, b: Uint32Array): Uint32Array {
  // Label propagation over an adjacency list (independent of union-find): each component gets its lowest index.
  const adj: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < a.length; i++) {
    adj[a[i]!]!.push(b[i]!);
    adj[b[i]!]!.push(a[i]!);
  }
  const label = new Uint32Array(n).fill(0xffffffff);
  for (let s = 0; s < n; s++) {
    if (label[s] !== 0xffffffff) continue;
    const stack = [s];
    label[s] = s;
    while (stack.length) {
      const x = stack.pop()!;
      for (const y of adj[x]!)
        if (label[y] === 0xffffffff) {
          label[y] = s;
          stack.push(y);
        }
    }
  }
  return label;
}

describe('sortPairs', () => {
  it('orders pairs by (a, b) with their distances, already ordered or not, as a plain sort does (seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.tuple(fc.nat(59), fc.nat(59), fc.nat(64)), { maxLength: 200 }),
        fc.boolean(),
        (n, raw, presorted) => {
          // Distinct (a, b) with a < b and both below n, as the joins and dedup's groups produce them.
          const seen = new Set<string>();
          const triples = raw
            .map(([x, y, d]) => [Math.min(x, y) % n, Math.max(x, y) % n, d] as const)
            .filter(([a, b]) => a < b && !seen.has(`${a},${b}`) && seen.add(`${a},${b}`));
          const want = [...triples].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
          const input = presorted ? want : triples;
          const pairs = {
            a: Uint32Array.from(input, (t) => t[0]),
            b: Uint32Array.from(input, (t) => t[1]),
            distance: Uint8Array.from(input, (t) => t[2]),
          };
          const got = sortPairs(n, pairs);
          expect(Array.from(got.a, (a, i) => [a, got.b[i], got.distance[i]])).toEqual(want.map((t) => [...t]));
        },
      ),
      { seed: 0x50, numRuns: 300 },
    );
  });
});

describe('clusters', () => {
  it('connected components equal a reference on random graphs', () => {
    const next = rng(3);
    for (const [n, m] of [
      [1, 0],
      [10, 5],
      [500, 300],
      [2000, 2500],
    ] as const) {
      const a = new Uint32Array(m);
      const b = new Uint32Array(m);
      for (let i = 0; i < m; i++) {
        a[i] = Number(next() % BigInt(n));
        b[i] = Number(next() % BigInt(n));
      }
      const expected = referenceComponents(n, a, b);
      const got = clusters(n, { a, b });
      expect(Array.from(got.clusterOf)).toEqual(Array.from(expected));
      expect(got.count).toBe(new Set(expected).size);
    }
  });

  it("'centre' does not chain: every member is a neighbour of its centre", () => {
    // A chain 0-1-2-3-4: connected makes one cluster, centre makes {0,1}, {2,3}, {4}.
    const a = new Uint32Array([0, 1, 2, 3]);
    const b = new Uint32Array([1, 2, 3, 4]);
    expect(Array.from(clusters(5, { a, b }).clusterOf)).toEqual([0, 0, 0, 0, 0]);
    const c = clusters(5, { a, b }, { mode: 'centre' });
    expect(Array.from(c.clusterOf)).toEqual([0, 0, 2, 2, 4]);
    expect(c.count).toBe(3);
    // Random graphs: members are adjacent to their centre, centres are their own representative.
    const next = rng(11);
    const n = 300;
    const m = 400;
    const ra = new Uint32Array(m);
    const rb = new Uint32Array(m);
    for (let i = 0; i < m; i++) {
      ra[i] = Number(next() % BigInt(n));
      rb[i] = Number(next() % BigInt(n));
    }
    const edges = new Set(Array.from(ra, (x, i) => `${Math.min(x, rb[i]!)},${Math.max(x, rb[i]!)}`));
    const got = clusters(n, { a: ra, b: rb }, { mode: 'centre' });
    let centres = 0;
    for (let i = 0; i < n; i++) {
      const c2 = got.clusterOf[i]!;
      if (c2 === i) centres++;
      else {
        expect(got.clusterOf[c2]).toBe(c2);
        expect(c2).toBeLessThan(i);
        expect(edges.has(`${c2},${i}`)).toBe(true);
      }
    }
    expect(got.count).toBe(centres);
  });

  it('rejects bad input', () => {
    const a = new Uint32Array([0]);
    const b = new Uint32Array([5]);
    expect(() => clusters(3, { a, b })).toThrow(/pair 0 \(0, 5\) is out of range for 3 documents/);
    expect(() => clusters(3, { a, b: new Uint32Array(2) })).toThrow(RangeError);
    expect(() => clusters(-1, { a, b })).toThrow(RangeError);
    expect(() => clusters(6, { a, b }, { mode: 'star' as 'centre' })).toThrow(/mode must be/);
    expect(() => clusters(6, { a: [0] as unknown as Uint32Array, b })).toThrow(TypeError);
  });
});

// ---- dedup ----

describe('dedup', () => {
  const base =
    'the quick brown fox jumps over the lazy dog and keeps running through the forest until night falls on the hills';
  const texts = [
    base,
    'completely different text about the price of tea in china and other matters of international trade policy',
    base,
    base.replace('lazy', 'sleepy'),
    'another unrelated document on the history of the printing press in early modern europe and its consequences',
  ];

  it('finds duplicates, clusters them under the first document, and reports timings', () => {
    // k = the edited copy's (3) distance from the original is the boundary that must find it; one less must not.
    const fps = simhashMany(texts);
    const d = hammingDistance(fps[0]!, fps[3]!);
    expect(d).toBeGreaterThan(0);
    expect(d).toBeLessThan(20); // unrelated texts are about 32 apart
    const r = dedup(texts, { k: d, pairs: 'all' });
    expect(r.fingerprints).toEqual(fps);
    expect(r.clusterOf[0]).toBe(0);
    expect(r.clusterOf[2]).toBe(0);
    expect([r.clusterOf[3], asStrings(r.pairs)]).toEqual([0, expect.arrayContaining([`0,3,${d}`, `2,3,${d}`])]);
    expect(r.clusterOf[1]).toBe(1);
    expect(r.clusterOf[4]).toBe(4);
    expect(r.clusterCount).toBe(new Set(r.clusterOf).size);
    expect(asStrings(r.pairs)).toEqual(bruteForce(r.fingerprints, d, 64));
    expect(r.timings.total).toBeGreaterThanOrEqual(r.timings.join);
    // The default lists the pairs that explain the clusters: the copy (2) with its first (0), then 0 with 3.
    expect(asStrings(dedup(texts, { k: d }).pairs)).toEqual(['0,2,0', `0,3,${d}`]);
    const below = dedup(texts, { k: d - 1 });
    expect([below.clusterOf[3], asStrings(below.pairs)]).toEqual([3, ['0,2,0']]);
  });

  it('passes bits and tokenizer options through to simhash', () => {
    const r = dedup(texts, { k: 0, bits: 128, tokenizer: 'words' });
    expect(r.fingerprints).toEqual(simhashMany(texts, { bits: 128, tokenizer: 'words' }));
    expect(asStrings(r.pairs)).toEqual(['0,2,0']);
    expect(r.clusterCount).toBe(4);
  });

  it('rejects bad options', () => {
    expect(() => dedup(texts, { k: 99 })).toThrow(RangeError);
    expect(() => dedup(texts, { mode: 'x' as 'centre' })).toThrow(RangeError);
    expect(() => dedup([1] as unknown as string[])).toThrow(/texts\[0\] must be a string or a Uint8Array/);
    expect(() => dedup(texts, { tokenizer: 'nope' as 'words' })).toThrow(RangeError);
  });
});

describe('defaultDedupK', () => {
  it('gives the defaults of docs/quality.md for 64 or 128 bits, verified or not; anything else names the value', () => {
    expect([
      defaultDedupK(64, true),
      defaultDedupK(128, true),
      defaultDedupK(64, false),
      defaultDedupK(128, false),
    ]).toEqual([12, 21, 3, 6]);
    expect(() => defaultDedupK(32 as 64, true)).toThrow(/^bits must be 64 or 128, got 32$/);
    expect(() => defaultDedupK(32 as 64, true)).toThrow(RangeError);
    expect(() => defaultDedupK(Number.NaN as 64, false)).toThrow(RangeError);
    expect(() => defaultDedupK('64' as never, true)).toThrow(TypeError);
    expect(() => defaultDedupK('64' as never, true)).toThrow(/bits must be 64 or 128, got "64"/);
    expect(() => defaultDedupK(64, 'yes' as never)).toThrow(/^verified must be a boolean, got "yes"$/);
    expect(() => defaultDedupK(64, undefined as never)).toThrow(TypeError);
  });
});
