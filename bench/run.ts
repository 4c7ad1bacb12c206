// `npm run bench`: runs every benchmark and prints one markdown table per topic. `npm run bench -- peers --markdown`
// (any topics, or none for all) prints instead the one generated table of the README and docs/benchmarks.md: a
// machine line and every row, between markers; save it and run scripts/update-bench-table.mjs to paste it.
// The fingerprint benchmark also runs in a child process on the scalar build, so SIMD and scalar are compared.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type { BenchRow } from './bench-row.js';
import { machineLine, markdownBlock } from './markdown.js';

const topics = [
  'fingerprint',
  'hamming',
  'fingerprint-index',
  'dedup',
  'groups',
  'job',
  'threads',
  'peers',
  'clickhouse',
];
const args = process.argv.slice(2);
const markdown = args.includes('--markdown');
const only = args.filter((a) => a !== '--markdown');
for (const a of only)
  if (!topics.includes(a)) throw new Error(`unknown topic ${a}; the topics are ${topics.join(', ')}`);

function table(title: string, rows: BenchRow[]): string {
  const lines = [`### ${title}`, '', '| benchmark | result | vs baseline | vs peer / other |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.name} | ${r.value} | ${r.baseline ?? ''} | ${r.ratio ?? ''} |`);
  return lines.join('\n');
}

const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
const memoryGiB = Math.round(os.totalmem() / 2 ** 30);
if (!markdown)
  console.log(
    `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; ${new Date().toISOString().slice(0, 10)}\n`,
  );
const results: { topic: string; rows: BenchRow[] }[] = [];
for (const topic of topics) {
  if (only.length && !only.includes(topic)) continue;
  const file = new URL(`./${topic}.bench.ts`, import.meta.url);
  if (!fs.existsSync(file)) continue;
  const mod = (await import(file.href)) as { run(): Promise<BenchRow[]> };
  let rows = await mod.run();
  if (topic === 'fingerprint') {
    const out = execFileSync(process.execPath, ['--import', 'tsx', new URL('./scalar.ts', import.meta.url).pathname], {
      env: { ...process.env, SIMHASH_BUILD: 'scalar' },
      encoding: 'utf8',
    });
    rows = rows.concat(JSON.parse(out) as BenchRow[]);
  }
  if (markdown) results.push({ topic, rows });
  else console.log(table(topic, rows) + '\n');
}
if (markdown) {
  const { SPEC_ID } = await import('../src/index.js');
  const command = `npm run bench -- ${[...only, '--markdown'].join(' ')}`;
  const machine = machineLine(
    { cpu, cores: os.cpus().length, memoryGiB, node: process.version, spec: SPEC_ID },
    command,
  );
  console.log(markdownBlock(machine, results));
}
