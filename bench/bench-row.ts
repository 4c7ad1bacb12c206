/** One row of a benchmark table: every topic's run() returns these, and bench/run.ts prints them. */
export interface BenchRow {
  name: string;
  value: string;
  baseline?: string;
  ratio?: string;
}
