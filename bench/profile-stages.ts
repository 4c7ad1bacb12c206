// Where fingerprinting time goes, per stage of the fused text kernel (tokenizer, word hash, shingle hash,
// reducer). The kernel is compiled again with `--use SIMHASH_PROFILE_STAGE=n` (assembly/tokenize.ts), which stops
// it after stage n; each stage's cost is the difference between two builds, timed in interleaved rounds in one
// process so that machine load moves all of them alike; the best of the rounds is the figure (load only adds
// time), the median is shown beside it. TextEncoder.encodeInto of the same texts is the yardstick.
// Run: `npx tsx bench/profile-stages.ts` (SIMHASH_BUILD=scalar for the scalar build). Not part of `npm run bench`.
// PROFILE_TREES="before=/path/to/old/tree,after=." compares source trees (each with assembly/, asconfig.json and
// the *.shared.ts files) stage by stage in the same rounds; `label=root:1` runs a tree's kernel with spec 1's
// hashes (PROFILE_TREES="v1=.:1,v2=." compares the spec versions of one tree), and `label=root@scalar` (or
// `@simd`) picks a tree's build (PROFILE_TREES="simd=.@simd,scalar=.@scalar" compares the builds in the same rounds).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MODE_SHINGLES, MODE_WHITESPACE, MODE_WORDS, SPEC_V2 } from '../src/fingerprint/modes.shared.js';
import { englishDocuments } from './corpus.js';

interface StageKernels {
  memory: WebAssembly.Memory;
  heapBase(): number;
  setup(): void;
  fingerprintTexts(
    text: number,
    offsets: number,
    count: number,
    mode: number,
    width: number,
    bits: number,
    scratch: number,
    out: number,
    counts: number,
    spec: number,
  ): void;
  stageSink(): bigint;
}

const target = process.env.SIMHASH_BUILD === 'scalar' ? 'scalar' : 'simd';
const STAGES = [1, 2, 3, 0] as const;
const NAMES: Record<number, string> = { 1: 'tokenizer', 2: '+ word hash', 3: '+ shingle hash', 0: '+ reducer (full)' };
const ROUNDS = Number(process.env.ROUNDS ?? 40);

function compile(root: string, stage: number, build: string): StageKernels {
  fs.mkdirSync(path.join(root, 'build'), { recursive: true });
  const entry = 'build/profile-entry.ts';
  fs.writeFileSync(
    path.join(root, entry),
    "export * from '../assembly/simhash';\nexport { stageSink } from '../assembly/tokenize';\n",
  );
  const out = `build/profile-${build}-${stage}.wasm`;
  const asc = new URL('../node_modules/assemblyscript/bin/asc.js', import.meta.url).pathname;
  const use = stage === 0 ? [] : ['--use', `SIMHASH_PROFILE_STAGE=${stage}`];
  execFileSync(process.execPath, [asc, entry, '--target', build, '--outFile', out, ...use], {
    stdio: 'inherit',
    cwd: root, // asc merges the tree's own asconfig.json
  });
  const module = new WebAssembly.Module(fs.readFileSync(path.join(root, out)));
  const kernels = new WebAssembly.Instance(module, {}).exports as unknown as StageKernels;
  kernels.setup();
  return kernels;
}

const trees = (process.env.PROFILE_TREES ?? 'current=.').split(',').map((t) => {
  const [label, at] = t.split('=') as [string, string];
  const [where, build = target] = at.split('@') as [string, string | undefined];
  if (build !== 'simd' && build !== 'scalar') throw new RangeError(`build must be simd or scalar, got "${build}"`);
  const [root, spec] = where.split(':') as [string, string | undefined];
  // The hash version; a tree from before the argument existed ignores it (and runs spec 1).
  return { label, root: path.resolve(root), spec: Number(spec ?? SPEC_V2), build };
});

const docs = englishDocuments(Number(process.env.PROFILE_DOCS ?? 500));
const encoder = new TextEncoder();
const encoded = docs.map((d) => encoder.encode(d));
const total = encoded.reduce((a, b) => a + b.length, 0);
const longest = encoded.reduce((a, b) => Math.max(a, b.length), 0);

/** Lays the texts out once per module and returns a call of the kernel for one mode. */
function prepare(k: StageKernels, spec: number): (mode: number, width: number) => void {
  const base = (k.heapBase() + 15) & ~15;
  const textPtr = base + 16; // short inputs read up to 4 bytes before a token
  const offsetsPtr = (textPtr + total + 64 + 15) & ~15;
  const scratch = offsetsPtr + (docs.length + 1) * 4 + 64;
  const out = (scratch + 2 * longest + 128 + 15) & ~15;
  const counts = out + docs.length * 16;
  const need = counts + docs.length * 8 + 1024;
  const have = k.memory.buffer.byteLength;
  if (need > have) k.memory.grow(Math.ceil((need - have) / 65536));
  const u8 = new Uint8Array(k.memory.buffer);
  const offsets = new Uint32Array(k.memory.buffer, offsetsPtr, docs.length + 1);
  let at = 0;
  encoded.forEach((e, i) => {
    u8.set(e, textPtr + at);
    at += e.length;
    offsets[i + 1] = at;
  });
  return (mode, width) =>
    k.fingerprintTexts(textPtr, offsetsPtr, docs.length, mode, width, 64, scratch, out, counts, spec);
}

type Call = (mode: number, width: number) => void;
const variants = trees.flatMap(({ label, root, spec, build }) =>
  STAGES.map((stage) => {
    const k = compile(root, stage, build);
    return { label, stage, kernels: k, call: prepare(k, spec) as Call };
  }),
);
const joined = new Uint8Array(total * 3 + 16);
const encodeAll = () => {
  let at = 0;
  for (const d of docs) at += encoder.encodeInto(d, joined.subarray(at)).written;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const best = (xs: number[]) => Math.min(...xs);

const modes: Array<[string, number, number]> = [
  ['whitespace', MODE_WHITESPACE, 0],
  ['words', MODE_WORDS, 0],
  ['shingles (default)', MODE_SHINGLES, 3],
];
const builds = [...new Set(trees.map((t) => t.build))].join(' and ');
console.log(`${builds} build, ${docs.length} English documents, ${(total / 1e6).toFixed(2)} MB, ${ROUNDS} rounds`);
for (const [name, mode, width] of modes) {
  const active = variants.filter((v) => mode === MODE_SHINGLES || v.stage !== 3);
  const times = active.map(() => [] as number[]);
  const encodeTimes: number[] = [];
  for (let r = 0; r < ROUNDS + 3; r++) {
    active.forEach((v, i) => {
      const t0 = performance.now();
      v.call(mode, width);
      if (r >= 3) times[i]!.push(performance.now() - t0);
    });
    const t0 = performance.now();
    encodeAll();
    if (r >= 3) encodeTimes.push(performance.now() - t0);
  }
  const enc = best(encodeTimes);
  console.log(
    `\n${name}: encodeInto ${((total / enc) * 1e-3).toFixed(0)} MB/s (best ${enc.toFixed(3)} ms, median ${median(encodeTimes).toFixed(3)})`,
  );
  for (const { label } of trees) {
    let prev = 0;
    active.forEach((v, i) => {
      if (v.label !== label) return;
      const t = best(times[i]!);
      console.log(
        `  ${label.padEnd(8)} ${NAMES[v.stage]!.padEnd(18)} ${t.toFixed(3).padStart(7)} ms = ${((total / t) * 1e-3).toFixed(0).padStart(5)} MB/s` +
          ` = ${(t / enc).toFixed(2).padStart(5)}× encodeInto (median ${median(times[i]!).toFixed(3)}); stage ${(t - prev).toFixed(3)} ms` +
          ` = ${(((t - prev) / t) * 100).toFixed(0)}%`,
      );
      prev = t;
    });
  }
}
console.log(`\nsink ${variants.map((v) => v.kernels.stageSink() & 0xffn).join(',')}`);
