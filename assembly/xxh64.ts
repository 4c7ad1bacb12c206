// XXH64 (Yann Collet's xxHash64, spec: github.com/Cyan4973/xxHash, doc/xxhash_spec.md): the checksum of the
// FingerprintIndex file format. Feature hashes use XXH3 instead (xxh3.ts). Streaming, so that the caller feeds a
// serialized index through a small region piece by piece: copying all of a 10^7-fingerprint index (120 MB) into
// WebAssembly memory at once took ~0.5 s the first time (new pages) and grew memory that never shrinks.

// @ts-ignore: decorator
@inline export const P1: u64 = 0x9E3779B185EBCA87;
// @ts-ignore: decorator
@inline export const P2: u64 = 0xC2B2AE3D27D4EB4F;
// @ts-ignore: decorator
@inline const P3: u64 = 0x165667B19E3779F9;
// @ts-ignore: decorator
@inline const P4: u64 = 0x85EBCA77C2B2AE63;
// @ts-ignore: decorator
@inline const P5: u64 = 0x27D4EB2F165667C5;

// @ts-ignore: decorator
@inline function round(acc: u64, input: u64): u64 {
  return rotl<u64>(acc + input * P2, 31) * P1;
}

// @ts-ignore: decorator
@inline function mergeRound(acc: u64, val: u64): u64 {
  return (acc ^ round(0, val)) * P1 + P4;
}

// The streaming state: the four lanes after the stripes fed so far (xxh64Stripes), and the seed.
let lane1: u64 = 0;
let lane2: u64 = 0;
let lane3: u64 = 0;
let lane4: u64 = 0;
let streamSeed: u64 = 0;

/** Starts a streaming XXH64 with `seed`: then xxh64Stripes over the input's whole stripes, then xxh64End. */
export function xxh64Begin(seed: u64): void {
  streamSeed = seed;
  lane1 = seed + P1 + P2;
  lane2 = seed + P2;
  lane3 = seed;
  lane4 = seed - P1;
}

/** Feeds the next `len` bytes at `ptr` to the streaming XXH64; `len` must be a multiple of 32 (whole stripes). */
export function xxh64Stripes(ptr: usize, len: usize): void {
  let end = ptr + len;
  let v1 = lane1, v2 = lane2, v3 = lane3, v4 = lane4;
  while (ptr < end) {
    v1 = round(v1, load<u64>(ptr));
    v2 = round(v2, load<u64>(ptr, 8));
    v3 = round(v3, load<u64>(ptr, 16));
    v4 = round(v4, load<u64>(ptr, 24));
    ptr += 32;
  }
  lane1 = v1;
  lane2 = v2;
  lane3 = v3;
  lane4 = v4;
}

/**
 * Finishes the streaming XXH64 of `total` bytes, whose last `len` (< 32) are at `ptr` and whose first
 * total - len went through xxh64Stripes: the same value as xxh64 of the whole input.
 */
export function xxh64End(ptr: usize, len: usize, total: u64): u64 {
  let h: u64;
  if (total >= 32) {
    h = rotl<u64>(lane1, 1) + rotl<u64>(lane2, 7) + rotl<u64>(lane3, 12) + rotl<u64>(lane4, 18);
    h = mergeRound(h, lane1);
    h = mergeRound(h, lane2);
    h = mergeRound(h, lane3);
    h = mergeRound(h, lane4);
  } else {
    h = streamSeed + P5;
  }
  return finish(h + total, ptr, ptr + len);
}

/** The tail (fewer than 32 bytes, [ptr, end)) and the avalanche, after the lanes are merged into h. */
// @ts-ignore: decorator
@inline function finish(h: u64, ptr: usize, end: usize): u64 {
  while (ptr + 8 <= end) {
    h ^= round(0, load<u64>(ptr));
    h = rotl<u64>(h, 27) * P1 + P4;
    ptr += 8;
  }
  if (ptr + 4 <= end) {
    h ^= <u64>load<u32>(ptr) * P1;
    h = rotl<u64>(h, 23) * P2 + P3;
    ptr += 4;
  }
  while (ptr < end) {
    h ^= <u64>load<u8>(ptr) * P5;
    h = rotl<u64>(h, 11) * P1;
    ptr++;
  }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}
