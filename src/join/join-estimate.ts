// The join plan for the fingerprints at hand. planJoin's model assumes uniformly random fingerprints; real ones
// cluster (a corpus of edited copies at k = 12: 3.1 pairs within k per fingerprint), and then the tables' runs are
// longer than the model says and each near pair is met again in every table whose key it agrees on. On the dedup
// bench's 25 MB (22,710 fingerprints) the model's plan (91 tables) took 3-4 times as long as comparing all pairs.
// So when the join is large enough to matter, the candidate plans are costed on a sample of the fingerprints:
// per table, the pairs of sampled fingerprints that share a run, and per pair within k, the tables it agrees on.
import { selfPairsWithinDistance } from '../hamming/hamming.js';
import {
  type JoinPlan,
  binomial,
  bruteForcePlan,
  maxSortBits,
  planJoin,
  plansByBlocks,
  tableCostFixed,
  withSortBits,
} from './join-plan.js';
import { probePlan } from './join-probe.js';

/** Fingerprints sampled (stratified: one from each of SAMPLE equal slices). */
const SAMPLE = 512;
/** Below this model cost (≈ ns) the plan is taken as it is: sampling would cost more than it can save. */
const MIN_SAMPLED_COST = 3e6;
/** Most tables of the plans costed on the sample (a table costs a permute and a sort of every fingerprint). */
const MAX_SAMPLED_TABLES = 512;
/** Extra sort bits tried beyond the model's choice, in steps of 2: finer runs pay on clustered fingerprints. */
const EXTRA_SORT_BITS = 4;
// Costs on the sample (≈ ns, measured on this machine against the tiled self-join in the same run, on random
// fingerprints and on the bench's edited copies at k = 12): a pair of fingerprints in one run of a table (planJoin's
// model, fitted at 10^7 where runs are short, counts less), a pair within k met by a table (a mispredicted branch
// and the table rule, which rejects it in all tables but one), a pair compared by the self-join, and an emitted pair.
const RUN_PAIR = 1;
const NEAR_PAIR = 20;
const BRUTE_PAIR = 0.7;
const OUT_PAIR = 10;
/** The share of the model's cost above which near pairs met in its tables make the plan worth costing again. */
const NEAR_SHARE = 0.25;
/** Sort bits beyond which the sample's runs are not split further (u32 keys; a sample's runs are single by then). */
const MAX_KEY_BITS = 32;
/** Most tables of a plan whose runs are counted on the sample (evenly spread; the count is scaled to all). */
const SAMPLED_TABLES = 12;
/** The model's plan is kept unless the sample's runs hold this many times the pairs it expects. */
const SKEW = 1.5;

/**
 * The cheapest plan for these fingerprints: planJoin's, or another one when a sample shows they are clustered.
 * `compareAll: false` leaves out comparing all pairs (unless the model's plan is that): dedupStream's when the
 * shingle sets have spilled to a file, where that plan's pair order (each document against all later ones) reads
 * every window of sets back for each chunk of pairs. The 2 GB corpus of ~100 edited copies (336,060 distinct
 * fingerprints, k = 12): comparing all 56 G pairs took 49 s of join and 46 s of verification, the model's 455
 * tables 16 s and 20 s.
 */
export function planJoinFor(fps: BigUint64Array, n: number, k: number, bits: 64 | 128, compareAll = true): JoinPlan {
  const model = planJoin(n, k, bits);
  if (n < 4 * SAMPLE || model.cost < MIN_SAMPLED_COST || model.tables.length === 1) return model;
  // Block values are read as numbers of at most 32 bits (the plans that sample: b ≥ 2 at 64 bits, b ≥ 4 at 128).
  if (model.blocks.some((block) => block.width > 32)) return model;
  const sample = sampleOf(fps, n, bits);
  const near = selfPairsWithinDistance(sample, k, { bits });
  const scale = (n * (n - 1)) / (SAMPLE * (SAMPLE - 1));
  const estimate = (plan: JoinPlan, values: Uint32Array, runs: number): number =>
    tableCostFixed(n, plan) + scale * (runs * RUN_PAIR + nearMeetings(values, near, plan) * NEAR_PAIR);
  // The model's plan stays unless the sample's runs are longer than the model's, or near pairs weigh in.
  const modelValues = blockValues(sample, model);
  // Runs are counted on at most MAX_KEY_BITS of the sort key, and expected on the same bits.
  const countedBits = Math.min(model.sortBits, MAX_KEY_BITS);
  const modelRuns = runPairs(modelValues, model, [countedBits])[0]!;
  const expectedRuns = (model.tables.length * SAMPLE * (SAMPLE - 1)) / 2 / 2 ** countedBits;
  const nearCost = scale * nearMeetings(modelValues, near, model) * NEAR_PAIR;
  // A sample expects few run pairs of random fingerprints (10^7 at k = 3: about 1), so the bound allows for their
  // Poisson spread (3 standard deviations and 3 more) before it calls the data skewed.
  const allowed = SKEW * expectedRuns + 3 * Math.sqrt(expectedRuns) + 3;
  if (modelRuns <= allowed && nearCost <= NEAR_SHARE * model.cost) return model;
  const brute = bruteForcePlan(n, k, bits);
  let best = compareAll
    ? { plan: brute, cost: (n * (n - 1) * BRUTE_PAIR) / 2 + scale * near.a.length * OUT_PAIR }
    : { plan: model, cost: estimate(model, modelValues, modelRuns) };
  for (const shape of plansByBlocks(n, k, bits)) {
    if (shape.tables.length > MAX_SAMPLED_TABLES || shape.blocks.some((block) => block.width > 32)) continue;
    if (tableCostFixed(n, shape) >= best.cost) continue; // its tables alone cost more than the best so far
    const top = Math.min(maxSortBits(shape), shape.sortBits + EXTRA_SORT_BITS, MAX_KEY_BITS);
    const options: number[] = [];
    for (let s = shape.sortBits; s <= top; s += 2) options.push(s);
    if (options.length === 0) continue;
    const values = blockValues(sample, shape);
    const runs = runPairs(values, shape, options);
    options.forEach((s, i) => {
      const plan = withSortBits(shape, s, n);
      const cost = estimate(plan, values, runs[i]!);
      if (cost < best.cost) best = { plan, cost };
    });
  }
  if (bits === 64) {
    const probe = probePlan(fps, n, k);
    if (probe && probe.cost + scale * near.a.length * OUT_PAIR < best.cost) return probe;
  }
  return best.plan;
}

/** Pairs within k that the sample must hold before its estimate is trusted to call a join large. */
const MIN_SAMPLED_NEAR = 16;
/** How far the estimate must pass a budget before the join is not even tried. */
const OVER_BUDGET_MARGIN = 4;

/**
 * Whether the join of these fingerprints within k surely has more than `budget` pairs: the pairs within k of the
 * planner's sample, scaled to all n, pass the budget OVER_BUDGET_MARGIN times over (and the sample holds
 * MIN_SAMPLED_NEAR of them). A budgeted join (joinIfSmall) then gives up before it starts: on 2 GB of edited
 * copies (336,060 distinct fingerprints, 47.7 M candidate pairs against a budget of 4 Mi) trying took 0.5 s on one
 * thread, 1.1 s on two, and left each worker's WebAssembly memory at 131 MB for the rest of the run. A wrong
 * answer costs only speed: the caller walks the join in chunks, with the same clusters.
 */
export function joinSurelyExceeds(fps: BigUint64Array, n: number, k: number, bits: 64 | 128, budget: number): boolean {
  if (n < 4 * SAMPLE) return false;
  const near = selfPairsWithinDistance(sampleOf(fps, n, bits), k, { bits }).a.length;
  const scale = (n * (n - 1)) / (SAMPLE * (SAMPLE - 1));
  return near >= MIN_SAMPLED_NEAR && near * scale > OVER_BUDGET_MARGIN * budget;
}

/** SAMPLE fingerprints, one from each of SAMPLE equal slices of the input, at a pseudo-random place in it. */
function sampleOf(fps: BigUint64Array, n: number, bits: 64 | 128): BigUint64Array {
  const words = bits / 64;
  const out = new BigUint64Array(SAMPLE * words);
  let x = 0x9e3779b9;
  for (let i = 0; i < SAMPLE; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const at = Math.floor(((i + x / 2 ** 32) * n) / SAMPLE);
    for (let w = 0; w < words; w++) out[i * words + w] = fps[at * words + w]!;
  }
  return out;
}

/**
 * Each sampled fingerprint's block values, block-major: values[id * SAMPLE + i] (blocks of at most 32 bits), from
 * the fingerprints' 32-bit halves (little-endian: half h holds bits [32h, 32h + 32)).
 */
function blockValues(sample: BigUint64Array, plan: JoinPlan): Uint32Array {
  const halves = new Uint32Array(sample.buffer, sample.byteOffset, sample.length * 2);
  const per = plan.bits / 32;
  const values = new Uint32Array(plan.blocks.length * SAMPLE);
  plan.blocks.forEach(({ start, width }, id) => {
    const h = start >>> 5;
    const off = start & 31;
    const spills = off + width > 32;
    const mask = width === 32 ? 0xffffffff : 2 ** width - 1;
    for (let i = 0; i < SAMPLE; i++) {
      let v = halves[i * per + h]! >>> off;
      if (spills) v |= halves[i * per + h + 1]! << (32 - off);
      values[id * SAMPLE + i] = (v & mask) >>> 0;
    }
  });
  return values;
}

/**
 * For each sort-bit count in `options` (at most MAX_KEY_BITS), the pairs of sampled fingerprints that share a run,
 * summed over the plan's tables: a table's run is the top sort bits of its key (its key blocks, concatenated in
 * order). At most SAMPLED_TABLES tables, evenly spread, are counted, and the sum is scaled to all of them.
 */
function runPairs(values: Uint32Array, plan: JoinPlan, options: readonly number[]): number[] {
  const most = Math.max(...options);
  const totals = options.map(() => 0);
  const keys = new Uint32Array(SAMPLE);
  const step = Math.max(1, plan.tables.length / SAMPLED_TABLES);
  let counted = 0;
  for (let t = 0; t < plan.tables.length; t = Math.floor(++counted * step)) {
    keys.fill(0);
    let left = most;
    for (const id of plan.tables[t]!) {
      if (left === 0) break;
      const width = plan.blocks[id]!.width;
      const take = Math.min(width, left);
      for (let i = 0; i < SAMPLE; i++)
        keys[i] = ((take === 32 ? 0 : keys[i]! << take) | (values[id * SAMPLE + i]! >>> (width - take))) >>> 0;
      left -= take;
    }
    keys.sort();
    options.forEach((s, o) => {
      const shift = most - s;
      let run = 1;
      for (let i = 1; i <= SAMPLE; i++) {
        if (i < SAMPLE && keys[i]! >>> shift === keys[i - 1]! >>> shift) run++;
        else {
          totals[o]! += (run * (run - 1)) / 2;
          run = 1;
        }
      }
    });
  }
  return totals.map((x) => (x * plan.tables.length) / counted);
}

/** How many times the plan's tables meet the sampled pairs within k: C(agreeing blocks, b - k) per pair. */
function nearMeetings(values: Uint32Array, near: { a: Uint32Array; b: Uint32Array }, plan: JoinPlan): number {
  const keySize = plan.tables[0]!.length;
  let meetings = 0;
  for (let p = 0; p < near.a.length; p++) {
    let agree = 0;
    for (let id = 0; id < plan.blocks.length; id++)
      if (values[id * SAMPLE + near.a[p]!] === values[id * SAMPLE + near.b[p]!]) agree++;
    meetings += binomial(agree, keySize);
  }
  return meetings;
}
