// The JavaScript verifier that WebAssembly verification replaced (src/dedup/verify-pairs.ts before issue 12), kept
// only here as the benchmark's same-run baseline: a regex copy of the word rules, a 53-bit multiply-xorshift hash
// per word chained per shingle, sorted sets and the early-exit merge.
const STANDALONE = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}`;
const WORD = String.raw`\p{L}\p{N}\p{M}`;
const WORDS = new RegExp(`(?=[${WORD}])[${STANDALONE}]|(?:(?![${STANDALONE}])[${WORD}])+`, 'gu');

function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORDS)) out.push(m[0]);
  return out;
}

function shingleHashes(text: string, width: number): Float64Array {
  const w = words(text);
  const lo = new Int32Array(w.length);
  const hi = new Int32Array(w.length);
  for (let i = 0; i < w.length; i++) {
    const s = w[i]!;
    let h1 = 0xdeadbeef;
    let h2 = 0x41c6ce57;
    for (let j = 0; j < s.length; j++) {
      const c = s.charCodeAt(j);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    lo[i] = h1;
    hi[i] = h2;
  }
  const span = Math.min(width, w.length);
  const count = w.length === 0 ? 0 : w.length - span + 1;
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    let h1 = 0x2545f491;
    let h2 = 0x9e3779b9;
    for (let j = i; j < i + span; j++) {
      h1 = Math.imul(h1 ^ lo[j]!, 0x85ebca6b);
      h1 = (h1 << 13) | (h1 >>> 19);
      h2 = Math.imul(h2 ^ hi[j]!, 0xc2b2ae35);
      h2 = (h2 << 17) | (h2 >>> 15);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    out[i] = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  }
  out.sort();
  let n = 0;
  for (let j = 0; j < out.length; j++) if (j === 0 || out[j] !== out[n - 1]) out[n++] = out[j]!;
  return n === out.length ? out : out.slice(0, n);
}

function jaccardAtLeast(a: Float64Array, b: Float64Array, t: number): boolean {
  const total = a.length + b.length;
  const needed = Math.ceil((t * total) / (1 + t) - 1e-9);
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < a.length && j < b.length) {
    if (common + Math.min(a.length - i, b.length - j) < needed) return false;
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      common++;
      i++;
      j++;
      if (common >= needed && common / (total - common) >= t) return true;
    } else if (x < y) i++;
    else j++;
  }
  return common / (total - common) >= t;
}

/** How many of the pairs the old verifier kept (threshold 0.6, width 3; string texts). */
export function jsVerifiedCount(texts: readonly string[], a: Uint32Array, b: Uint32Array): number {
  const sets = new Map<number, Float64Array>();
  const setOf = (i: number): Float64Array => {
    let s = sets.get(i);
    if (!s) sets.set(i, (s = shingleHashes(texts[i]!, 3)));
    return s;
  };
  let kept = 0;
  for (let p = 0; p < a.length; p++) {
    const i = a[p]!;
    const j = b[p]!;
    if (texts[i] === texts[j]) {
      kept++;
      continue;
    }
    const si = setOf(i);
    const sj = setOf(j);
    const ok =
      si.length === 0 || sj.length === 0
        ? si.length === 0 && sj.length === 0 && texts[i]!.trim() === texts[j]!.trim()
        : jaccardAtLeast(si, sj, 0.6);
    if (ok) kept++;
  }
  return kept;
}
