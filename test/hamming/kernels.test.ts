// The 64-bit one-query kernels of assembly/hamming.ts called directly, with the raw pointers and small output
// capacities the public API never uses, against a plain popcount reference on seeded data: eight-per-step
// loops with every tail length, unaligned arrays, and a collect buffer that fills at every position (the caller
// resumes after the last index written, as src/hamming/hamming.ts does).
import { describe, expect, it } from 'vitest';
import { wasm } from '../../src/runtime/wasm.js';
import { rng } from '../reference.js';

interface ScanKernels {
  hammingDistances64(fps: number, n: number, q: bigint, out: number): void;
  hammingCount64(fps: number, n: number, q: bigint, k: number): number;
  hammingCollect64(
    fps: number,
    n: number,
    q: bigint,
    k: number,
    base: number,
    outIndex: number,
    outDistance: number,
    cap: number,
  ): number;
}

function popcount64(x: bigint): number {
  let d = 0;
  for (; x; x &= x - 1n) d++;
  return d;
}

/** n fingerprints, a share `near` of them within 0..k+1 bits of q, from a seeded stream. */
function planted(next: () => number, n: number, q: bigint, k: number, near: number): BigUint64Array {
  const out = new BigUint64Array(n);
  const word = () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
  for (let i = 0; i < n; i++) {
    if (next() >= near) {
      out[i] = word();
      continue;
    }
    let x = q;
    const flips = near === 1 ? Math.floor(next() * (k + 1)) : Math.floor(next() * (k + 2));
    for (let f = 0; f < flips; f++) x ^= 1n << BigInt(Math.floor(next() * 64));
    out[i] = x;
  }
  return out;
}

describe('64-bit scan kernels, raw', () => {
  it('distances, count and collect (every capacity 1..20) match the reference at every tail and alignment', () => {
    const rt = wasm();
    const k = rt.kernels as unknown as ScanKernels;
    const next = rng(1515);
    const ptr = rt.heap.alloc(8 * 400 + 64);
    const outIndex = rt.heap.alloc(4 * 400);
    const outDistance = rt.heap.alloc(400 + 16);
    try {
      for (let trial = 0; trial < 120; trial++) {
        const n = trial < 40 ? trial : Math.floor(next() * 390);
        const shift = 8 * Math.floor(next() * 8); // 0..56: groups of eight start anywhere in a cache line
        const maxDistance = Math.floor(next() * 9);
        const q = (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
        // Every third trial all within k: groups of eight full of hits meet every capacity.
        const fps = planted(next, n, q, maxDistance, trial % 3 === 0 ? 1 : 0.5);
        const at = ptr + shift;
        rt.heap.u64.set(fps, at >>> 3);
        const expected = Array.from(fps, (x) => popcount64(x ^ q));
        const label = `n ${n}, k ${maxDistance}, shift ${shift}`;

        rt.heap.u8.fill(0xee, outDistance, outDistance + n + 16);
        k.hammingDistances64(at, n, q, outDistance);
        expect(Array.from(rt.heap.u8.subarray(outDistance, outDistance + n)), label).toEqual(expected);
        expect(rt.heap.u8[outDistance + n], `${label}: nothing written past n`).toBe(0xee);

        const hits = expected.flatMap((d, i) => (d <= maxDistance ? [i] : []));
        expect(k.hammingCount64(at, n, q, maxDistance), label).toBe(hits.length);

        for (const cap of [1, 2, 3, 7, 8, 9, 15, 16, 17, 20]) {
          const got: number[] = [];
          const gotDistance: number[] = [];
          let start = 0;
          for (let calls = 0; start < n; calls++) {
            expect(calls, `${label}, cap ${cap}: progress`).toBeLessThan(n + 2);
            const c = k.hammingCollect64(at + 8 * start, n - start, q, maxDistance, start, outIndex, outDistance, cap);
            expect(c).toBeLessThanOrEqual(cap);
            const idx = Array.from(rt.heap.u32.subarray(outIndex >>> 2, (outIndex >>> 2) + c));
            got.push(...idx);
            gotDistance.push(...rt.heap.u8.subarray(outDistance, outDistance + c));
            if (c < cap) break;
            start = idx[c - 1]! + 1;
          }
          expect(got, `${label}, cap ${cap}`).toEqual(hits);
          expect(gotDistance, `${label}, cap ${cap}`).toEqual(hits.map((i) => expected[i]!));
        }
      }
    } finally {
      rt.heap.release(outDistance);
      rt.heap.release(outIndex);
      rt.heap.release(ptr);
    }
  });
});
