// The streaming CLI on a corpus larger than a JavaScript string (issue 12, items 3-4). Alone, after `npm run build`:
//   flock /tmp/simhash-bigmem.lock npx tsx bench/stream.bench.ts [SIZE_MB (default 2000)] [PREFIX_MB (default 150)]
// 1. scripts/gen-jsonl.mjs writes SIZE_MB of JSON Lines to /tmp (deleted at the end, also on failure);
// 2. `dist/cli.mjs dedup --jsonl --threads 2` runs on it under /usr/bin/time -v: exit code, wall time, MB/s,
//    CPU seconds and peak RSS (goal: exit 0, RSS ≤ 1.5 GB, ≥ 100 MB/s on 2 cores);
// 3. on the first PREFIX_MB, the CLI's clusters (threads 1 and 2) must equal dedup()'s in memory, and the two
//    runs' times give the same-run ratio of two threads to one.
// Not part of `npm run bench` (minutes of disk and CPU); it prints a markdown table like the other topics.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dedup, init } from '../src/index.js';
import type { BenchRow } from './bench-row.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = path.join(root, 'dist/cli.mjs');

interface Measured {
  code: number;
  wall: number;
  cpu: number;
  rssMB: number;
  stdout: string;
  stderr: string;
}

function timed(args: string[]): Measured {
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, cli, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const field = (name: string) => {
    const m = new RegExp(`${name}: (.*)`).exec(r.stderr);
    if (!m) throw new Error(`/usr/bin/time printed no "${name}":\n${r.stderr}`);
    return m[1]!.trim();
  };
  const [h, m, s] = field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)').split(':').map(Number);
  const wall = s === undefined ? h! * 60 + m! : h! * 3600 + m! * 60 + s;
  return {
    code: r.status ?? -1,
    wall,
    cpu: Number(field('User time \\(seconds\\)')) + Number(field('System time \\(seconds\\)')),
    rssMB: Number(field('Maximum resident set size \\(kbytes\\)')) / 1024,
    stdout: r.stdout,
    stderr: r.stderr,
  };
}

/** Clusters as sorted member lists, from the CLI's JSON Lines or from dedup()'s clusterOf and the ids. */
function canonical(groups: unknown[][]): string {
  return JSON.stringify(groups.map((g) => g.map(String).sort()).sort());
}

export async function run(): Promise<BenchRow[]> {
  const sizeMB = Number(process.argv[2] ?? 2000);
  const prefixMB = Number(process.argv[3] ?? 150);
  if (!fs.existsSync(cli)) throw new Error('dist/cli.mjs is missing: run "npm run build" first');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-stream-bench-'));
  const file = path.join(work, 'corpus.jsonl');
  const prefix = path.join(work, 'prefix.jsonl');
  const rows: BenchRow[] = [];
  try {
    execFileSync(process.execPath, [path.join(root, 'scripts/gen-jsonl.mjs'), file, String(sizeMB)], {
      stdio: 'inherit',
    });
    const bytes = fs.statSync(file).size;
    const big = timed(['dedup', '--jsonl', '--threads', '2', '--summary', file]);
    if (big.code !== 0) throw new Error(`dedup failed (${big.code}):\n${big.stderr}`);
    console.error(big.stdout);
    rows.push({
      name: `CLI \`dedup --jsonl --threads 2\`, ${(bytes / 1e6).toFixed(0)} MB generated JSON Lines`,
      value: `${(bytes / 1e6 / big.wall).toFixed(0)} MB/s wall (${big.wall.toFixed(1)} s), peak RSS ${big.rssMB.toFixed(0)} MB`,
      baseline: `${big.cpu.toFixed(1)} CPU s: ${(bytes / 1e6 / big.cpu).toFixed(0)} MB per CPU second`,
    });

    // The prefix: whole lines up to PREFIX_MB, deduped in memory and by the CLI.
    const fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(prefixMB * 1e6);
    const got = fs.readSync(fd, head, 0, head.length, 0);
    fs.closeSync(fd);
    const text = head.subarray(0, head.lastIndexOf(10, got - 1) + 1);
    fs.writeFileSync(prefix, text);
    fs.rmSync(file); // the disk is limited: the big file goes as soon as it is not needed
    const records = text
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; text: string });
    await init();
    const t0 = performance.now();
    const want = dedup(records.map((r) => r.text));
    const inMemory = (performance.now() - t0) / 1000;
    const groups = new Map<number, number[]>();
    want.clusterOf.forEach((rep, i) => {
      const g = groups.get(rep) ?? [];
      g.push(records[i]!.id);
      groups.set(rep, g);
    });
    const expected = canonical([...groups.values()].filter((g) => g.length > 1));
    const runs = [1, 2].map((threads) => {
      const r = timed(['dedup', '--jsonl', '--threads', String(threads), prefix]);
      if (r.code !== 0) throw new Error(`dedup of the prefix failed (${r.code}):\n${r.stderr}`);
      const clusters = r.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { members: unknown[] }).members);
      return { ...r, same: canonical(clusters) === expected };
    });
    const prefixMBs = text.length / 1e6;
    rows.push({
      name: `the first ${prefixMBs.toFixed(0)} MB (${records.length} documents): CLI clusters equal \`dedup()\` in memory`,
      value: `threads 1: ${runs[0]!.same ? 'same' : 'DIFFERENT'}, threads 2: ${runs[1]!.same ? 'same' : 'DIFFERENT'} (${want.clusterCount} clusters, ${want.pairs.a.length} pairs)`,
      baseline: `dedup() in memory ${inMemory.toFixed(1)} s`,
    });
    rows.push({
      name: `CLI on the prefix, \`--threads 2\` vs \`--threads 1\``,
      value: `${runs[1]!.wall.toFixed(1)} s, ${runs[1]!.rssMB.toFixed(0)} MB RSS`,
      baseline: `${runs[0]!.wall.toFixed(1)} s, ${runs[0]!.rssMB.toFixed(0)} MB RSS`,
      ratio: `${(runs[0]!.wall / runs[1]!.wall).toFixed(2)}×`,
    });
    if (!runs.every((r) => r.same)) process.exitCode = 1;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = await run();
  console.log(
    `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores; Node ${process.version}; ${new Date().toISOString().slice(0, 10)}; load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}\n`,
  );
  console.log('| benchmark | result | baseline | ratio |\n|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.name} | ${r.value} | ${r.baseline ?? ''} | ${r.ratio ?? ''} |`);
}
