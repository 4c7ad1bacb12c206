// Test data for the cluster join: seeded random fingerprints with planted relatives at every distance 0..k+1
// (0: exact duplicates, including a run of many copies), and a brute-force reference of the pairs within k.
import { rng } from '../reference.js';

const M64 = (1n << 64n) - 1n;

function random64(next: () => number): bigint {
  const hi = BigInt(Math.floor(next() * 2 ** 32));
  const lo = BigInt(Math.floor(next() * 2 ** 32));
  return (hi << 32n) | lo;
}

function flip(fp: bigint, count: number, bits: number, next: () => number): bigint {
  const used = new Set<number>();
  while (used.size < count) used.add(Math.floor(next() * bits));
  for (const b of used) fp ^= 1n << BigInt(b);
  return fp;
}

/**
 * n fingerprints (one word each at 64 bits, two at 128, low first): about a fifth are relatives of another at a
 * distance from 0 to k + 1 (cycling), 20 are copies of one value, the rest random; shuffled.
 */
export function plantedFingerprints(n: number, k: number, bits: 64 | 128, seed: number): BigUint64Array {
  const next = rng(seed);
  const random = () => (bits === 64 ? random64(next) : (random64(next) << 64n) | random64(next));
  const values: bigint[] = [];
  const copied = random();
  for (let i = 0; i < Math.min(20, n); i++) values.push(copied);
  let d = 0;
  while (values.length < n) {
    const base = random();
    values.push(base);
    if (next() < 0.25 && values.length < n) {
      values.push(flip(base, d, bits, next));
      d = (d + 1) % (k + 2);
    }
  }
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  const words = bits / 64;
  const fps = new BigUint64Array(n * words);
  values.forEach((v, i) => {
    fps[i * words] = v & M64;
    if (words === 2) fps[i * 2 + 1] = v >> 64n;
  });
  return fps;
}

export function popcount(x: bigint): number {
  let c = 0;
  for (; x !== 0n; x &= x - 1n) c++;
  return c;
}

/** Fingerprint i as one bigint (128 bits: high word above the low). */
export function valueAt(fps: BigUint64Array, bits: 64 | 128, i: number): bigint {
  return bits === 64 ? fps[i]! : fps[2 * i]! | (fps[2 * i + 1]! << 64n);
}

/** Every pair i < j within k by comparing all pairs, as "i,j,d" strings. */
export function bruteForcePairs(fps: BigUint64Array, bits: 64 | 128, k: number): string[] {
  const n = fps.length / (bits / 64);
  const v = Array.from({ length: n }, (_, i) => valueAt(fps, bits, i));
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const d = popcount(v[i]! ^ v[j]!);
      if (d <= k) out.push(`${i},${j},${d}`);
    }
  return out;
}
