// The cluster join planner (src/clickhouse/plan.ts) and its SQL (sql.ts), without ClickHouse: the exactness
// argument checked against brute force on small inputs (every pair within k shares a key, and exactly one key
// emits it), the key packing against an independent bit-by-bit reference, the cost model's growth, the SQL's
// portability, and the argument checks. test/clickhouse/cluster.test.ts runs the same plans on a real cluster.
import { describe, expect, it } from 'vitest';
import {
  type ClusterJoinPlan,
  fingerprintKeys,
  groupPairKey,
  keyOwner,
  keyParts,
  planClusterJoin,
  planClusterLookup,
  tableMask,
} from '../../src/clickhouse/plan.js';
import {
  PASS_KEY_ROWS,
  createSql,
  joinPasses,
  joinRounds,
  joinSql,
  lookupSql,
  scanSql,
} from '../../src/clickhouse/sql.js';
import { createClickHouseTables } from '../../src/clickhouse/index.js';
import { bruteForcePairs, plantedFingerprints, popcount, valueAt } from './data.js';

const names = { database: 'default', cluster: 'simhash', base: 't' };

/** Bit i of a fingerprint (128 bits: word i >> 6). */
function bit(v: bigint, i: number): bigint {
  return (v >> BigInt(i)) & 1n;
}

/** Table t's key computed bit by bit from the plan's blocks (independent of keySegments and the fold). */
function referenceKeyBits(plan: ClusterJoinPlan, t: number, v: bigint): string {
  let s = `${t}:`;
  for (const id of plan.tables[t]!) {
    const { start, width } = plan.blocks[id]!;
    for (let i = start + width - 1; i >= start; i--) s += bit(v, i);
  }
  return s;
}

/** The pairs a plan emits, simulated in JavaScript: rows sharing a key, verified, kept by the first agreeing table. */
function simulateJoin(plan: ClusterJoinPlan, fps: BigUint64Array): string[] {
  const n = fps.length / (plan.bits / 64);
  const v = Array.from({ length: n }, (_, i) => valueAt(fps, plan.bits, i));
  const rows = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const keys =
      plan.kind === 'grid'
        ? Array.from({ length: plan.groups }, (_, j) => BigInt(groupPairKey(i % plan.groups, j)))
        : fingerprintKeys(plan, v[i]! & ((1n << 64n) - 1n), v[i]! >> 64n);
    for (const [t, key] of keys.entries()) {
      // Each key row goes to the shard that owns its key: the join is the union of the shards' self-joins.
      const owner = keyOwner(plan, plan.kind === 'grid' ? 0 : t, key);
      const list = rows.get(`${owner}/${key}`) ?? [];
      list.push(i);
      rows.set(`${owner}/${key}`, list);
    }
  }
  const masks = plan.tables.map((_, t) => tableMask(plan, t));
  const out: string[] = [];
  for (const [routed, list] of rows) {
    const key = routed.slice(routed.indexOf('/') + 1);
    const t = plan.tableBits === 0 ? 0 : Number(BigInt(key) >> BigInt(64 - plan.tableBits));
    for (const a of list)
      for (const b of list) {
        if (a >= b) continue;
        const x = v[a]! ^ v[b]!;
        const d = popcount(x);
        if (d > plan.k) continue;
        if (plan.kind === 'grid') {
          if (BigInt(groupPairKey(a % plan.groups, b % plan.groups)) !== BigInt(key)) continue;
        } else {
          const full = (m: [bigint, bigint]) => m[0] | (m[1] << 64n);
          const first = masks.findIndex((m) => (x & full(m)) === 0n);
          if (first !== t) continue;
        }
        out.push(`${a},${b},${d}`);
      }
  }
  return out;
}

describe('planClusterJoin: exactness against brute force', () => {
  const cases: Array<[64 | 128, number, number | 'grid' | undefined]> = [
    [64, 0, undefined],
    [64, 1, undefined],
    [64, 3, undefined],
    [64, 3, 4],
    [64, 3, 6],
    [64, 6, undefined],
    [64, 6, 9],
    [64, 10, undefined],
    [64, 3, 'grid'],
    [64, 40, undefined],
    [128, 0, undefined],
    [128, 3, undefined],
    [128, 6, 7],
    [128, 7, 11],
    [128, 10, undefined],
  ];
  for (const [bits, k, blocks] of cases) {
    it(`every pair within k comes out exactly once (${bits} bits, k = ${k}, blocks ${blocks ?? 'planned'})`, () => {
      const n = 300;
      const fps = plantedFingerprints(n, k, bits, 31 * k + bits);
      for (const shards of k % 2 === 0 ? [1, 3] : [3]) {
        const plan = planClusterJoin({ size: n, k, bits, shards, ...(blocks !== undefined && { blocks }) });
        const got = simulateJoin(plan, fps);
        // Once: no pair twice.
        expect(new Set(got).size).toBe(got.length);
        expect(got.sort()).toEqual(bruteForcePairs(fps, bits, k).sort());
      }
    });
  }

  it('a pair at distance exactly k agrees on some table key, for every way of spreading k bits over the blocks', () => {
    for (const [bits, k] of [
      [64, 3],
      [64, 6],
      [128, 5],
    ] as const) {
      const plan = planClusterJoin({ size: 1e7, k, bits, shards: 3 });
      const b = plan.blocks.length;
      // Every assignment of the k differing bits to blocks (with repetition): some table's blocks have none.
      const assign = (left: number, from: number, used: Set<number>): void => {
        if (left === 0) {
          expect(plan.tables.some((key) => key.every((id) => !used.has(id)))).toBe(true);
          return;
        }
        for (let id = from; id < b; id++) assign(left - 1, id, new Set([...used, id]));
      };
      assign(k, 0, new Set());
    }
  });
});

describe('fingerprintKeys', () => {
  it('packs exactly the key blocks under the table id when they fit (bit-by-bit reference)', () => {
    for (const [bits, k] of [
      [64, 0],
      [64, 3],
      [64, 6],
      [128, 3],
      [128, 7],
    ] as const) {
      const plan = planClusterJoin({ size: 1e6, k, bits, shards: 3 });
      const fps = plantedFingerprints(50, k, bits, 5);
      for (let i = 0; i < 50; i++) {
        const v = valueAt(fps, bits, i);
        const keys = fingerprintKeys(plan, v & ((1n << 64n) - 1n), v >> 64n);
        expect(keys.length).toBe(plan.tables.length);
        keys.forEach((key, t) => {
          expect(key >= 0n && key < 1n << 64n).toBe(true);
          if (plan.tableBits > 0) expect(Number(key >> BigInt(64 - plan.tableBits))).toBe(t);
          if (plan.keyBits[t]! <= 64 - plan.tableBits) {
            const low = (key & ((1n << BigInt(plan.keyBits[t]!)) - 1n)).toString(2).padStart(plan.keyBits[t]!, '0');
            expect(`${t}:${low}`).toBe(referenceKeyBits(plan, t, v));
          }
        });
      }
    }
  });

  it('folds keys wider than 64 bits: equal blocks give equal keys, and distinct blocks rarely collide', () => {
    const plan = planClusterJoin({ size: 100, k: 0, bits: 128, shards: 1 });
    expect(plan.keyBits[0]).toBe(128);
    const fps = plantedFingerprints(2000, 0, 128, 9);
    const seen = new Map<bigint, bigint>();
    let collisions = 0;
    for (let i = 0; i < 2000; i++) {
      const v = valueAt(fps, 128, i);
      const [key] = fingerprintKeys(plan, fps[2 * i]!, fps[2 * i + 1]!);
      const before = seen.get(key!);
      if (before !== undefined && before !== v) collisions++;
      seen.set(key!, v);
    }
    expect(collisions).toBe(0);
  });

  it('refuses grid plans (their keys come from ids)', () => {
    expect(() => fingerprintKeys(planClusterJoin({ size: 10, k: 3, shards: 2, blocks: 'grid' }), 1n)).toThrow(
      RangeError,
    );
  });
});

describe('planClusterJoin: cost model', () => {
  it('keeps key rows and join rows near-linear in n at k = 3 (64 bits), from 10^5 to 10^10', () => {
    for (const shards of [3, 10, 100]) {
      for (let n = 1e5; n <= 1e10; n *= 10) {
        const plan = planClusterJoin({ size: n, k: 3, shards });
        expect(plan.kind).toBe('blocks');
        expect(plan.keysPerFingerprint).toBeLessThanOrEqual(35);
        expect(plan.estimate.keyRows).toBe(n * plan.keysPerFingerprint);
        // Join rows stay within a small multiple of the key rows: no n² term survives.
        expect(plan.estimate.joinRows).toBeLessThanOrEqual(4 * plan.estimate.keyRows);
        expect(plan.estimate.keyRowsPerShard).toBeCloseTo(plan.estimate.keyRows / shards);
      }
    }
  });

  it('picks five blocks keyed by pairs at 10^7, k = 3 (the measured best), four 16-bit blocks at 10^4', () => {
    const big = planClusterJoin({ size: 1e7, k: 3, shards: 3 });
    expect([big.blocks.length, big.tables.length]).toEqual([5, 10]);
    expect(big.keyBits.every((w) => w >= 25 && w <= 26)).toBe(true);
    const small = planClusterJoin({ size: 1e4, k: 3, shards: 3 });
    expect([small.blocks.length, small.tables.length]).toEqual([4, 4]);
  });

  it('compares everything (grid) when no block plan is cheaper, with one group per shard', () => {
    const plan = planClusterJoin({ size: 1e4, k: 40, shards: 3 });
    expect(plan.kind).toBe('grid');
    expect(plan.groups).toBe(3);
    expect(plan.keysPerFingerprint).toBe(3);
  });

  it('gives every group pair its own key', () => {
    const seen = new Set<number>();
    for (let g = 0; g < 20; g++) for (let j = g; j < 20; j++) seen.add(groupPairKey(g, j));
    expect(seen.size).toBe(210);
    expect(groupPairKey(3, 7)).toBe(groupPairKey(7, 3));
  });
});

describe('keyParts and keyOwner: who joins which key', () => {
  it('gives every shard a part and no shard more than 1.1 times the average, for 1-40 tables on 1-200 shards', () => {
    for (let tables = 1; tables <= 40; tables++) {
      for (let shards = 1; shards <= 200; shards++) {
        const parts = keyParts(tables, shards);
        expect(Number.isInteger(Math.log2(parts))).toBe(true);
        const owned = new Array<number>(shards).fill(0);
        for (let t = 0; t < tables; t++) for (let p = 0; p < parts; p++) owned[(t * parts + p) % shards]!++;
        expect(Math.min(...owned)).toBeGreaterThan(0);
        expect(Math.max(...owned)).toBeLessThanOrEqual(1.1 * ((tables * parts) / shards));
      }
    }
  });

  it('routes a key by its table and low bits to one shard in range, grid keys by key mod shards', () => {
    const plan = planClusterJoin({ size: 1e7, k: 3, shards: 3 });
    expect(plan.parts).toBe(2);
    expect(keyOwner(plan, 0, 0n)).toBe(0);
    expect(keyOwner(plan, 0, 1n)).toBe(1);
    expect(keyOwner(plan, 4, 0xffn)).toBe((4 * 2 + 1) % 3);
    const grid = planClusterJoin({ size: 1e4, k: 40, shards: 3 });
    expect(grid.parts).toBe(1);
    expect(keyOwner(grid, 0, 5n)).toBe(2);
  });
});

describe('cluster SQL', () => {
  const plans = [
    planClusterJoin({ size: 1e7, k: 3, shards: 3 }),
    planClusterJoin({ size: 1e5, k: 6, bits: 128, shards: 3 }),
    planClusterJoin({ size: 1e4, k: 40, shards: 3 }),
    planClusterJoin({ size: 100, k: 0, bits: 128, shards: 1 }),
  ];
  it('avoids what 18.16 or current ClickHouse lack: bitCount, hammingDistance, ON CLUSTER, query parameters', () => {
    for (const plan of plans) {
      const sql = [
        ...createSql(plan, planClusterLookup({ size: plan.plannedSize, k: plan.k, bits: plan.bits, shards: 3 }), names),
        ...joinSql(plan, names).flatMap((round) => [...round.create, round.scatter, round.join, ...round.drop]),
        scanSql(plan, names, [1n, 2n].slice(0, plan.bits / 64), 3),
        ...(plan.kind === 'blocks' ? [lookupSql(plan, names, [1n, 2n].slice(0, plan.bits / 64), [5n], 3)] : []),
      ].join('\n');
      expect(sql).not.toMatch(/bitCount|hammingDistance|ON CLUSTER|\{[a-z_]+:/i);
      // Subtraction of UInt64 gives Int64 in ClickHouse: none anywhere.
      expect(sql).not.toMatch(/minus\(| - /);
    }
  });

  it("joins round by round: each shard sends its fingerprints' key rows of the round to their owners, then joins", () => {
    for (const plan of plans) {
      const rounds = joinRounds(plan);
      const sql = joinSql(plan, names);
      expect(sql).toHaveLength(rounds.length);
      // Round r holds pass r of every shard, so each shard reads its fingerprints once per round.
      const passCounts = Array.from({ length: plan.shards }, (_, s) => joinPasses(plan, s).length);
      expect(rounds).toHaveLength(Math.max(...passCounts));
      for (const [r, round] of sql.entries()) {
        const slots = rounds[r]!;
        if (plan.kind === 'blocks')
          expect(slots).toEqual(passCounts.flatMap((_, s) => joinPasses(plan, s)[r] ?? []).sort((x, y) => x - y));
        // Grid keys belong to key mod shards; a block round computes its tables' keys (arrayJoin only for several)
        // and keeps the rows of its slots (table · parts + low key bits) unless it holds whole tables.
        const owner = plan.kind === 'grid' ? 'key' : `.* \\* ${plan.parts} \\+ bitAnd\\(key, ${plan.parts - 1}\\)`;
        expect(round.create[0]).toMatch(
          new RegExp(`^CREATE TABLE default\\.t_join_${r} \\(key UInt64, id UInt64, fp UInt64.*\\) ENGINE = Memory$`),
        );
        expect(round.create[1]).toMatch(
          new RegExp(
            `^CREATE TABLE default\\.t_join_${r}_all AS default\\.t_join_${r} ENGINE = Distributed\\(simhash, default, t_join_${r}, ${owner}\\)$`,
          ),
        );
        const tables = new Set(slots.map((slot) => Math.floor(slot / plan.parts)));
        const key = plan.kind === 'grid' || tables.size > 1 ? 'arrayJoin\\(.*\\)' : 'bitOr\\(.*\\)|toUInt64\\(.*\\)';
        const filter =
          plan.kind === 'grid' || slots.length === tables.size * plan.parts
            ? ''
            : ` WHERE \\(${owner}\\) IN \\(${slots.join(', ')}\\)`;
        expect(round.scatter).toMatch(
          new RegExp(
            `^INSERT INTO default\\.t_join_${r}_all SELECT (${key}) AS key, id, .* FROM default\\.t_fp${filter}$`,
          ),
        );
        expect(round.join).toContain(
          `FROM default.t_join_${r} ALL INNER JOIN (SELECT key, id AS id_2, ${plan.bits === 64 ? 'fp AS fp_2' : 'fp AS fp_2, fp_hi AS fp_hi_2'} FROM default.t_join_${r}) USING key WHERE id < id_2`,
        );
        expect(round.drop).toEqual([
          `DROP TABLE IF EXISTS default.t_join_${r}_all`,
          `DROP TABLE IF EXISTS default.t_join_${r}`,
        ]);
      }
    }
  });

  it("splits every shard's slots into passes of at most PASS_KEY_ROWS planned key rows, each slot once", () => {
    for (const [size, k, shards] of [
      [1e7, 3, 3],
      [1e8, 3, 3],
      [1e9, 3, 100],
      [300, 6, 1],
      [1e5, 10, 7],
    ] as const) {
      const plan = planClusterJoin({ size, k, shards });
      const seen: number[] = [];
      for (let s = 0; s < shards; s++) {
        for (const pass of joinPasses(plan, s)) {
          expect(pass.length).toBeGreaterThan(0);
          if (pass.length > 1) expect((pass.length * size) / plan.parts).toBeLessThanOrEqual(PASS_KEY_ROWS);
          for (const slot of pass) {
            expect(slot % shards).toBe(s);
            seen.push(slot);
          }
        }
      }
      expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: plan.tables.length * plan.parts }, (_, i) => i));
    }
  });
});

describe('createClickHouseTables: bad input fails before any request', () => {
  // Port 9 (discard) on loopback: nothing listens there, so a request would fail differently.
  const urls = 'http://127.0.0.1:9';
  const base = { urls, table: 'x', k: 3, expectedSize: 10 };
  const cases: Array<[string, unknown, ErrorConstructor, RegExp]> = [
    ['options not an object', null, TypeError, /options must be an object/],
    ['unknown option', { ...base, kk: 1 }, TypeError, /unknown option "kk"/],
    ['urls missing', { ...base, urls: undefined }, TypeError, /urls must be/],
    ['a URL that is not http', { ...base, urls: 'ftp://x' }, RangeError, /"ftp:\/\/x"/],
    ['table not an identifier', { ...base, table: 'a; DROP' }, RangeError, /"a; DROP"/],
    ['k not an integer', { ...base, k: 2.5 }, RangeError, /k must be an integer from 0 to 64, got 2.5/],
    ['k too large', { ...base, bits: 128, k: 129 }, RangeError, /from 0 to 128, got 129/],
    ['k a string', { ...base, k: '3' }, TypeError, /k must be a number, got "3"/],
    ['bits', { ...base, bits: 32 }, RangeError, /bits must be 64 or 128, got 32/],
    ['expectedSize', { ...base, expectedSize: -1 }, RangeError, /size must be an integer/],
    ['blocks too few', { ...base, blocks: 3 }, RangeError, /blocks must be an integer from 4 to 16, got 3/],
    ['requestTimeout', { ...base, requestTimeout: 0 }, RangeError, /requestTimeout/],
  ];
  for (const [what, options, type, message] of cases) {
    it(what, async () => {
      const p = createClickHouseTables(options as never);
      await expect(p).rejects.toThrow(type);
      await expect(p).rejects.toThrow(message);
    });
  }
});
