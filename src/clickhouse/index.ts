// simhash-wasm/clickhouse: the near-duplicate join and lookups on a ClickHouse cluster, for corpora past one
// machine. Fingerprint anywhere (any number of processes, simhashMany), insert the fingerprints here, and the
// cluster shuffles key rows to their shards and joins them (plan.ts says how, sql.ts in which SQL).
// Node only; talks HTTP through the official client, @clickhouse/client (an optional peer dependency of the
// package, loaded when first needed), to every shard in turn: DDL goes to each shard (ON CLUSTER needs ZooKeeper).
// Tables are complete only when finish() has built every key row and written the completion marker on every
// shard; pairs() and query() refuse incomplete tables, so an interrupted insert is never taken for a whole one.
import type { ClickHouseClient } from '@clickhouse/client';
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { show } from '../errors.js';
import type { Neighbors, Pairs } from '../results.js';
import {
  type ClusterBits,
  type ClusterJoinPlan,
  checkBits,
  fingerprintKeys,
  keyParts,
  planClusterJoin,
  planClusterLookup,
} from './plan.js';
import {
  IDENTIFIER,
  type JoinRoundSql,
  SCATTER_SETTINGS,
  type TableNames,
  createSql,
  dropSql,
  joinSql,
  lookupSql,
  scanSql,
  tableNames,
} from './sql.js';

export type { Neighbors, Pairs } from '../results.js';
export type { ClusterBits, ClusterJoinEstimate, ClusterJoinPlan, ClusterPlanOptions } from './plan.js';
export { planClusterJoin, planClusterLookup } from './plan.js';
export {
  SCATTER_SETTINGS,
  createSql,
  dropSql,
  joinRounds,
  joinSql,
  lookupSql,
  scanSql,
  type JoinRoundSql,
  type TableNames,
} from './sql.js';

/**
 * Where the tables are: the shards' URLs, the tables' base name and the credentials. Malformed values throw
 * TypeError or RangeError naming them, before any connection.
 */
export interface ClickHouseConnectionOptions {
  /** One HTTP URL per shard, in the cluster's order (an array, or one string separated by commas). */
  urls: string | readonly string[];
  /** Base name of the tables: <table>_fp, <table>_keys, <table>_fp_all, <table>_keys_all, <table>_meta. */
  table: string;
  /** The cluster of remote_servers that the Distributed tables name (default "simhash", as scripts/clickhouse-cluster.sh). */
  cluster?: string;
  /** The database of the tables on every shard, a SQL identifier (default "default"); it must exist. */
  database?: string;
  /** ClickHouse user (default "default"). */
  username?: string;
  /** That user's password (default empty). */
  password?: string;
  /** Milliseconds one request may take (default one hour: a large join is one request). */
  requestTimeout?: number;
}

/** Options of createClickHouseTables: the connection, and what the tables are planned for. */
export interface CreateClickHouseTablesOptions extends ClickHouseConnectionOptions {
  /** The largest distance the tables serve (joins and exact lookups). */
  k: number;
  /** Fingerprint width (default 64). */
  bits?: ClusterBits;
  /** Fingerprints the tables are planned for. */
  expectedSize: number;
  /** Forces a plan (a block count, or 'grid'); normally chosen by planClusterJoin. */
  blocks?: number | 'grid';
}

/** Fingerprints to insert: one word each at 64 bits, two (low word first) at 128. */
export type FingerprintBatch =
  | BigUint64Array
  | {
      /** One id (UInt64) per fingerprint; a plain BigUint64Array batch gets consecutive ids instead. */
      readonly ids: BigUint64Array;
      /** The fingerprints, one word each at 64 bits, two (low word first) at 128. */
      readonly fingerprints: BigUint64Array;
    };

/** Options of ClickHouseTables.insert. */
export interface InsertOptions {
  /** Ids of a BigUint64Array input, one per fingerprint (default: consecutive, from the previous insert's end). */
  ids?: BigUint64Array;
}

/** Whether the tables are complete, and their row counts over all shards. */
export interface ClickHouseTableStatus {
  /** finish() built every key row and every shard holds the completion marker. */
  readonly complete: boolean;
  /** Fingerprint rows over all shards. */
  readonly fingerprints: number;
  /** Lookup key rows over all shards (0 when the tables have no lookup plan). */
  readonly keyRows: number;
  /** Why the tables are not complete. */
  readonly reason?: string;
}

interface Shard {
  readonly url: string;
  readonly client: ClickHouseClient;
}

const KNOWN_CONNECTION = ['urls', 'table', 'cluster', 'database', 'username', 'password', 'requestTimeout'];
const KNOWN_CREATE = [...KNOWN_CONNECTION, 'k', 'bits', 'expectedSize', 'blocks'];
/** Rows per chunk sent to one shard before the next shard's turn. */
const CHUNK_ROWS = 1 << 14;
/** Pairs per batch that pairs() yields. */
const PAIR_BATCH = 1 << 16;

/**
 * The UInt64 written in text[from, to) as decimal digits. Up to 15 digits are summed as a Number (exact below
 * 2^53) and converted once: 3-4 times faster than split and BigInt of each field, which cost the client 1.5 s of
 * CPU per 2.7·10^6 pairs beside the servers' join. Anything else goes to BigInt, which throws on non-digits.
 */
function decimal(text: string, from: number, to: number): bigint {
  if (to === from) throw new SyntaxError(`empty number in ${show(text)}`);
  if (to - from > 15) return BigInt(text.slice(from, to));
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return BigInt(text.slice(from, to));
    v = v * 10 + c;
  }
  return BigInt(v);
}
const M64 = (1n << 64n) - 1n;

interface Connection {
  names: TableNames;
  urls: string[];
  username: string;
  password: string;
  requestTimeout: number;
}

function checkConnection(options: unknown, known: readonly string[]): Connection {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`options must be an object with urls and table, got ${show(options)}`);
  for (const key of Object.keys(options))
    if (!known.includes(key)) throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  const o = options as Partial<CreateClickHouseTablesOptions>;
  const raw = typeof o.urls === 'string' ? o.urls.split(',') : o.urls;
  if (!Array.isArray(raw) || raw.length === 0 || raw.some((u) => typeof u !== 'string'))
    throw new TypeError(`urls must be a non-empty array of strings or a comma-separated string, got ${show(o.urls)}`);
  const urls = raw.map((u: string) => u.trim());
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new RangeError(`urls must be http(s) URLs, got ${show(url)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new RangeError(`urls must be http(s) URLs, got ${show(url)}`);
  }
  const identifier = (value: unknown, name: string, fallback?: string): string => {
    const v = value ?? fallback;
    if (typeof v !== 'string') throw new TypeError(`${name} must be a string, got ${show(v)}`);
    if (!IDENTIFIER.test(v) || v.length > 200)
      throw new RangeError(`${name} must be a SQL identifier (letters, digits, _), got ${show(v)}`);
    return v;
  };
  const text = (value: unknown, name: string): string => {
    if (value === undefined) return '';
    if (typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${show(value)}`);
    return value;
  };
  const timeout = o.requestTimeout ?? 3_600_000;
  if (typeof timeout !== 'number') throw new TypeError(`requestTimeout must be a number, got ${show(timeout)}`);
  if (!Number.isInteger(timeout) || timeout < 1)
    throw new RangeError(`requestTimeout must be a positive integer (ms), got ${show(timeout)}`);
  return {
    names: {
      base: identifier(o.table, 'table'),
      cluster: identifier(o.cluster, 'cluster', 'simhash'),
      database: identifier(o.database, 'database', 'default'),
    },
    urls,
    username: text(o.username, 'username') || 'default',
    password: text(o.password, 'password'),
    requestTimeout: timeout,
  };
}

async function connect(c: Connection): Promise<Shard[]> {
  let module: typeof import('@clickhouse/client');
  try {
    module = await import('@clickhouse/client');
  } catch (cause) {
    throw new Error('simhash-wasm/clickhouse needs @clickhouse/client: npm install @clickhouse/client', { cause });
  }
  return c.urls.map((url) => ({
    url,
    client: module.createClient({
      url,
      username: c.username,
      password: c.password,
      request_timeout: c.requestTimeout,
      // HTTP compression costs CPU on both ends of a loopback connection.
      compression: { request: false, response: false },
      // Failures reach the caller as errors naming the shard; the client's own log would print each one again.
      log: { level: module.ClickHouseLogLevel.OFF },
      // Progress headers keep a long join's connection busy, so idle timeouts do not cut it.
      clickhouse_settings: { send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '10000' },
    }),
  }));
}

/** Runs `op` on one shard; a failure names the shard, its URL and what was being done. */
async function onShard<T>(shards: readonly Shard[], i: number, what: string, op: (s: Shard) => Promise<T>): Promise<T> {
  const shard = shards[i]!;
  try {
    return await op(shard);
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`ClickHouse shard ${i + 1} of ${shards.length} (${shard.url}): ${what} failed: ${message}`, {
      cause,
    });
  }
}

/**
 * `op` on every shard at once. It settles when every shard has (a failure is thrown once the others are done, the
 * first shard's in order), so no caller goes on, say to drop tables, while a shard is still at the step.
 */
async function onEveryShard<T>(
  shards: readonly Shard[],
  what: string,
  op: (s: Shard, i: number) => Promise<T>,
): Promise<T[]> {
  const results = await Promise.allSettled(shards.map((_, i) => onShard(shards, i, what, (s) => op(s, i))));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

async function command(shard: Shard, query: string, settings: Record<string, string | number> = {}): Promise<void> {
  await shard.client.command({ query, clickhouse_settings: settings });
}

async function selectText(shard: Shard, query: string): Promise<string> {
  const rs = await shard.client.query({ query, format: 'TabSeparated' });
  return rs.text();
}

/**
 * Creates the tables on every shard, planned for `expectedSize` fingerprints at distance ≤ k. Bad options throw
 * TypeError or RangeError; a cluster whose shards differ from `urls`, or a failing shard, rejects with an error
 * naming the shard. Needs @clickhouse/client (Node only).
 *
 * @example
 * ```ts
 * import { init, simhashMany } from 'simhash-wasm';
 * import { createClickHouseTables } from 'simhash-wasm/clickhouse';
 *
 * await init();
 * const tables = await createClickHouseTables({
 *   urls: ['http://shard1:8123', 'http://shard2:8123'],
 *   table: 'docs',
 *   k: 3,
 *   expectedSize: 1_000_000,
 * });
 * try {
 *   await tables.insert(simhashMany(['first text', 'second text'])); // ids 0, 1, …
 *   await tables.finish();
 *   for await (const { a, b, distance } of tables.pairs()) {
 *     for (let i = 0; i < a.length; i++) console.log(a[i], b[i], distance[i]);
 *   }
 * } finally {
 *   await tables.close();
 * }
 * ```
 */
export async function createClickHouseTables(options: CreateClickHouseTablesOptions): Promise<ClickHouseTables> {
  const c = checkConnection(options, KNOWN_CREATE);
  const bits = checkBits(options.bits ?? 64);
  const plan = planClusterJoin({
    size: options.expectedSize,
    k: options.k,
    bits,
    shards: c.urls.length,
    ...(options.blocks !== undefined && { blocks: options.blocks }),
  });
  const lookup = planClusterLookup({ size: options.expectedSize, k: options.k, bits, shards: c.urls.length });
  const shards = await connect(c);
  const tables = makeTables(shards, c.names, plan, lookup);
  try {
    await tables.checkCluster();
    const meta = tableNames(c.names).meta;
    const saved = sqlString(JSON.stringify({ plan, lookup }));
    for (let i = 0; i < shards.length; i++) {
      await onShard(shards, i, 'creating the tables', async (s) => {
        for (const sql of createSql(plan, lookup, c.names)) await command(s, sql);
        await command(s, `INSERT INTO ${meta} VALUES ('created', 0, 0, ${saved})`);
      });
    }
  } catch (error) {
    await tables.close();
    throw error;
  }
  return tables;
}

/**
 * Opens tables made by createClickHouseTables (from this or another process), with the plan they were made with.
 * Rejects when they hold no plan or the cluster's shards differ from `urls`.
 *
 * @example
 * ```ts
 * import { openClickHouseTables } from 'simhash-wasm/clickhouse';
 *
 * const tables = await openClickHouseTables({ urls: 'http://shard1:8123,http://shard2:8123', table: 'docs' });
 * const near = await tables.query(0x843b7e804deb3397n); // [{ id, distance }], nearest first
 * await tables.close();
 * ```
 */
export async function openClickHouseTables(options: ClickHouseConnectionOptions): Promise<ClickHouseTables> {
  const c = checkConnection(options, KNOWN_CONNECTION);
  const shards = await connect(c);
  try {
    const meta = tableNames(c.names).meta;
    const text = await onShard(shards, 0, 'reading the plan', (s) =>
      selectText(s, `SELECT plan FROM ${meta} WHERE state = 'created'`),
    );
    const line = text.split('\n')[0];
    if (!line) throw new Error(`${meta} holds no plan: the tables were not made by createClickHouseTables`);
    const saved = JSON.parse(line.replace(/\\(.)/g, (_, ch: string) => (ch === 'n' ? '\n' : ch))) as {
      plan: ClusterJoinPlan;
      lookup: ClusterJoinPlan | null;
    };
    // Tables made before plans had parts: the parts only route the join, so they are derived again.
    const plan = { ...saved.plan, parts: saved.plan.parts ?? keyParts(saved.plan.tables.length, saved.plan.shards) };
    const tables = makeTables(shards, c.names, plan, saved.lookup);
    await tables.checkCluster();
    return tables;
  } catch (error) {
    await Promise.all(shards.map((s) => s.client.close()));
    throw error;
  }
}

function sqlString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The constructor, for the two functions above: private, so the declarations never name the client's types. */
let makeTables: (
  shards: readonly Shard[],
  names: TableNames,
  plan: ClusterJoinPlan,
  lookup: ClusterJoinPlan | null,
) => ClickHouseTables;

/** Tables on a cluster, made by createClickHouseTables or openClickHouseTables. */
export class ClickHouseTables {
  private nextId = 0n;
  private knownComplete = false;

  static {
    makeTables = (shards, names, plan, lookup) => new ClickHouseTables(shards, names, plan, lookup);
  }

  private constructor(
    private readonly shards: readonly Shard[],
    private readonly names: TableNames,
    /** How pairs() joins. */
    readonly plan: ClusterJoinPlan,
    /** The keys lookups probe (null: lookups scan). */
    readonly lookupPlan: ClusterJoinPlan | null,
  ) {}

  private get words(): 1 | 2 {
    return this.plan.bits === 64 ? 1 : 2;
  }

  /** @internal The cluster must have exactly the shards given, in that order (checked by their native ports). */
  async checkCluster(): Promise<void> {
    const text = await onShard(this.shards, 0, 'reading system.clusters', (s) =>
      selectText(s, `SELECT count() FROM system.clusters WHERE cluster = ${sqlString(this.names.cluster)}`),
    );
    const count = Number(text.trim());
    if (count !== this.shards.length) {
      throw new RangeError(
        `cluster ${show(this.names.cluster)} has ${count} shards in remote_servers, but ${this.shards.length} URLs were given`,
      );
    }
  }

  /**
   * Streams fingerprints into the shards' fingerprint tables (chunks go to the shards in turn, one insert per shard).
   * Takes a BigUint64Array or an (async) iterable of them or of { ids, fingerprints }. Returns how many went in.
   */
  async insert(
    input: BigUint64Array | Iterable<FingerprintBatch> | AsyncIterable<FingerprintBatch>,
    options: InsertOptions = {},
  ): Promise<number> {
    if (options === null || typeof options !== 'object')
      throw new TypeError(`options must be an object, got ${show(options)}`);
    for (const key of Object.keys(options))
      if (key !== 'ids') throw new TypeError(`unknown option ${JSON.stringify(key)}`);
    let source: Iterable<FingerprintBatch> | AsyncIterable<FingerprintBatch>;
    if (input instanceof BigUint64Array) {
      this.checkBatch(input, options.ids);
      source = [options.ids ? { ids: options.ids, fingerprints: input } : input];
    } else if (
      input !== null &&
      typeof input === 'object' &&
      (Symbol.asyncIterator in input || Symbol.iterator in input)
    ) {
      if (options.ids !== undefined) throw new TypeError('ids go with a BigUint64Array input; batches carry their own');
      source = input;
    } else {
      throw new TypeError(`fingerprints must be a BigUint64Array or an iterable of batches, got ${show(input)}`);
    }
    if (this.knownComplete || (await this.status()).complete)
      throw new Error(`tables ${this.names.base} are complete; create new tables to insert more`);
    const { fp, meta } = tableNames(this.names);
    // Every shard records that this insert began, and only a whole insert records its end: finish() refuses
    // tables with an insert that began and never ended (from this process or any other).
    const token = sqlString(randomUUID());
    await onEveryShard(this.shards, 'recording the insert', (s) =>
      command(s, `INSERT INTO ${meta} VALUES ('insert-begin', 0, 0, ${token})`),
    );
    const streams = this.shards.map(() => new PassThrough());
    const failures: Array<Error | undefined> = this.shards.map(() => undefined);
    const inserts = this.shards.map((_, i) =>
      onShard(this.shards, i, 'inserting fingerprints', (s) =>
        s.client.insert({ table: fp, values: streams[i]!, format: 'TabSeparated' }),
      ).catch((error: Error) => {
        failures[i] = error;
        throw error;
      }),
    );
    for (const p of inserts) p.catch(() => undefined);
    let count = 0;
    let turn = 0;
    const send = async (text: string): Promise<void> => {
      const i = turn++ % streams.length;
      if (failures[i]) throw failures[i];
      if (!streams[i]!.write(text)) {
        await new Promise<void>((resolve, reject) => {
          streams[i]!.once('drain', resolve);
          inserts[i]!.then(() => resolve(), reject);
        });
      }
    };
    try {
      for await (const batch of source as AsyncIterable<FingerprintBatch>) {
        const { ids, fingerprints } =
          batch instanceof BigUint64Array ? { ids: undefined, fingerprints: batch } : (batch ?? ({} as never));
        this.checkBatch(fingerprints, ids);
        const n = fingerprints.length / this.words;
        for (let start = 0; start < n; start += CHUNK_ROWS) {
          const end = Math.min(n, start + CHUNK_ROWS);
          let text = '';
          for (let r = start; r < end; r++) {
            const id = ids ? ids[r]! : this.nextId + BigInt(r);
            text +=
              this.words === 1
                ? `${id}\t${fingerprints[r]}\n`
                : `${id}\t${fingerprints[2 * r]}\t${fingerprints[2 * r + 1]}\n`;
          }
          await send(text);
        }
        if (!ids) this.nextId += BigInt(n);
        count += n;
      }
      for (const s of streams) s.end();
      await Promise.all(inserts);
      await onEveryShard(this.shards, 'recording the insert', (s) =>
        command(s, `INSERT INTO ${meta} VALUES ('insert-end', ${count}, 0, ${token})`),
      );
    } catch (error) {
      // The error that stopped the loop is the cause (a shard's failure, or a bad batch); destroying the other
      // streams only makes their inserts fail after it.
      for (const s of streams) s.destroy();
      await Promise.allSettled(inserts);
      throw error;
    }
    return count;
  }

  private checkBatch(fingerprints: unknown, ids: unknown): void {
    if (!(fingerprints instanceof BigUint64Array))
      throw new TypeError(`fingerprints must be a BigUint64Array, got ${show(fingerprints)}`);
    if (fingerprints.length % this.words !== 0)
      throw new RangeError(`128-bit fingerprints need two words each, got ${fingerprints.length} words`);
    if (ids !== undefined) {
      if (!(ids instanceof BigUint64Array)) throw new TypeError(`ids must be a BigUint64Array, got ${show(ids)}`);
      if (ids.length !== fingerprints.length / this.words)
        throw new RangeError(
          `ids must hold one id per fingerprint (${fingerprints.length / this.words}), got ${ids.length}`,
        );
    }
  }

  /**
   * Declares the insert over: merges each shard's lookup keys into one part, checks that every fingerprint has its
   * lookup key rows (the materialized view writes them with each insert) and writes the completion marker on every
   * shard.
   */
  async finish(): Promise<ClickHouseTableStatus> {
    const before = await this.status();
    if (before.complete) return before;
    const { meta } = tableNames(this.names);
    const logs = await onEveryShard(this.shards, 'reading the inserts', (s) =>
      selectText(s, `SELECT state, plan FROM ${meta} WHERE state IN ('insert-begin', 'insert-end')`),
    );
    for (const [i, log] of logs.entries()) {
      const rows = log.split('\n').filter((l) => l !== '');
      const ended = new Set(rows.filter((r) => r.startsWith('insert-end\t')).map((r) => r.slice(11)));
      const open = rows.find((r) => r.startsWith('insert-begin\t') && !ended.has(r.slice(13)));
      if (open !== undefined)
        throw new Error(
          `tables ${this.names.base}: an insert did not complete (shard ${i + 1} saw insert ${open.slice(13)} begin ` +
            'and never end); drop the tables and insert again',
        );
    }
    if (this.lookupPlan) {
      // One part per shard: a probe then reads one granule range per key, not one per part. Measured at 10^7 on 3
      // local shards: 5 s, and lookups right after an insert took a median 35 ms instead of 69 ms.
      const { keys } = tableNames(this.names);
      await onEveryShard(this.shards, 'merging the lookup keys', (s) => command(s, `OPTIMIZE TABLE ${keys} FINAL`));
    }
    const { fingerprints, keyRows } = await this.counts();
    const expected = fingerprints * (this.lookupPlan?.keysPerFingerprint ?? 0);
    if (keyRows !== expected)
      throw new Error(`tables ${this.names.base}: ${keyRows} lookup key rows for ${expected} expected; not complete`);
    await onEveryShard(this.shards, 'writing the completion marker', (s) =>
      command(s, `INSERT INTO ${meta} VALUES ('complete', ${fingerprints}, ${keyRows}, '')`),
    );
    this.knownComplete = true;
    return { complete: true, fingerprints, keyRows };
  }

  private async counts(): Promise<{ fingerprints: number; keyRows: number }> {
    const t = tableNames(this.names);
    const keys = this.lookupPlan ? `(SELECT count() FROM ${t.keysAll})` : '0';
    const text = await onShard(this.shards, 0, 'counting rows', (s) =>
      selectText(s, `SELECT (SELECT count() FROM ${t.fpAll}), ${keys}`),
    );
    const [fingerprints, keyRows] = text.trim().split('\t').map(Number);
    return { fingerprints: fingerprints!, keyRows: keyRows! };
  }

  /** Complete only when every shard has the marker and the row counts are still the ones it recorded. */
  async status(): Promise<ClickHouseTableStatus> {
    const { meta } = tableNames(this.names);
    const markers = await onEveryShard(this.shards, 'reading the completion marker', (s) =>
      selectText(s, `SELECT fingerprints, key_rows FROM ${meta} WHERE state = 'complete'`),
    );
    const { fingerprints, keyRows } = await this.counts();
    const missing = markers.findIndex((m) => m.trim() === '');
    let reason: string | undefined;
    if (missing >= 0) reason = `shard ${missing + 1} has no completion marker (finish() did not complete)`;
    else if (markers.some((m) => m.trim() !== `${fingerprints}\t${keyRows}`))
      reason = `the row counts (${fingerprints} fingerprints, ${keyRows} key rows) differ from the completion markers`;
    return reason ? { complete: false, fingerprints, keyRows, reason } : { complete: true, fingerprints, keyRows };
  }

  private async checkComplete(): Promise<void> {
    if (this.knownComplete) return;
    const s = await this.status();
    if (!s.complete) throw new Error(`tables ${this.names.base} are not complete: ${s.reason}`);
    this.knownComplete = true;
  }

  /**
   * Every pair within plan.k, each once, a < b (ids), exact duplicates included; round by round (joinSql), each
   * round's pairs streamed from all shards at once (each joins the keys it owns) in batches, in no particular order.
   * Each batch is typed-array columns (Pairs of BigUint64Array ids; see rows()).
   */
  async *pairs(): AsyncGenerator<Pairs<BigUint64Array>> {
    await this.checkComplete();
    // One name on every shard: the round's Distributed table routes rows to the same-named table on each.
    const scratch = `${this.names.base}_join_${randomUUID().replace(/-/g, '')}`;
    const rounds = joinSql(this.plan, this.names, scratch);
    // Every shard ends a step before any starts the next (onEveryShard waits for all, even after a failure), so a
    // join never starts before every shard has sent its key rows, and a drop never races a shard still writing.
    const prepare = async (round: JoinRoundSql) => {
      for (const sql of round.create)
        await onEveryShard(this.shards, 'creating the join round tables', (s) => command(s, sql));
      await onEveryShard(this.shards, 'sending its key rows', (s) => command(s, round.scatter, SCATTER_SETTINGS));
    };
    const drop = async (round: JoinRoundSql | undefined) => {
      for (const sql of round?.drop ?? [])
        await onEveryShard(this.shards, 'dropping the join round tables', (s) => command(s, sql)).catch(
          () => undefined,
        );
    };
    // Round r + 1 is created and its key rows sent while round r joins: the sends use the cores that the ends of
    // the shards' joins leave idle (measured at 10^7 on 3 local shards: 62.9 s with a pause between rounds).
    let r = 0;
    let next: Promise<void> | null = rounds.length > 0 ? prepare(rounds[0]!) : null;
    try {
      for (; r < rounds.length; r++) {
        try {
          await next; // round r's tables and key rows
          next = r + 1 < rounds.length ? prepare(rounds[r + 1]!) : null;
          next?.catch(() => undefined); // awaited next round or below; this only keeps it from being "unhandled"
          yield* mergeStreams(this.shards.map((_, i) => this.streamPairs(i, rounds[r]!.join, 'joining its keys')));
        } finally {
          await drop(rounds[r]);
        }
      }
    } finally {
      // Stopped early or failed: wait for the next round if it is being sent, then drop it (IF EXISTS).
      await next?.catch(() => undefined);
      await drop(rounds[r + 1]);
    }
  }

  private async *streamPairs(i: number, sql: string, what: string): AsyncGenerator<Pairs<BigUint64Array>> {
    const rs = await onShard(this.shards, i, what, (s) => s.client.query({ query: sql, format: 'TabSeparated' }));
    let a = new BigUint64Array(PAIR_BATCH);
    let b = new BigUint64Array(PAIR_BATCH);
    let d = new Uint8Array(PAIR_BATCH);
    let n = 0;
    const stream = rs.stream()[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await onShard(this.shards, i, what, () => stream.next());
        if (next.done) break;
        for (const row of next.value as Array<{ text: string }>) {
          const text = row.text;
          const tab1 = text.indexOf('\t');
          const tab2 = text.indexOf('\t', tab1 + 1);
          if (tab1 < 0 || tab2 < 0)
            throw new Error(`shard ${i} sent a join row that is not a, b, distance: ${show(text)}`);
          a[n] = decimal(text, 0, tab1);
          b[n] = decimal(text, tab1 + 1, tab2);
          d[n] = Number(decimal(text, tab2 + 1, text.length));
          if (++n === PAIR_BATCH) {
            yield { a, b, distance: d };
            a = new BigUint64Array(PAIR_BATCH);
            b = new BigUint64Array(PAIR_BATCH);
            d = new Uint8Array(PAIR_BATCH);
            n = 0;
          }
        }
      }
    } finally {
      rs.close();
    }
    if (n > 0) yield { a: a.subarray(0, n), b: b.subarray(0, n), distance: d.subarray(0, n) };
  }

  /**
   * Every fingerprint within k (default plan.k) of `fingerprint` (a bigint; 128 bits: high word above the low),
   * sorted by distance, then id, as typed-array columns (`id` the fingerprint ids, see rows()). k ≤ plan.k probes
   * the key tables' primary key; a larger k scans.
   */
  async query(fingerprint: bigint, k: number = this.plan.k): Promise<Neighbors<BigUint64Array>> {
    if (typeof fingerprint !== 'bigint') throw new TypeError(`fingerprint must be a bigint, got ${show(fingerprint)}`);
    if (fingerprint < 0n || fingerprint >> BigInt(this.plan.bits) !== 0n)
      throw new RangeError(`fingerprint must be an unsigned ${this.plan.bits}-bit bigint, got ${show(fingerprint)}`);
    if (typeof k !== 'number') throw new TypeError(`k must be a number, got ${show(k)}`);
    if (!Number.isInteger(k) || k < 0 || k > this.plan.bits)
      throw new RangeError(`k must be an integer from 0 to ${this.plan.bits}, got ${show(k)}`);
    await this.checkComplete();
    const words = this.words === 1 ? [fingerprint] : [fingerprint & M64, fingerprint >> 64n];
    const lookup = this.lookupPlan;
    const sql =
      lookup && k <= lookup.k
        ? lookupSql(lookup, this.names, words, fingerprintKeys(lookup, words[0]!, words[1] ?? 0n), k)
        : scanSql(this.plan, this.names, words, k);
    const texts = await onEveryShard(this.shards, 'looking up', (s) => selectText(s, sql));
    const out: { id: bigint; distance: number }[] = [];
    for (const text of texts) {
      for (const line of text.split('\n')) {
        if (line === '') continue;
        const [id, distance] = line.split('\t');
        out.push({ id: BigInt(id!), distance: Number(distance) });
      }
    }
    out.sort((x, y) => x.distance - y.distance || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    return {
      id: BigUint64Array.from(out, (n) => n.id),
      distance: Uint8Array.from(out, (n) => n.distance),
    };
  }

  /** Bytes on disk (compressed, active parts) of the fingerprint and the lookup key tables, over all shards. */
  async storedBytes(): Promise<{
    /** Bytes of the fingerprint tables. */
    fingerprints: number;
    /** Bytes of the lookup key tables (0 without a lookup plan). */
    keys: number;
  }> {
    const { database, base } = this.names;
    const per = await onEveryShard(this.shards, 'reading system.parts', (s) =>
      selectText(
        s,
        `SELECT sumIf(bytes_on_disk, table = ${sqlString(`${base}_fp`)}), sumIf(bytes_on_disk, table = ${sqlString(`${base}_keys`)}) ` +
          `FROM system.parts WHERE active AND database = ${sqlString(database)}`,
      ),
    );
    const sums = per.map((t) => t.trim().split('\t').map(Number));
    return {
      fingerprints: sums.reduce((acc, [f]) => acc + f!, 0),
      keys: sums.reduce((acc, [, k]) => acc + k!, 0),
    };
  }

  /** Drops every table on every shard. */
  async drop(): Promise<void> {
    this.knownComplete = false;
    for (let i = 0; i < this.shards.length; i++) {
      await onShard(this.shards, i, 'dropping the tables', async (s) => {
        for (const sql of dropSql(this.names)) await command(s, sql);
      });
    }
  }

  /** Closes the HTTP connections (the tables stay). */
  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.client.close()));
  }
}

/** Yields from every stream as its items come (a failure of one ends the rest). */
async function* mergeStreams<T>(streams: ReadonlyArray<AsyncGenerator<T>>): AsyncGenerator<T> {
  const pending = new Map<number, Promise<{ i: number; r: IteratorResult<T> }>>();
  const pull = (i: number) =>
    pending.set(
      i,
      streams[i]!.next().then((r) => ({ i, r })),
    );
  streams.forEach((_, i) => pull(i));
  try {
    while (pending.size > 0) {
      const { i, r } = await Promise.race(pending.values());
      if (r.done) pending.delete(i);
      else {
        pull(i);
        yield r.value;
      }
    }
  } finally {
    // Abandoned or failed: close the other streams (their HTTP responses are released).
    await Promise.allSettled([...pending.values()]);
    await Promise.allSettled(streams.map((s) => s.return(undefined)));
  }
}
