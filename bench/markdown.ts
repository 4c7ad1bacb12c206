// The one generated benchmark table (`npm run bench -- <topics> --markdown`): a machine line and one table of every
// row of the topics run, between markers, so that scripts/update-bench-table.mjs can paste it into the README or
// docs/benchmarks.md unchanged and test/readme-bench-table.test.ts can check what was pasted.
import type { BenchRow } from './bench-row.js';

export const BENCH_START = '<!-- bench:start -->';
export const BENCH_END = '<!-- bench:end -->';
export const BENCH_HEADER = ['topic', 'benchmark', 'result', 'compared with', 'ratio'] as const;

/** A cell: pipes escaped and newlines flattened, so a row stays one line of the table. */
function cell(text: string | undefined): string {
  return (text ?? '').replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim();
}

/** The machine line: CPU, cores, memory, Node, the spec, and the command that printed the table. No clock times. */
export function machineLine(
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; spec: string },
  command: string,
): string {
  return `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB; Node ${machine.node}; spec ${machine.spec}; \`${command}\``;
}

/** The whole block, markers included. */
export function markdownBlock(machine: string, topics: { topic: string; rows: BenchRow[] }[]): string {
  const lines = [
    BENCH_START,
    machine,
    '',
    `| ${BENCH_HEADER.join(' | ')} |`,
    `|${BENCH_HEADER.map(() => '---|').join('')}`,
  ];
  for (const { topic, rows } of topics)
    for (const r of rows)
      lines.push(`| ${cell(topic)} | ${cell(r.name)} | ${cell(r.value)} | ${cell(r.baseline)} | ${cell(r.ratio)} |`);
  lines.push(BENCH_END);
  return lines.join('\n');
}

/** The cells of one table row: split on pipes that are not escaped. */
export function cellsOf(line: string): string[] {
  const inner = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

export interface BenchTable {
  machine: string;
  header: string[];
  rows: string[][];
}

/** Every generated block in a markdown file, parsed; throws naming what is wrong with a block. */
export function parseBenchBlocks(markdown: string): BenchTable[] {
  const tables: BenchTable[] = [];
  // Markers count only on lines of their own, so prose may name them.
  const lines = markdown.split('\n').map((l) => l.trim());
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== BENCH_START) continue;
    const end = lines.indexOf(BENCH_END, i + 1);
    if (end < 0) throw new Error(`${BENCH_START} without ${BENCH_END}`);
    const [machine, header, rule, ...rows] = lines.slice(i + 1, end).filter((l) => l !== '');
    if (!machine || machine.startsWith('|')) throw new Error('the block does not start with its machine line');
    if (!header || !rule || !/^\|(\s*:?-+:?\s*\|)+$/.test(rule)) throw new Error('the block has no table header');
    tables.push({ machine, header: cellsOf(header), rows: rows.map(cellsOf) });
    i = end;
  }
  return tables;
}
