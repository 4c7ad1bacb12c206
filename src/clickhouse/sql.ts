// The SQL of the cluster plans (plan.ts): the tables every shard holds, the join and the lookups. Valid on
// ClickHouse 18.16 (Debian's) and current releases alike: no bitCount/hammingDistance (18.16 lacks them; a SWAR
// popcount works on both), no query parameters (values are inlined, each one a number this module formats), no
// ON CLUSTER (it needs ZooKeeper: the client creates the tables on each shard in turn).
// The join runs on every shard at once, each in passes over the key parts it owns (joinPasses): a pass reads the
// Distributed fingerprint table, every shard computes its fingerprints' keys of the pass's tables and sends only the
// rows of the pass's parts, so the shuffle happens in the read and no key row is ever stored on disk. Lookups go to
// every shard's local tables at once. (A Distributed key table as the join's FROM with the
// local one on the right works too, but storing 10^8 key rows took longer than the join itself.)
import { type ClusterJoinPlan, FOLD_MULTIPLIER, isFolded, keySegments, tableMask } from './plan.js';

export interface TableNames {
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

export function dropSql(names: TableNames): string[] {
  const t = tableNames(names);
  return [t.keysView, t.keysAll, t.fpAll, t.keys, t.fp, t.meta].map((name) => `DROP TABLE IF EXISTS ${name}`);
}

/** Key rows that one pass of a shard's join gathers, about (planned): its Memory table and hash table stay bounded. */
export const PASS_KEY_ROWS = 10_000_000;

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
 * The key rows of one pass: every shard's fingerprints turned into key rows there, and only the rows of the pass's
 * slots sent (the shuffle happens as the shard reads; no key rows are stored on disk). Each shard computes only the
 * keys of the pass's tables, so every key is computed once in the whole join, not once per shard.
 */
function passKeyRowsSql(plan: ClusterJoinPlan, names: TableNames, shard: number, slots: readonly number[]): string {
  const t = tableNames(names);
  const columns = ['id', ...fpColumns(plan)].join(', ');
  if (plan.kind === 'grid') {
    const owner = plan.shards > 1 ? ` WHERE key % ${plan.shards} = ${shard}` : '';
    return `SELECT arrayJoin(${keysArraySql(plan)}) AS key, ${columns} FROM ${t.fpAll}${owner}`;
  }
  const tables = [...new Set(slots.map((slot) => Math.floor(slot / plan.parts)))];
  const key =
    tables.length === 1 ? keySql(plan, tables[0]!) : `arrayJoin([${tables.map((i) => keySql(plan, i)).join(', ')}])`;
  // Whole tables need no condition; otherwise the key's slot (its table and low bits) must be one of the pass's.
  const whole = slots.length === tables.length * plan.parts;
  const slot = `${tableIdSql(plan)} * ${plan.parts} + bitAnd(key, ${plan.parts - 1})`;
  return `SELECT ${key} AS key, ${columns} FROM ${t.fpAll}${whole ? '' : ` WHERE (${slot}) IN (${slots.join(', ')})`}`;
}

/** One pass of a shard's join: its key rows gathered once into a Memory table, their self-join, and the drop. */
export interface ShardJoinSql {
  readonly gather: string;
  readonly join: string;
  readonly drop: string;
}

/**
 * The join of shard `shard`'s keys, pass by pass (joinPasses), sent to that shard (every shard runs its own at
 * once; the client merges the streams). Join rows: a, b (ids, a < b), distance. `scratch` names the shard's
 * Memory table of key rows (gathered once, not once per join side: measured 20-30 % faster at 10^6 on 18.16).
 * Passes of one or a few tables also gather cheaper than all keys at once: measured at 10^7 on 18.16, a pass of
 * one table cost 0.89 µs of CPU per key row, the shard's whole share at once 1.01 µs (no arrayJoin, no filter).
 */
export function joinSql(plan: ClusterJoinPlan, names: TableNames, shard: number, scratch?: string): ShardJoinSql[] {
  const table = `${names.database}.${scratch ?? `${names.base}_join_${shard}`}`;
  const other = fpColumns(plan).map((c) => `${c}_2`);
  const once =
    plan.kind === 'grid'
      ? `${groupPairKeySql(`id % ${plan.groups}`, `id_2 % ${plan.groups}`)} = key`
      : `${firstAgreeingTableSql(plan)} = ${tableIdSql(plan)}`;
  const right = ['id', ...fpColumns(plan)].map((c) => `${c} AS ${c}_2`).join(', ');
  return joinPasses(plan, shard).map((slots) => ({
    gather: `CREATE TABLE ${table} ENGINE = Memory AS ${passKeyRowsSql(plan, names, shard, slots)}`,
    // id < id_2 first, in the inner query: it drops every key row's match with itself (most join rows) and half
    // of the rest before the popcount and the first-table test run (18.16 evaluates a WHERE's every operand on
    // every row): 20 % less CPU at 10^7.
    join:
      `SELECT id AS a, id_2 AS b, ${distanceSql(plan, other)} AS distance FROM ` +
      `(SELECT key, ${['id', 'id_2', ...fpColumns(plan), ...other].join(', ')} FROM ${table} ` +
      `ALL INNER JOIN (SELECT key, ${right} FROM ${table}) USING key WHERE id < id_2) ` +
      `WHERE distance <= ${plan.k} AND ${once}`,
    drop: `DROP TABLE IF EXISTS ${table}`,
  }));
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
