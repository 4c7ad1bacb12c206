// A JSON Lines corpus of near-duplicate groups for the dedup benchmarks and by-hand CLI runs: the real-text base of
// bench/real-corpus.ts (SIMHASH_NEAR_SOURCE_MB of distinct documents), each document written SIMHASH_NEAR_COPIES
// times with its own seeded 1-3 % word edits, the copies shuffled over the whole file (copies of one document lie
// far apart). Written to SIMHASH_NEAR_DIR (default /tmp/simhash-near-dup), never committed; the path is printed.
// `npx tsx bench/near-dup-jsonl.ts` (SIMHASH_NEAR_SOURCE_MB=20, SIMHASH_NEAR_COPIES=10).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildRealCorpus } from './real-corpus.js';

export function nearDuplicateJsonl(sourceMB: number, copies: number, seed = 20261204): string {
  const base = process.env.SIMHASH_NEAR_DIR ?? path.join(os.tmpdir(), 'simhash-near-dup');
  const dir = path.join(base, `${sourceMB}mb-x${copies}-${seed}`);
  const file = path.join(dir, 'corpus.jsonl');
  if (fs.existsSync(file)) return file;
  const corpus = buildRealCorpus({ sourceBytes: sourceMB * 1e6, copies, seed, dir });
  const data = fs.readFileSync(corpus.docsFile);
  const out = fs.openSync(`${file}.tmp`, 'w');
  let lines: string[] = [];
  let id = 0;
  for (let at = 0; at < data.length; ) {
    const n = data.readUInt32LE(at);
    lines.push(JSON.stringify({ id: id++, text: data.toString('utf8', at + 4, at + 4 + n) }));
    at += 4 + n;
    if (lines.length === 4096) {
      fs.writeSync(out, `${lines.join('\n')}\n`);
      lines = [];
    }
  }
  if (lines.length) fs.writeSync(out, `${lines.join('\n')}\n`);
  fs.fsyncSync(out);
  fs.closeSync(out);
  fs.renameSync(`${file}.tmp`, file);
  fs.rmSync(corpus.docsFile);
  return file;
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const file = nearDuplicateJsonl(
    Number(process.env.SIMHASH_NEAR_SOURCE_MB ?? 20),
    Number(process.env.SIMHASH_NEAR_COPIES ?? 10),
  );
  console.log(file);
}
