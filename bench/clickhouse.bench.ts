// The near-duplicate join and lookups on a ClickHouse cluster (simhash-wasm/clickhouse) against findNearDuplicates
// on the same fingerprints in the same run: 10^6 random 64-bit fingerprints with planted relatives at k = 3 (10^6
// and 10^7 with SIMHASH_BENCH_LARGE=1), on the cluster SIMHASH_CLICKHOUSE names (bash scripts/clickhouse-cluster.sh
// start 3; export SIMHASH_CLICKHOUSE=$(bash scripts/clickhouse-cluster.sh urls)). Prints the chosen plan, insert,
// join and lookup times, the servers' CPU time of the join (user + system over all shards, from system.events: it
// moves less with the machine's load than the wall time), bytes stored, and checks that the cluster's pairs are
// findNearDuplicates' pairs.
// Alone: `npx tsx bench/clickhouse.bench.ts`.
import { createClient } from '@clickhouse/client';
import { createClickHouseTables } from '../src/clickhouse/index.js';
import { findNearDuplicates, init } from '../src/index.js';
import { randomWords } from './corpus.js';
import type { BenchRow } from './bench-row.js';

const K = 3;
const LARGE = process.env.SIMHASH_BENCH_LARGE === '1';
const LOOKUPS = 50;

/** Random fingerprints; every tenth is a relative of an earlier one at distance 0..k+1. */
function planted(n: number, seed: number): BigUint64Array {
  const fps = randomWords(n, seed);
  let x = seed * 7 + 1;
  for (let i = 10; i < n; i += 10) {
    x = (x * 1103515245 + 12345) >>> 0;
    let fp = fps[(x >>> 4) % i]!;
    for (let f = 0; f < x % (K + 2); f++) fp ^= 1n << BigInt((x >>> (8 + f * 6)) & 63);
    fps[i] = fp;
  }
  return fps;
}

/** CPU seconds (user + system) that the shards' servers have spent so far, summed. */
async function serverCpuSeconds(urls: string[]): Promise<number> {
  let total = 0;
  for (const url of urls) {
    const client = createClient({ url });
    try {
      const rs = await client.query({
        query: "SELECT sum(value) FROM system.events WHERE event IN ('UserTimeMicroseconds', 'SystemTimeMicroseconds')",
        format: 'TabSeparated',
      });
      total += Number((await rs.text()).trim()) / 1e6;
    } finally {
      await client.close();
    }
  }
  return total;
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function run(): Promise<BenchRow[]> {
  const urls = process.env.SIMHASH_CLICKHOUSE;
  if (!urls)
    return [{ name: 'skipped', value: 'SIMHASH_CLICKHOUSE unset (bash scripts/clickhouse-cluster.sh start 3)' }];
  await init();
  const shards = urls.split(',').length;
  const rows: BenchRow[] = [];
  for (const n of LARGE ? [1e6, 1e7] : [1e6]) {
    const fps = planted(n, 11);
    const label = `10^${Math.log10(n)}`;
    const t0 = performance.now();
    const local = findNearDuplicates(fps, { k: K });
    const localMs = performance.now() - t0;

    const tables = await createClickHouseTables({ urls, table: `simhash_bench_${process.pid}`, k: K, expectedSize: n });
    try {
      const p = tables.plan;
      rows.push({
        name: `plan at ${label}, k = ${K}, ${shards} shards`,
        value: `${p.blocks.length} blocks, ${p.keysPerFingerprint} keys/fingerprint of ${Math.min(...p.keyBits)}-${Math.max(...p.keyBits)} bits; est. ${p.estimate.keyRowsPerShard.toExponential(2)} key rows and ${p.estimate.joinRowsPerShard.toExponential(2)} join rows per shard; lookups: ${tables.lookupPlan?.keysPerFingerprint ?? 0} keys/fingerprint`,
      });
      const t1 = performance.now();
      await tables.insert(fps);
      await tables.finish();
      const cpu0 = await serverCpuSeconds(urls.split(','));
      const t2 = performance.now();
      const client0 = process.cpuUsage();
      // The batches are only kept here; they are checked after the clock stops.
      const batches: { a: BigUint64Array; b: BigUint64Array }[] = [];
      for await (const batch of tables.pairs()) batches.push(batch);
      const t3 = performance.now();
      const clientCpu = process.cpuUsage(client0);
      const cpu = (await serverCpuSeconds(urls.split(','))) - cpu0;
      let pairs = 0;
      let sum = 0n;
      for (const batch of batches) {
        pairs += batch.a.length;
        for (let i = 0; i < batch.a.length; i++) sum += batch.a[i]! * 0x100000000n + batch.b[i]!;
      }
      let want = 0n;
      for (let i = 0; i < local.a.length; i++) want += BigInt(local.a[i]!) * 0x100000000n + BigInt(local.b[i]!);
      const same = pairs === local.a.length && sum === want;
      rows.push({
        name: `insert ${label} fingerprints (and lookup keys)`,
        value: `${s(t2 - t1)} (${((n / (t2 - t1)) * 1000).toExponential(2)} /s)`,
      });
      rows.push({
        name: `join ${label} at k = ${K} on ${shards} shards`,
        value: `${s(t3 - t2)}, ${pairs} pairs${same ? ' (= findNearDuplicates)' : ' (DIFFERENT from findNearDuplicates)'}`,
        baseline: `findNearDuplicates ${s(localMs)}`,
        ratio: `${((t3 - t2) / localMs).toFixed(1)}× the single-machine time`,
      });
      rows.push({
        name: `servers' CPU time of the join of ${label}`,
        value: `${cpu.toFixed(1)} s (user + system, all shards); this client ${((clientCpu.user + clientCpu.system) / 1e6).toFixed(1)} s`,
        baseline: `cost model: ${((p.estimate.cost * shards) / 1e6).toFixed(1)} s`,
      });
      rows.push({ name: `insert + join ${label}`, value: s(t3 - t1) });
      const times: number[] = [];
      let hits = 0;
      for (let q = 0; q < LOOKUPS; q++) {
        const probe = fps[(q * 7919) % n]! ^ (1n << BigInt(q % 64));
        const tq = performance.now();
        hits += (await tables.query(probe)).id.length;
        times.push(performance.now() - tq);
      }
      times.sort((a, b) => a - b);
      rows.push({
        name: `query(fp, ${K}) at ${label} (${LOOKUPS} lookups, ${hits} hits)`,
        value: `median ${times[LOOKUPS >> 1]!.toFixed(1)} ms, p90 ${times[Math.floor(LOOKUPS * 0.9)]!.toFixed(1)} ms`,
      });
      const bytes = await tables.storedBytes();
      rows.push({
        name: `bytes stored at ${label}`,
        value: `${(bytes.fingerprints / 2 ** 20).toFixed(0)} MiB fingerprints + ${(bytes.keys / 2 ** 20).toFixed(0)} MiB lookup keys (compressed, all shards)`,
        baseline: `est. ${((p.estimate.bytesOnDisk + (tables.lookupPlan?.estimate.bytesOnDisk ?? 0)) / 2 ** 20).toFixed(0)} MiB uncompressed`,
      });
    } finally {
      await tables.drop();
      await tables.close();
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await run())
    console.log(`${r.name}: ${r.value}${r.baseline ? ` | ${r.baseline}` : ''}${r.ratio ? ` | ${r.ratio}` : ''}`);
}
