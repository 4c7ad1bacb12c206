// The SQL of the cluster plans (plan.ts): the tables every shard holds, the join and the lookups. Valid on
// ClickHouse 18.16 (Debian's) and current releases alike: no bitCount/hammingDistance (18.16 lacks them; a SWAR
// popcount works on both), no query parameters (values are inlined, each one a number this module formats), no
// ON CLUSTER (it needs ZooKeeper: the client creates the tables on each shard in turn).
// The join runs in rounds (joinRounds; round r is every shard's pass r over the key parts it owns, joinPasses). In a
// round every shard computes its own fingerprints' keys of the round's tables and sends each row, through a
// Distributed table over the round's Memory tables, to the shard that owns its key; then every shard self-joins the
// rows it received. Each shard reads its fingerprints once per round, whatever the number of shards, and no key row
// is ever stored on disk. Lookups go to every shard's local tables at once. (A Distributed key table as the join's
// FROM with the local one on the right works too, but storing 10^8 key rows in MergeTree took longer than the join.)
import { type ClusterJoinPlan, FOLD_MULTIPLIER, isFolded, keySegments, tableMask } from './plan.js';

/** Where the tables live: database, cluster and the base name every table name derives from. */
export interface TableNames {
  /** The database holding the tables on every shard (it must exist). */
  readonly database: string;
  /** The cluster name of the Distributed tables (remote_servers). */
  readonly cluster: string;
  /** Base name: <base>_fp, <base>_keys (and view <base>_keys_mv), Distributed <base>_fp_all, <base>_keys_all, <base>_meta. */
  readonly base: string;
}

export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function tableNames(names: TableNames) {
  const q = (suffix: string) => `${names.database}.${names.base}${suffix}`;
  return {
    fp: q('_fp'),
    keys: q('_keys'),
    fpAll: q('_fp_all'),
    keysAll: q('_keys_all'),
    keysView: q('_keys_mv'),
    meta: q('_meta'),
  };
}

const M55 = 0x5555555555555555n;
const M33 = 0x3333333333333333n;
const M0F = 0x0f0f0f0f0f0f0f0fn;
const H01 = 0x0101010101010101n;

/** Popcount of a UInt64 expression, SWAR with additions only (UInt64 − UInt64 is Int64 in ClickHouse). */
export function popcountSql(x: string, name: string): string {
  // Each step is named once (an inline alias) and referred to by name: the text stays linear in the steps, and
  // 18.16 analyses a lookup in a fraction of the time the expanded expression took.
  const a = `(plus(bitAnd((${x} AS ${name}_1), ${M55}), bitAnd(bitShiftRight(${name}_1, 1), ${M55})) AS ${name}_2)`;
  const b = `(plus(bitAnd(${a}, ${M33}), bitAnd(bitShiftRight(${name}_2, 2), ${M33})) AS ${name}_4)`;
  const c = `bitAnd(plus(${b}, bitShiftRight(${name}_4, 4)), ${M0F})`;
  return `bitShiftRight(multiply(${c}, ${H01}), 56)`;
}

/** Columns of a fingerprint: fp (64 bits), or fp (low word) and fp_hi. */
function fpColumns(plan: ClusterJoinPlan): string[] {
  return plan.bits === 64 ? ['fp'] : ['fp', 'fp_hi'];
}

/** Name of word w's XOR with the other fingerprint, defined by distanceSql (ClickHouse aliases reach the WHERE). */
const xorName = (w: number) => `pop_${w}_1`;

/**
 * Hamming distance between the fingerprint columns and `other` (same columns with a suffix, or literals); defines
 * the aliases pop_0_1 (and pop_1_1), the XORs that firstAgreeingTableSql reads, so it goes in the same query's SELECT.
 */
function distanceSql(plan: ClusterJoinPlan, other: readonly string[]): string {
  return fpColumns(plan)
    .map((c, i) => popcountSql(`bitXor(${c}, ${other[i]})`, `pop_${i}`))
    .join(' + ');
}

/** The first table whose key blocks agree (XOR zero under its mask), T when none does. */
function firstAgreeingTableSql(plan: ClusterJoinPlan): string {
  const args: string[] = [];
  plan.tables.forEach((_, t) => {
    const masks = tableMask(plan, t);
    const parts = fpColumns(plan)
      .map((_c, w) => (masks[w] === 0n ? '' : `bitAnd(${xorName(w)}, ${masks[w]})`))
      .filter((p) => p);
    const agree = parts.length === 1 ? `${parts[0]} = 0` : `bitOr(${parts.join(', ')}) = 0`;
    args.push(agree, String(t));
  });
  return `multiIf(${args.join(', ')}, ${plan.tables.length})`;
}

function tableIdSql(plan: ClusterJoinPlan): string {
  return plan.tableBits === 0 ? '0' : `bitShiftRight(key, ${64 - plan.tableBits})`;
}

function segmentSql(plan: ClusterJoinPlan, word: 0 | 1, shift: number, width: number): string {
  const col = fpColumns(plan)[word]!;
  const shifted = shift === 0 ? col : `bitShiftRight(${col}, ${shift})`;
  return width + shift === 64 ? shifted : `bitAnd(${shifted}, ${(1n << BigInt(width)) - 1n})`;
}

/** Table t's key of the row's fingerprint (fingerprintKeys in plan.ts computes the same in JavaScript). */
function keySql(plan: ClusterJoinPlan, t: number): string {
  const segs = keySegments(plan, t);
  let key: string;
  if (isFolded(plan, t)) {
    let h = '';
    for (const s of segs) {
      const v = segmentSql(plan, s.word, s.shift, s.width);
      h = h === '' ? v : `bitXor(multiply(${h}, ${FOLD_MULTIPLIER}), ${v})`;
    }
    key = `bitShiftRight(multiply(${h}, ${FOLD_MULTIPLIER}), ${plan.tableBits})`;
  } else {
    const parts = segs.map((s) => {
      const v = segmentSql(plan, s.word, s.shift, s.width);
      return s.target === 0 ? v : `bitShiftLeft(${v}, ${s.target})`;
    });
    key = parts.reduce((acc, p) => `bitOr(${acc}, ${p})`);
  }
  if (plan.tableBits === 0) return `toUInt64(${key})`;
  return `bitOr(${BigInt(t) << BigInt(64 - plan.tableBits)}, ${key})`;
}

/** Grid plan: the key of the group pair of groups g and j (SQL of groupPairKey). */
function groupPairKeySql(g: string, j: string): string {
  const lo = `least(${g}, ${j})`;
  const hi = `greatest(${g}, ${j})`;
  return `toUInt64(plus(intDiv(multiply(${hi}, plus(${hi}, 1)), 2), ${lo}))`;
}

function columnsDdl(plan: ClusterJoinPlan): string {
  return fpColumns(plan)
    .map((c) => `${c} UInt64`)
    .join(', ');
}

/** The key rows of each fingerprint under a plan, as an array expression (arrayJoin makes one row per key). */
function keysArraySql(plan: ClusterJoinPlan): string {
  if (plan.kind === 'grid')
    return `arrayMap(j -> ${groupPairKeySql(`id % ${plan.groups}`, 'j')}, range(${plan.groups}))`;
  return `[${plan.tables.map((_, i) => keySql(plan, i)).join(', ')}]`;
}

/** Rows read per index mark of the lookup keys: a probe reads one granule or two, so smaller than the default. */
const KEY_GRANULE = 256;

/**
 * CREATE statements for one shard, in order (each shard gets the same ones; ON CLUSTER would need ZooKeeper): the
 * fingerprints, the Distributed table over them, and with a lookup plan the lookup keys, filled from each insert by
 * a materialized view (key rows stay on the shard of their fingerprint: a lookup asks every shard anyway).
 */
export function createSql(plan: ClusterJoinPlan, lookup: ClusterJoinPlan | null, names: TableNames): string[] {
  const t = tableNames(names);
  const local = (full: string) => full.slice(names.database.length + 1);
  const cols = fpColumns(plan).join(', ');
  const out = [
    `CREATE TABLE ${t.fp} (id UInt64, ${columnsDdl(plan)}) ENGINE = MergeTree() ORDER BY id`,
    `CREATE TABLE ${t.fpAll} AS ${t.fp} ENGINE = Distributed(${names.cluster}, ${names.database}, ${local(t.fp)}, id)`,
    `CREATE TABLE ${t.meta} (state String, fingerprints UInt64, key_rows UInt64, plan String) ENGINE = TinyLog`,
  ];
  if (lookup) {
    out.push(
      `CREATE TABLE ${t.keys} (key UInt64, id UInt64, ${columnsDdl(plan)}) ENGINE = MergeTree() ORDER BY key ` +
        `SETTINGS index_granularity = ${KEY_GRANULE}`,
      `CREATE TABLE ${t.keysAll} AS ${t.keys} ENGINE = Distributed(${names.cluster}, ${names.database}, ${local(t.keys)}, id)`,
      `CREATE MATERIALIZED VIEW ${t.keysView} TO ${t.keys} AS ` +
        `SELECT arrayJoin(${keysArraySql(lookup)}) AS key, id, ${cols} FROM ${t.fp}`,
    );
  }
  return out;
}

/** DROP TABLE IF EXISTS statements for every table createSql makes, the view first; run on each shard. */
export function dropSql(names: TableNames): string[] {
  const t = tableNames(names);
  return [t.keysView, t.keysAll, t.fpAll, t.keys, t.fp, t.meta].map((name) => `DROP TABLE IF EXISTS ${name}`);
}

/**
 * Key rows that one pass of a shard's join gathers, about (planned): its Memory table and hash table stay bounded.
 * Smaller hash tables join faster, but every pass reads all fingerprints again. Measured at 10^7, k = 3, on 3 local
 * shards of 18.16 (2026-12-01; the join SQL alone, pairs counted on the server): passes of 5·10^6 key rows (one
 * part each) took 46.7-51.5 s (CPU 91-100 s), passes of 10^7 52.8-55.0 s (CPU 103-107 s), and half parts
 * (2.5·10^6, split on one more key bit) 65.5 s.
 */
export const PASS_KEY_ROWS = 5_000_000;

/**
 * The parts (keyOwner in plan.ts) that each pass of shard `shard`'s join gathers: slot t · parts + p is part p of
 * table t, and a pass takes consecutive owned slots up to PASS_KEY_ROWS. Grid plans: one pass.
 */
export function joinPasses(plan: ClusterJoinPlan, shard: number): number[][] {
  if (plan.kind === 'grid') return [[]];
  const owned: number[] = [];
  for (let slot = 0; slot < plan.tables.length * plan.parts; slot++) if (slot % plan.shards === shard) owned.push(slot);
  const perPass = Math.max(1, Math.floor(PASS_KEY_ROWS / Math.max(1, plan.plannedSize / plan.parts)));
  const passes: number[][] = [];
  for (let i = 0; i < owned.length; i += perPass) passes.push(owned.slice(i, i + perPass));
  return passes;
}

/**
 * The slots of each round of the join: round r is every shard's pass r (joinPasses), so that each shard reads its
 * fingerprints once per round, whatever the number of shards. Grid plans: one round.
 */
export function joinRounds(plan: ClusterJoinPlan): number[][] {
  if (plan.kind === 'grid') return [[]];
  const passes = Array.from({ length: plan.shards }, (_, shard) => joinPasses(plan, shard));
  const count = Math.max(...passes.map((p) => p.length));
  return Array.from({ length: count }, (_, r) => passes.flatMap((p) => p[r] ?? []).sort((x, y) => x - y));
}

/** The shard (mod the cluster's shard count) that owns a key row: keyOwner in plan.ts, in SQL over column `key`. */
function ownerSql(plan: ClusterJoinPlan): string {
  return plan.kind === 'grid' ? 'key' : `${tableIdSql(plan)} * ${plan.parts} + bitAnd(key, ${plan.parts - 1})`;
}

/**
 * The key rows of one round, computed from a shard's own fingerprints: only the round's tables' keys (each key is
 * computed once in the whole join), only the rows of the round's slots.
 */
function roundKeyRowsSql(plan: ClusterJoinPlan, names: TableNames, slots: readonly number[]): string {
  const t = tableNames(names);
  const columns = ['id', ...fpColumns(plan)].join(', ');
  if (plan.kind === 'grid') return `SELECT arrayJoin(${keysArraySql(plan)}) AS key, ${columns} FROM ${t.fp}`;
  const tables = [...new Set(slots.map((slot) => Math.floor(slot / plan.parts)))];
  const key =
    tables.length === 1 ? keySql(plan, tables[0]!) : `arrayJoin([${tables.map((i) => keySql(plan, i)).join(', ')}])`;
  // Whole tables need no condition; otherwise the key's slot (its table and low bits) must be one of the round's.
  const whole = slots.length === tables.length * plan.parts;
  return `SELECT ${key} AS key, ${columns} FROM ${t.fp}${whole ? '' : ` WHERE (${ownerSql(plan)}) IN (${slots.join(', ')})`}`;
}

/**
 * One round of the join. Every shard runs each statement, and every shard finishes a statement before any shard
 * starts the next: `create` (the round's Memory table of key rows and a Distributed table over it that routes each
 * row to the shard owning its key), `scatter` (each shard computes its own fingerprints' key rows of the round and
 * sends each to its owner; needs insert_distributed_sync = 1, SCATTER_SETTINGS, so that the rows have arrived when
 * it returns), `join` (each shard's self-join of the rows it received; its rows are a, b (ids, a < b), distance;
 * the union over the shards is the round's pairs) and `drop`.
 */
export interface JoinRoundSql {
  /** CREATE statements of the round's Memory table and the Distributed table that routes key rows to it. */
  readonly create: readonly string[];
  /** The INSERT … SELECT that sends every key row of the round to its owner (run with SCATTER_SETTINGS). */
  readonly scatter: string;
  /** The self-join of the rows a shard received: rows a, b (ids, a < b), distance. */
  readonly join: string;
  /** DROP statements of the round's tables. */
  readonly drop: readonly string[];
}

/** Settings the scatter statement needs: the INSERT into the Distributed table returns once every row is stored. */
export const SCATTER_SETTINGS = {
  /** The INSERT into a Distributed table waits until every shard has stored its rows. */
  insert_distributed_sync: 1,
} as const;

/**
 * The join, round by round (joinRounds). Each shard reads its own fingerprints once per round and sends the key
 * rows to their owners. Measured at 10^7, k = 3, on 3 local shards of 18.16 (same data, 2026-12-01): 51.3-57.5 s
 * (CPU 95-107 s) with the next round sent while one joins, against 57.0-58.3 s (CPU 104-110 s) for every shard
 * gathering its own passes through the Distributed fingerprint table (each pass then read every shard's
 * fingerprints: 7 rounds of reads became 20, and at 100 shards the reads would outgrow the join).
 * `scratch` names the rounds' tables (the same on every shard: the Distributed table addresses them by name).
 */
export function joinSql(plan: ClusterJoinPlan, names: TableNames, scratch = `${names.base}_join`): JoinRoundSql[] {
  const other = fpColumns(plan).map((c) => `${c}_2`);
  const once =
    plan.kind === 'grid'
      ? `${groupPairKeySql(`id % ${plan.groups}`, `id_2 % ${plan.groups}`)} = key`
      : `${firstAgreeingTableSql(plan)} = ${tableIdSql(plan)}`;
  const right = ['id', ...fpColumns(plan)].map((c) => `${c} AS ${c}_2`).join(', ');
  return joinRounds(plan).map((slots, r) => {
    // Each round its own tables: the next round's key rows can arrive while this one joins.
    const local = `${scratch}_${r}`;
    const table = `${names.database}.${local}`;
    const routed = `${table}_all`;
    return {
      create: [
        `CREATE TABLE ${table} (key UInt64, id UInt64, ${columnsDdl(plan)}) ENGINE = Memory`,
        `CREATE TABLE ${routed} AS ${table} ENGINE = Distributed(${names.cluster}, ${names.database}, ${local}, ${ownerSql(plan)})`,
      ],
      scatter: `INSERT INTO ${routed} ${roundKeyRowsSql(plan, names, slots)}`,
      // id < id_2 first, in the inner query: it drops every key row's match with itself (most join rows) and half
      // of the rest before the popcount and the first-table test run (18.16 evaluates a WHERE's every operand on
      // every row): 20 % less CPU at 10^7.
      join:
        `SELECT id AS a, id_2 AS b, ${distanceSql(plan, other)} AS distance FROM ` +
        `(SELECT key, ${['id', 'id_2', ...fpColumns(plan), ...other].join(', ')} FROM ${table} ` +
        `ALL INNER JOIN (SELECT key, ${right} FROM ${table}) USING key WHERE id < id_2) ` +
        `WHERE distance <= ${plan.k} AND ${once}`,
      drop: [`DROP TABLE IF EXISTS ${routed}`, `DROP TABLE IF EXISTS ${table}`],
    };
  });
}

/**
 * One lookup through a shard's lookup keys' primary key: the query's key rows (fingerprintKeys), verified in SQL;
 * each match comes from the first table it agrees on, so once. Exact for k ≤ plan.k. The client sends it to every
 * shard at once and merges the answers: asking each shard's local table directly was 2-4 times faster on 18.16
 * than one query through the Distributed table (whose initiator forwards the query and gathers the answers itself).
 */
export function lookupSql(
  plan: ClusterJoinPlan,
  names: TableNames,
  words: readonly bigint[],
  keys: readonly bigint[],
  k: number,
): string {
  const t = tableNames(names);
  const q = words.map(String);
  return (
    `SELECT id, ${distanceSql(plan, q)} AS distance FROM ${t.keys} PREWHERE key IN (${keys.join(', ')}) ` +
    `WHERE distance <= ${k} AND ${firstAgreeingTableSql(plan)} = ${tableIdSql(plan)}`
  );
}

/** A lookup that scans a shard's fingerprints (grid plans and k above the plan's), sent to every shard at once. */
export function scanSql(plan: ClusterJoinPlan, names: TableNames, words: readonly bigint[], k: number): string {
  const t = tableNames(names);
  return `SELECT id, ${distanceSql(plan, words.map(String))} AS distance FROM ${t.fp} WHERE distance <= ${k}`;
}
