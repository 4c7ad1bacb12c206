// Same-run comparison with the best native peer that runs here, seomoz simhash-cpp (issues 12 and 15), on ~210 MB
// of real text with 10 edited copies of each document (bench/real-corpus.ts, generated into /tmp): our
// simhashMany and dedup() at its defaults against seomoz's fingerprints (hash_text) and its whole unverified
// pipeline (fingerprints + find_all at the same k), run as a child process (bench/peers/seomoz-driver.cpp).
// Wall and CPU times are both given: on a loaded machine the CPU ratio is the steadier one. Recall of the planted
// pairs (two copies of one source document) is reported for both, as a check that each side found what it should.
// The peer is built by scripts/build-peers.sh; when it is not, its rows say so and ours still run.
// simhash-js, the other peer that runs here, only fingerprints: it is compared in the fingerprint table.
// Alone: `npx tsx bench/peers.bench.ts`; SIMHASH_REAL_SOURCE_MB (default 21) scales the corpus.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dedup, findNearDuplicates, init, loadedBuild, simhashMany } from '../src/index.js';
import { readRealCorpus, realCorpusFromEnv } from './real-corpus.js';
import type { BenchRow } from './bench-row.js';

interface SeomozRun {
  k: number;
  blocks: number;
  tables: number;
  findAllMs: number;
  findAllCpuMs: number;
  fingerprintPairs: number;
  documentPairs: number;
  plantedFound: number;
  pipelineMs: number;
  pipelineCpuMs: number;
}

interface SeomozReport {
  documents: number;
  bytes: number;
  fingerprintMs: number;
  fingerprintCpuMs: number;
  setMs: number;
  setCpuMs: number;
  distinctFingerprints: number;
  zeroFingerprints: number;
  plantedPairs: number;
  runs: SeomozRun[];
}

const peersDir = process.env.SIMHASH_PEERS_DIR ?? path.join(os.homedir(), '.cache', 'simhash-peers');
const seomozBin = process.env.SIMHASH_SEOMOZ_BIN ?? path.join(peersDir, 'bin', 'seomoz-simhash');

const fmt = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const pct = (x: number, of: number): string => `${((100 * x) / Math.max(1, of)).toFixed(1)} %`;

/** Wall and CPU milliseconds of one call (CPU: this process, all threads). */
function timed<T>(fn: () => T): { ms: number; cpuMs: number; result: T } {
  const cpu = process.cpuUsage();
  const t = performance.now();
  const result = fn();
  const ms = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, result };
}

/** Planted pairs (i < j, same group) as keys i·n + j. */
function plantedPairs(groups: Uint32Array): number[] {
  const members = new Map<number, number[]>();
  groups.forEach((g, i) => {
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  });
  const n = groups.length;
  const keys: number[] = [];
  for (const list of members.values())
    for (let x = 0; x < list.length; x++) for (let y = x + 1; y < list.length; y++) keys.push(list[x]! * n + list[y]!);
  return keys;
}

function pairKeys(n: number, a: Uint32Array, b: Uint32Array): Set<number> {
  const keys = new Set<number>();
  for (let i = 0; i < a.length; i++) keys.add(Math.min(a[i]!, b[i]!) * n + Math.max(a[i]!, b[i]!));
  return keys;
}

function runSeomoz(docsFile: string, groupsFile: string, ks: number[]): SeomozReport {
  const out = execFileSync(seomozBin, ['--docs', docsFile, '--groups', groupsFile, '--k', ks.join(',')], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out) as SeomozReport;
}

export async function run(): Promise<BenchRow[]> {
  await init();
  const rows: BenchRow[] = [];
  const build = loadedBuild();
  const made = timed(() => realCorpusFromEnv());
  const corpus = made.result;
  const { texts, groups } = readRealCorpus(corpus);
  const m = corpus.manifest;
  const mb = m.bytes / 1e6;
  const planted = plantedPairs(groups);
  const n = texts.length;
  rows.push({
    name: `real-text corpus (bench/real-corpus.ts, ${corpus.dir}): ${n} documents = ${m.sourceDocuments} real documents × ${m.copies} copies with 1–3 % word edits, shuffled; ${planted.length} planted pairs`,
    value: `${mb.toFixed(1)} MB`,
    baseline: Object.entries(m.sources)
      .map(([name, s]) => `${name} ${(s.bytes / 1e6).toFixed(1)} MB`)
      .join(', '),
    ratio: made.ms > 1000 ? `built in ${fmt(made.ms)}` : 'cached',
  });

  // Ours, one thread. Warm-ups first: the first calls run baseline-tier code.
  simhashMany(texts.slice(0, 500));
  const fp = timed(() => simhashMany(texts));
  dedup(texts.slice(0, 2000));
  const ours = timed(() => dedup(texts));
  const r = ours.result;
  const verified = pairKeys(n, r.pairs.a, r.pairs.b);
  const candidates = findNearDuplicates(r.fingerprints, { k: r.k });
  const candidateKeys = pairKeys(n, candidates.a, candidates.b);
  const plantedVerified = planted.filter((key) => verified.has(key)).length;
  const plantedCandidates = planted.filter((key) => candidateKeys.has(key)).length;
  const sameCluster = planted.filter((key) => r.clusterOf[Math.floor(key / n)] === r.clusterOf[key % n]).length;
  const unverified = timed(() => dedup(texts, { k: r.k, verify: false }));

  let seomoz: SeomozReport | undefined;
  let skipped: string | undefined;
  const absent = 'seomoz: not built (last row)';
  if (!fs.existsSync(seomozBin)) {
    skipped = `seomoz simhash-cpp skipped: ${seomozBin} is not built (scripts/build-peers.sh <git repository of seomoz/simhash-cpp>; docs/benchmarks.md)`;
    console.error(skipped);
  } else {
    seomoz = runSeomoz(corpus.docsFile, corpus.groupsFile, [r.k, 3]);
    // Both sides must have read the same documents and planted pairs, or the comparison means nothing.
    if (seomoz.documents !== n || seomoz.bytes !== m.bytes || seomoz.plantedPairs !== planted.length)
      throw new Error(
        `seomoz driver read ${seomoz.documents} documents, ${seomoz.bytes} bytes, ${seomoz.plantedPairs} planted pairs; expected ${n}, ${m.bytes}, ${planted.length}`,
      );
  }
  const same = seomoz?.runs.find((run) => run.k === r.k);
  // The planted copies differ by a few % of their words: either side missing most of them at k = 12 means a broken
  // build or driver, not a slow one. Ours by clusters: dedup's pairs only explain them (a spanning forest).
  if (sameCluster < planted.length / 2)
    console.error(`dedup() put only ${sameCluster} of ${planted.length} planted pairs in one cluster`);
  if (same && same.plantedFound < planted.length / 2)
    console.error(`seomoz found only ${same.plantedFound} planted pairs: check the driver and its build`);
  const k3 = seomoz?.runs.find((run) => run.k === 3);

  const oursMbps = mb / (fp.ms / 1000);
  rows.push({
    name: `[${build}] simhashMany, 64-bit defaults, one thread`,
    value: `${oursMbps.toFixed(0)} MB/s (${fmt(fp.ms)}, CPU ${fmt(fp.cpuMs)})`,
    baseline: seomoz
      ? `seomoz hash_text ${(mb / (seomoz.fingerprintMs / 1000)).toFixed(0)} MB/s (${fmt(seomoz.fingerprintMs)}, CPU ${fmt(seomoz.fingerprintCpuMs)})`
      : absent,
    ratio: seomoz
      ? `${(seomoz.fingerprintMs / fp.ms).toFixed(1)}× seomoz (CPU ${(seomoz.fingerprintCpuMs / fp.cpuMs).toFixed(1)}×)`
      : '',
  });
  const { hash, join, verify, cluster, total } = r.timings;
  rows.push({
    name: `[${build}] dedup() defaults (k=${r.k}, verified): ${r.candidates} candidates, ${r.pairs.a.length} verified pairs, ${r.clusterCount} clusters`,
    value: `${fmt(total)} (CPU ${fmt(ours.cpuMs)})`,
    baseline: same
      ? `seomoz unverified pipeline, k=${same.k} (hash_text + find_all, ${same.blocks} blocks, ${same.tables} tables): ${fmt(same.pipelineMs)} (CPU ${fmt(same.pipelineCpuMs)})`
      : absent,
    ratio: same
      ? `${(same.pipelineMs / total).toFixed(2)}× seomoz (CPU ${(same.pipelineCpuMs / ours.cpuMs).toFixed(2)}×; goal ≥ 3×)`
      : '',
  });
  rows.push({
    name: `[${build}] dedup() defaults, stages`,
    value: `hash ${fmt(hash)}, join ${fmt(join)}, verify ${fmt(verify)}, cluster ${fmt(cluster)}`,
    baseline: seomoz
      ? `seomoz: hash_text ${fmt(seomoz.fingerprintMs)}, distinct set ${fmt(seomoz.setMs)}, find_all k=${r.k} ${same ? fmt(same.findAllMs) : ''}`
      : absent,
    ratio: `verify ${pct(verify, total)} of dedup()`,
  });
  rows.push({
    name: `[${build}] dedup({ k: ${r.k}, verify: false }): ${unverified.result.pairs.a.length} pairs`,
    value: `${fmt(unverified.result.timings.total)} (CPU ${fmt(unverified.cpuMs)})`,
    baseline: same ? `seomoz, same k: ${fmt(same.pipelineMs)} (CPU ${fmt(same.pipelineCpuMs)})` : absent,
    ratio: same
      ? `${(same.pipelineMs / unverified.result.timings.total).toFixed(1)}× seomoz (CPU ${(same.pipelineCpuMs / unverified.cpuMs).toFixed(1)}×)`
      : '',
  });
  rows.push({
    name: `[${build}] planted pairs found by dedup() (of ${planted.length})`,
    value: `verified pairs ${pct(plantedVerified, planted.length)}, same cluster ${pct(sameCluster, planted.length)}`,
    baseline: `candidates at k=${r.k}: ${pct(plantedCandidates, planted.length)}; verified pairs beyond the planted ones: ${r.pairs.a.length - plantedVerified}`,
    ratio: same
      ? `seomoz k=${same.k}: ${pct(same.plantedFound, seomoz!.plantedPairs)}, beyond planted ${same.documentPairs - same.plantedFound}`
      : '',
  });
  if (seomoz && k3) {
    rows.push({
      name: `seomoz simhash-cpp at k=3 (${k3.blocks} blocks, ${k3.tables} tables): ${k3.documentPairs} document pairs`,
      value: `${fmt(k3.pipelineMs)} (CPU ${fmt(k3.pipelineCpuMs)}), find_all ${fmt(k3.findAllMs)}`,
      baseline: `planted pairs found ${pct(k3.plantedFound, seomoz.plantedPairs)}, beyond planted ${k3.documentPairs - k3.plantedFound}`,
      ratio: `${seomoz.distinctFingerprints} distinct fingerprints, ${seomoz.zeroFingerprints} documents without ASCII words`,
    });
  }
  if (skipped) rows.push({ name: 'seomoz simhash-cpp', value: 'skipped', baseline: skipped });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await run())
    console.log(
      `${row.name}: ${row.value}${row.baseline ? ` | ${row.baseline}` : ''}${row.ratio ? ` | ${row.ratio}` : ''}`,
    );
}
