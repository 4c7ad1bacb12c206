// `npm run bench`: runs every benchmark and prints one markdown table per topic (paste into the README).
// The fingerprint benchmark also runs in a child process on the scalar build, so SIMD and scalar are compared.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type { BenchRow } from './bench-row.js';

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
const only = process.argv.slice(2);

function table(title: string, rows: BenchRow[]): string {
  const lines = [`### ${title}`, '', '| benchmark | result | vs baseline | vs peer / other |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.name} | ${r.value} | ${r.baseline ?? ''} | ${r.ratio ?? ''} |`);
  return lines.join('\n');
}

console.log(
  `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; ${new Date().toISOString().slice(0, 10)}\n`,
);
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
  console.log(table(topic, rows) + '\n');
}
