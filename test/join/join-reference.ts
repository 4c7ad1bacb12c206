// The plain reference of the all-pairs join (every pair compared, in TypeScript), shared by the join's tests.

export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Every pair within k by comparing all pairs, as "a,b,d" strings in (a, b) order. */
export function bruteForce(fps: BigUint64Array, k: number, bits: 64 | 128): string[] {
  const halves = new Uint32Array(fps.buffer, fps.byteOffset, fps.length * 2);
  const w = bits / 32;
  const n = fps.length / (bits / 64);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let d = 0;
      for (let q = 0; q < w; q++) d += popcount32(halves[i * w + q]! ^ halves[j * w + q]!);
      if (d <= k) out.push(`${i},${j},${d}`);
    }
  }
  return out;
}

/** Join results as the reference's strings. */
export function asStrings(p: { a: Uint32Array; b: Uint32Array; distance: Uint8Array }): string[] {
  return Array.from(p.a, (a, i) => `${a},${p.b[i]},${p.distance[i]}`);
}

/** Each document's lowest-index connected document under the "a,b,d" pairs (a plain union-find). */
export function unionFind(n: number, pairs: string[]): number[] {
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x]!)));
  for (const p of pairs) {
    const [a, b] = p.split(',').map(Number) as [number, number];
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  return parent.map((_, i) => find(i));
}
