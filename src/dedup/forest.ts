// Union-find over document indices, for clusters built pair by pair (spanning forests of the pair graph).
/** A union-find forest over n documents (u32 parents): the root of a tree is its lowest index. */
export function newForest(n: number): Uint32Array {
  const parent = new Uint32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  return parent;
}

export function forestRoot(parent: Uint32Array, x: number): number {
  while (parent[x] !== x) {
    const up = parent[parent[x]!]!;
    parent[x] = up; // path halving
    x = up;
  }
  return x;
}

/** Joins the trees of a and b unless they are one already; returns whether it joined them. */
export function forestJoin(parent: Uint32Array, a: number, b: number): boolean {
  const ra = forestRoot(parent, a);
  const rb = forestRoot(parent, b);
  if (ra === rb) return false;
  parent[Math.max(ra, rb)] = Math.min(ra, rb);
  return true;
}
