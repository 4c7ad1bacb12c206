// The default spec's feature and shingle hashes, for both of its versions (docs/spec.md).
//
// simhash-wasm/2 (the default): a feature of up to 16 bytes (nearly every word) is packed into one or two 64-bit
// words and finished by the SplitMix64 finalizer; longer features are XXH3-64. A shingle of w word hashes is the
// finalizer over the hashes folded with rotations. simhash-wasm/1 (preset 'simhash-wasm/1'): every feature is
// XXH3-64 of its bytes, a shingle XXH3-64 of its word hashes' 8w bytes. WebAssembly has no 64x64->128 multiply,
// which XXH3 needs for 9..128 bytes, and its 0..8-byte paths take four multiplies to the finalizer's two: spec 2
// measured 1.3x faster for the default shingles (bench/profile-stages.ts, same run).
import { xxh3, xxh3Long, xxh3Mid } from './xxh3';

// @ts-ignore: decorator
@inline const PRIME64_1: u64 = 0x9E3779B185EBCA87;
// @ts-ignore: decorator
@inline const PRIME64_2: u64 = 0xC2B2AE3D27D4EB4F;
// @ts-ignore: decorator
@inline const PRIME64_3: u64 = 0x165667B19E3779F9;

/** The SplitMix64 finalizer (Steele, Lea and Flood 2014; Stafford's Mix13): a bijection with full avalanche. */
// @ts-ignore: decorator
@inline function mix(z: u64): u64 {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
  return z ^ (z >> 31);
}

/** What the length (in bytes) and the seed add to a spec-2 input before the finalizer. */
// @ts-ignore: decorator
@inline function key(len: u64, seed: u64): u64 {
  return len * PRIME64_1 + seed * PRIME64_2;
}

/**
 * Spec 2's hash of the `len` bytes at `p` with `seed` (0; 1 for the high word of 128 bits). Up to 8 bytes are one
 * word, exactly as XXH3 reads them: b[0] | b[len/2] << 8 | b[len-1] << 16 below 4 bytes, 0 when empty, and
 * u32(b[0..4]) << 32 | u32(b[len-4..len]) from 4 to 8 (each injective for its length). 9 to 16 bytes are the
 * words u64(b[0..8]) and u64(b[len-8..len]). `p` must not be in the first 4 bytes of memory: short inputs read up
 * to 4 bytes before it (the values read are not selected).
 */
// @ts-ignore: decorator
@inline export function featureHash(p: usize, len: usize, seed: u64): u64 {
  if (len <= 8) {
    let in1 = <u64>load<u32>(p);
    let in2 = <u64>load<u32>(p + len - 4);
    let c1 = <u64>load<u8>(p), c2 = <u64>load<u8>(p + (len >> 1)), c3 = <u64>load<u8>(p + len - 1);
    let short = select<u64>(c1 | (c2 << 8) | (c3 << 16), 0, len != 0);
    return mix(select<u64>((in1 << 32) | in2, short, len >= 4) ^ key(<u64>len, seed));
  }
  if (len <= 16) {
    return mix((load<u64>(p) * PRIME64_3) ^ rotl<u64>(load<u64>(p + len - 8), 31) ^ key(<u64>len, seed));
  }
  return xxh3Long(p, len, seed);
}

/** Spec 2's hash of a shingle: the `w` (>= 1) word hashes at `p`, folded as x = rotl(x, 21) ^ h, then finished. */
// @ts-ignore: decorator
@inline export function shingleHash(p: usize, w: i32, seed: u64): u64 {
  let x = load<u64>(p);
  for (let i = 1; i < w; i++) x = rotl<u64>(x, 21) ^ load<u64>(p + (<usize>i << 3));
  return mix(x ^ key(<u64>w << 3, seed));
}

/** shingleHash of the three word hashes a, b, c (seed 0): the default width, without the loop over the window. */
// @ts-ignore: decorator
@inline export function shingleHash3(a: u64, b: u64, c: u64): u64 {
  return mix((rotl<u64>(rotl<u64>(a, 21) ^ b, 21) ^ c) ^ key(24, 0));
}

/**
 * Spec 1's hash of a feature: XXH3-64. A call, not inlined: the tokenizers inline spec 2's hash, and a second
 * inlined hash in each of them cost 9 KiB per build for the preset that only keeps stored fingerprints working.
 */
// @ts-ignore: decorator
@noinline export function featureHashV1(p: usize, len: usize, seed: u64): u64 {
  return xxh3(p, len, seed);
}

/** Spec 1's hash of a shingle: XXH3-64 of the `w` word hashes' bytes (3..8 words take the straight-line path). */
// @ts-ignore: decorator
@noinline export function shingleHashV1(p: usize, w: i32, seed: u64): u64 {
  let len = <usize>w << 3;
  return len > 16 && len <= 64 ? xxh3Mid(p, len, seed) : xxh3(p, len, seed);
}
