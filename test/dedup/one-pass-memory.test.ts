// dedup()'s one pass (fingerprints and shingle sets together, the sets left in WebAssembly memory) when that memory
// cannot hold the sets: the call goes on through the set store's batches and gives the clusters of checking every
// pair, and the module stays usable. The pass is made to fail as real exhaustion would, by capping WebAssembly
// memory (test/runtime/heap-limit.ts) while it runs.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { loadReference, rng } from '../reference.js';
import { referenceClusters } from './jaccard-reference.js';

const onePass = vi.hoisted(() => ({ failures: 0, calls: 0, capped: false }));

vi.mock('../../src/dedup/shingle-sets.js', async (original) => {
  const real = await original<typeof import('../../src/dedup/shingle-sets.js')>();
  const { withHeapLimit } = await import('../runtime/heap-limit.js');
  return {
    ...real,
    fingerprintWithSets: (...args: Parameters<typeof real.fingerprintWithSets>) => {
      onePass.calls++;
      if (!onePass.capped) return real.fingerprintWithSets(...args);
      try {
        return withHeapLimit(0, () => real.fingerprintWithSets(...args));
      } catch (error) {
        onePass.failures++;
        throw error;
      }
    },
  };
});

// test/setup.ts loaded the library before this file's mock: load it again, with the mock in place.
vi.resetModules();
const { init } = await import('../../src/index.js');
await init({ build: process.env.SIMHASH_BUILD === 'scalar' ? 'scalar' : 'simd' });
const { dedup } = await import('../../src/dedup/dedup.js');

beforeAll(loadReference);

/** Groups of edited copies of seeded texts, shuffled, with unrelated texts among them. */
function corpus(seed: number): string[] {
  const next = rng(seed);
  const int = (m: number) => Math.floor(next() * m);
  const word = () => `${'bdgkmprt'[int(8)]}${int(4000).toString(36)}a`;
  const docs: string[] = [];
  for (let g = 0; g < 60; g++) {
    const words = Array.from({ length: 40 + int(80) }, word);
    for (let c = 0; c < 1 + int(12); c++) {
      const copy = words.slice();
      for (let e = 0; e < 1 + int(3); e++) copy[int(copy.length)] = word();
      docs.push(copy.join(' '));
    }
  }
  for (let i = docs.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}

describe('dedup() when WebAssembly memory cannot hold the one pass', () => {
  it('goes on through the set store: the clusters of checking every pair, and the module stays usable', () => {
    const texts = corpus(512);
    const want = referenceClusters(texts, 12);
    onePass.capped = true;
    let capped: ReturnType<typeof dedup>;
    try {
      capped = dedup(texts);
    } finally {
      onePass.capped = false;
    }
    expect([onePass.calls, onePass.failures]).toEqual([1, 1]);
    expect(Array.from(capped.clusterOf)).toEqual(want);
    expect(capped.checks).toBeGreaterThan(0);
    // The same call with memory: the one pass runs, and decides alike.
    const calls = onePass.calls;
    const free = dedup(texts);
    expect(onePass.calls).toBe(calls + 1);
    expect(onePass.failures).toBe(1);
    expect(Array.from(free.clusterOf)).toEqual(want);
    expect(Array.from(free.pairs.a)).toEqual(Array.from(capped.pairs.a));
    expect(Array.from(free.pairs.b)).toEqual(Array.from(capped.pairs.b));
  });
});
