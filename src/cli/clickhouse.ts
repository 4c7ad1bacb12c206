// The command line's ClickHouse parts: `sql --engine clickhouse` (the DDL and the join, for people who run SQL
// themselves) and `dedup --clickhouse URLS` (the join on a cluster). Both load simhash-wasm/clickhouse lazily, so
// the other commands never touch it (in dist/, cli.mjs imports ./clickhouse.mjs).
import { parseArgs } from 'node:util';
import type { Pairs } from '../results.js';
import { write } from './output.js';
import { NAME, UsageError } from './report.js';
import { HELP, choice, intOption } from './usage.js';

const SQL_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  engine: { type: 'string' },
  k: { type: 'string' },
  bits: { type: 'string' },
  shards: { type: 'string' },
  size: { type: 'string' },
  table: { type: 'string' },
  cluster: { type: 'string' },
  database: { type: 'string' },
} as const;

function identifier(value: string | undefined, name: string, fallback: string): string {
  const v = value ?? fallback;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v))
    throw new UsageError(`--${name} must be a SQL identifier (letters, digits, _), got ${JSON.stringify(v)}`);
  return v;
}

export async function sqlCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseArgs({ args, options: SQL_OPTIONS, allowPositionals: true });
  if (v.help) {
    await write(HELP.sql + '\n');
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`sql takes no inputs, got ${JSON.stringify(positionals[0])}`);
  if (v.engine === undefined) throw new UsageError('--engine is required (clickhouse)');
  choice(v.engine, 'engine', ['clickhouse'] as const, 'clickhouse');
  const bits = choice(v.bits, 'bits', ['64', '128'] as const, '64') === '128' ? 128 : 64;
  if (v.k === undefined) throw new UsageError('--k is required');
  const k = intOption(v.k, 'k', 3, 0, bits);
  const shards = intOption(v.shards, 'shards', 1, 1, 1024);
  const size = intOption(v.size, 'size', 1_000_000, 1, Number.MAX_SAFE_INTEGER);
  const names = {
    base: identifier(v.table, 'table', 'simhash'),
    cluster: identifier(v.cluster, 'cluster', 'simhash'),
    database: identifier(v.database, 'database', 'default'),
  };
  const ch = await import('../clickhouse/index.js');
  const plan = ch.planClusterJoin({ size, k, bits, shards });
  const lookup = ch.planClusterLookup({ size, k, bits, shards });
  const t = `${names.database}.${names.base}`;
  const shape =
    plan.kind === 'grid'
      ? `grid of ${plan.groups} groups (every pair compared)`
      : `${plan.blocks.length} blocks, ${plan.tables.length} keys per fingerprint of ${Math.min(...plan.keyBits)}-${Math.max(...plan.keyBits)} bits`;
  const lines = [
    `-- ${NAME}: near-duplicate join on ClickHouse, k = ${k}, ${bits}-bit fingerprints, ${shards} shard${shards === 1 ? '' : 's'} of cluster ${names.cluster}, planned for ${size} fingerprints`,
    `-- join plan: ${shape}; about ${fmt(plan.estimate.keyRowsPerShard)} key rows and ${fmt(plan.estimate.joinRowsPerShard)} join rows per shard`,
    lookup
      ? `-- lookups probe ${lookup.tables.length} keys per fingerprint (${t}_keys, filled by ${t}_keys_mv)`
      : '-- lookups scan (no lookup keys at this k)',
    '',
    '-- 1. On every shard (ON CLUSTER would need ZooKeeper):',
    ...ch.createSql(plan, lookup, names).map((s) => `${s};`),
    '',
    `-- 2. Insert the fingerprints into any shard's ${t}_fp, spread over the shards: id and fingerprint as UInt64`,
    `--    (128 bits: low word, then high), e.g. ${NAME} hash --format tsv${bits === 128 ? ' --bits 128' : ''} FILES |`,
    `--    clickhouse-client --query "INSERT INTO ${t}_fp FORMAT TabSeparated"`,
    '',
    '-- 3. The join, round by round. Run each statement on every shard, and let every shard finish it before any',
    '--    shard starts the next (the scatter needs insert_distributed_sync = 1, so that its rows have arrived when',
    "--    it returns); the union of the joins' rows over the shards and rounds is every pair (a < b) within k, once.",
    `SET ${Object.entries(ch.SCATTER_SETTINGS)
      .map(([name, value]) => `${name} = ${value}`)
      .join(', ')};`,
  ];
  for (const [r, round] of ch.joinSql(plan, names).entries()) {
    lines.push(`-- round ${r + 1}`, ...round.create.map((q) => `${q};`), `${round.scatter};`, `${round.join};`);
    lines.push(...round.drop.map((q) => `${q};`));
  }
  await write(lines.join('\n') + '\n');
  return 0;
}

function fmt(x: number): string {
  return x >= 1e4 ? x.toExponential(1).replace('e+', 'e') : String(Math.round(x));
}

export interface ClusterDedupResult {
  count: number;
  pairs: { a: Uint32Array; b: Uint32Array; distance: Uint8Array };
  /** Milliseconds: creating and filling the tables, the join (pairs streamed back), dropping. */
  timings: { insert: number; join: number };
}

/**
 * The join of `fingerprints` (one word each at 64 bits, two at 128) on the cluster at `urls`: in tables of its
 * own, dropped afterwards. Ids are the fingerprints' indices.
 */
export async function joinOnCluster(
  urls: string,
  fingerprints: BigUint64Array,
  k: number,
  bits: 64 | 128,
): Promise<ClusterDedupResult> {
  const ch = await import('../clickhouse/index.js');
  const count = fingerprints.length / (bits / 64);
  const t0 = performance.now();
  const tables = await ch.createClickHouseTables({
    urls,
    table: `simhash_cli_${process.pid}_${Date.now()}`,
    k,
    bits,
    expectedSize: Math.max(1, count),
  });
  try {
    await tables.insert(fingerprints);
    await tables.finish();
    const t1 = performance.now();
    const batches: Pairs<BigUint64Array>[] = [];
    for await (const batch of tables.pairs()) batches.push(batch);
    const total = batches.reduce((s, b) => s + b.a.length, 0);
    const order = new Uint32Array(total);
    const a = new Uint32Array(total);
    const b = new Uint32Array(total);
    const distance = new Uint8Array(total);
    let at = 0;
    for (const batch of batches) {
      a.set(Uint32Array.from(batch.a, Number), at);
      b.set(Uint32Array.from(batch.b, Number), at);
      distance.set(batch.distance, at);
      at += batch.a.length;
    }
    // Ordered by (a, b) as findNearDuplicates orders them.
    for (let i = 0; i < total; i++) order[i] = i;
    order.sort((x, y) => a[x]! - a[y]! || b[x]! - b[y]!);
    const pairs = {
      a: Uint32Array.from(order, (i) => a[i]!),
      b: Uint32Array.from(order, (i) => b[i]!),
      distance: Uint8Array.from(order, (i) => distance[i]!),
    };
    return { count, pairs, timings: { insert: t1 - t0, join: performance.now() - t1 } };
  } finally {
    await tables.drop().catch(() => undefined);
    await tables.close();
  }
}
