// Reading documents for the command line: files, directories (recursively, in name order), standard input,
// JSON Lines (--jsonl) and one document per line (--lines). A bad input is reported and skipped, or with --strict
// stops the run as an InputError (exit code 1).
import fs from 'node:fs';
import path from 'node:path';
import type { Progress } from './progress.js';
import { NAME, UsageError } from './usage.js';

export class InputError extends Error {}

export interface Doc {
  name: string;
  text: string | Uint8Array;
}

export interface ReadOptions {
  jsonl: boolean;
  field: string;
  idField: string;
  lines: boolean;
  strict: boolean;
}

export class Reporter {
  skipped = 0;
  constructor(private readonly strict: boolean) {}
  /** A bad input: fatal under --strict, else reported and skipped. */
  bad(message: string): void {
    if (this.strict) throw new InputError(message);
    this.skipped++;
    process.stderr.write(`${NAME}: skipped ${message}\n`);
  }
}

function listFiles(input: string, report: Reporter, out: string[]): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(input);
  } catch (error) {
    report.bad(`${input}: cannot read (${errorCode(error)})`);
    return;
  }
  if (!stat.isDirectory()) {
    out.push(input);
    return;
  }
  let entries: string[];
  try {
    entries = fs.readdirSync(input).sort();
  } catch (error) {
    report.bad(`${input}: cannot read directory (${errorCode(error)})`);
    return;
  }
  for (const name of entries) listFiles(path.join(input, name), report, out);
}

function errorCode(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code ?? e.message ?? String(error);
}

const decoder = new TextDecoder('utf-8', { fatal: false });

function parseJsonl(bytes: Uint8Array, source: string, o: ReadOptions, report: Reporter, docs: Doc[]): void {
  const lines = decoder.decode(bytes).split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${source}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      report.bad(`${where}: invalid JSON (${(error as Error).message})`);
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      report.bad(`${where}: not a JSON object`);
      return;
    }
    const record = value as Record<string, unknown>;
    const text = record[o.field];
    if (typeof text !== 'string') {
      report.bad(`${where}: field ${JSON.stringify(o.field)} is ${text === undefined ? 'missing' : 'not a string'}`);
      return;
    }
    const id = record[o.idField];
    docs.push({ name: typeof id === 'string' || typeof id === 'number' ? String(id) : where, text });
  });
}

function addDocuments(bytes: Uint8Array, source: string, o: ReadOptions, report: Reporter, docs: Doc[]): void {
  if (o.jsonl) parseJsonl(bytes, source, o, report, docs);
  else if (o.lines) {
    decoder
      .decode(bytes)
      .split('\n')
      .forEach((line, i) => {
        if (line.trim() !== '') docs.push({ name: `${source}:${i + 1}`, text: line });
      });
  } else docs.push({ name: source, text: bytes });
}

export function readInputs(
  inputs: string[],
  o: ReadOptions,
  report: Reporter,
  progress: Progress,
): { docs: Doc[]; bytes: number } {
  const docs: Doc[] = [];
  let bytes = 0;
  if (inputs.length === 0) {
    // Waiting on a terminal for documents nobody is typing would look like a hang.
    if (process.stdin.isTTY)
      throw new UsageError('no input: give files or directories, or pipe documents into standard input');
    inputs = ['-'];
  }
  const files: string[] = [];
  for (const input of inputs) {
    if (input === '-') files.push('-');
    else listFiles(input, report, files);
  }
  files.forEach((file, i) => {
    progress.update('reading', i, files.length);
    let data: Uint8Array;
    try {
      data = fs.readFileSync(file === '-' ? 0 : file);
    } catch (error) {
      report.bad(`${file === '-' ? 'standard input' : file}: cannot read (${errorCode(error)})`);
      return;
    }
    bytes += data.length;
    addDocuments(data, file, o, report, docs);
  });
  progress.update('reading', files.length, files.length);
  return { docs, bytes };
}
