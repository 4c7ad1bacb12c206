// XXH3-64 (xxHash 0.8, XXH3_64bits_withSeed) by Yann Collet: the default feature hash of the fingerprint spec.
// Spec: github.com/Cyan4973/xxHash, doc/xxhash_spec.md. Short inputs (the common case for tokens) take
// branch-light paths with one or two multiplies; WebAssembly has no 64x64->128 multiply, so it is built from
// 32-bit halves exactly like the reference's portable XXH_mult64to128.

/** Spec simhash-wasm/1: a feature's 64-bit hash is XXH3-64 with seed 0; at 128 bits this seed gives the high word. */
// @ts-ignore: decorator
@inline export const SEED_HIGH: u64 = 1;

// @ts-ignore: decorator
@inline const PRIME32_1: u64 = 0x9E3779B1;
// @ts-ignore: decorator
@inline const PRIME32_2: u64 = 0x85EBCA77;
// @ts-ignore: decorator
@inline const PRIME32_3: u64 = 0xC2B2AE3D;
// @ts-ignore: decorator
@inline const PRIME64_1: u64 = 0x9E3779B185EBCA87;
// @ts-ignore: decorator
@inline const PRIME64_2: u64 = 0xC2B2AE3D27D4EB4F;
// @ts-ignore: decorator
@inline const PRIME64_3: u64 = 0x165667B19E3779F9;
// @ts-ignore: decorator
@inline const PRIME64_4: u64 = 0x85EBCA77C2B2AE63;
// @ts-ignore: decorator
@inline const PRIME64_5: u64 = 0x27D4EB2F165667C5;
// @ts-ignore: decorator
@inline const PRIME_MX1: u64 = 0x165667919E3779F9;
// @ts-ignore: decorator
@inline const PRIME_MX2: u64 = 0x9FB21C651E98DF25;

// Values read from kSecret (below) by the short-input paths, folded here so a hash of a token loads no secret:
// little-endian words of kSecret at the byte offsets named, XORed as the spec's formulas combine them.
// @ts-ignore: decorator
@inline const SECRET_4_8: u64 = 0xc73ab174c5ecd5a2; // word 8 ^ word 16 (lengths 4..8)
// @ts-ignore: decorator
@inline const SECRET_1_3: u64 = 0x87275a9b; // u32 at 0 ^ u32 at 4 (lengths 1..3)
// @ts-ignore: decorator
@inline const SECRET_0: u64 = 0x8726f9105dc21ddc; // word 56 ^ word 64 (length 0)
// @ts-ignore: decorator
@inline const SECRET_9_16_LO: u64 = 0x6782737bea4239b9; // word 24 ^ word 32 (lengths 9..16)
// @ts-ignore: decorator
@inline const SECRET_9_16_HI: u64 = 0xaf56bc3b0996523a; // word 40 ^ word 48
// @ts-ignore: decorator
@inline const S0: u64 = 0xbe4ba423396cfeb8; // words 0..56: the mix16 keys of lengths 17..64
// @ts-ignore: decorator
@inline const S8: u64 = 0x1cad21f72c81017c;
// @ts-ignore: decorator
@inline const S16: u64 = 0xdb979083e96dd4de;
// @ts-ignore: decorator
@inline const S24: u64 = 0x1f67b3b7a4a44072;
// @ts-ignore: decorator
@inline const S32: u64 = 0x78e5c0cc4ee679cb;
// @ts-ignore: decorator
@inline const S40: u64 = 0x2172ffcc7dd05a82;
// @ts-ignore: decorator
@inline const S48: u64 = 0x8e2443f7744608b8;
// @ts-ignore: decorator
@inline const S56: u64 = 0x4c263a81e69035e0;

/** kSecret, the default 192-byte secret. */
const SECRET = memory.data<u8>([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
  0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
  0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
  0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
  0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
  0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
  0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
  0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
  0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
  0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
  0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
  0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
], 16);
const CUSTOM = memory.data(192, 16); // secret derived from a non-zero seed (long inputs only)
const ACC = memory.data(64, 16);
let customSeed: u64 = 0;

// @ts-ignore: decorator
@inline function mulFold(a: u64, b: u64): u64 {
  let aLo = a & 0xFFFFFFFF, aHi = a >> 32, bLo = b & 0xFFFFFFFF, bHi = b >> 32;
  let loLo = aLo * bLo;
  let hiLo = aHi * bLo;
  let loHi = aLo * bHi;
  let hiHi = aHi * bHi;
  let cross = (loLo >> 32) + (hiLo & 0xFFFFFFFF) + loHi;
  let upper = (hiLo >> 32) + (cross >> 32) + hiHi;
  let lower = (cross << 32) | (loLo & 0xFFFFFFFF);
  return lower ^ upper;
}

// @ts-ignore: decorator
@inline function avalanche64(h: u64): u64 {
  h ^= h >> 33;
  h *= PRIME64_2;
  h ^= h >> 29;
  h *= PRIME64_3;
  return h ^ (h >> 32);
}

// @ts-ignore: decorator
@inline function avalanche3(h: u64): u64 {
  h ^= h >> 37;
  h *= PRIME_MX1;
  return h ^ (h >> 32);
}

// @ts-ignore: decorator
@inline function rrmxmx(h: u64, len: u64): u64 {
  h ^= rotl<u64>(h, 49) ^ rotl<u64>(h, 24);
  h *= PRIME_MX2;
  h ^= (h >> 35) + len;
  h *= PRIME_MX2;
  return h ^ (h >> 28);
}

// @ts-ignore: decorator
@inline function mix16(p: usize, s: usize, seed: u64): u64 {
  return mulFold(load<u64>(p) ^ (load<u64>(s) + seed), load<u64>(p, 8) ^ (load<u64>(s, 8) - seed));
}

/**
 * XXH3_64bits_withSeed of `len` bytes at `p`, which must not be the first 4 bytes of memory (short inputs
 * read up to 4 bytes before `p`). Inlined into the tokenizers: lengths up to 16 take no loop.
 */
// @ts-ignore: decorator
@inline export function xxh3(p: usize, len: usize, seed: u64): u64 {
  if (len <= 8) {
    // Lengths 0..8 are most tokens; their three formulas are all computed and one is selected, because a
    // mispredicted branch on the length costs more than the two multiplies saved.
    let s = seed ^ (<u64>bswap<u32>(<u32>seed) << 32);
    let in1 = <u64>load<u32>(p);
    let in2 = <u64>load<u32>(p + len - 4); // for len < 4 reads bytes before p: the result is not selected
    let mid = rrmxmx((in2 + (in1 << 32)) ^ (SECRET_4_8 - s), <u64>len);
    let c1 = <u32>load<u8>(p), c2 = <u32>load<u8>(p + (len >> 1)), c3 = <u32>load<u8>(p + len - 1);
    let combined = (c1 << 16) | (c2 << 24) | c3 | (<u32>len << 8);
    let short = <u64>combined ^ (SECRET_1_3 + seed);
    let empty = seed ^ SECRET_0;
    return select<u64>(mid, avalanche64(select<u64>(short, empty, len != 0)), len >= 4);
  }
  if (len <= 16) {
    let lo = load<u64>(p) ^ (SECRET_9_16_LO + seed);
    let hi = load<u64>(p + len - 8) ^ (SECRET_9_16_HI - seed);
    return avalanche3(<u64>len + bswap<u64>(lo) + hi + mulFold(lo, hi));
  }
  return xxh3Long(p, len, seed);
}

// @ts-ignore: decorator
@inline function mix16k(p: usize, k0: u64, k1: u64, seed: u64): u64 {
  return mulFold(load<u64>(p) ^ (k0 + seed), load<u64>(p, 8) ^ (k1 - seed));
}

/**
 * XXH3_64bits_withSeed for 17 <= len <= 64 (the 17..128 formula): shingles of 3 to 8 word hashes. Keys are
 * constants and no call or length dispatch beyond one branch, so a loop of these overlaps freely.
 */
// @ts-ignore: decorator
@inline export function xxh3Mid(p: usize, len: usize, seed: u64): u64 {
  let acc = <u64>len * PRIME64_1;
  if (len > 32) {
    acc += mix16k(p + 16, S32, S40, seed);
    acc += mix16k(p + len - 32, S48, S56, seed);
  }
  acc += mix16k(p, S0, S8, seed);
  acc += mix16k(p + len - 16, S16, S24, seed);
  return avalanche3(acc);
}

/** Inputs of 17 bytes and more. */
export function xxh3Long(p: usize, len: usize, seed: u64): u64 {
  let s = SECRET;
  if (len <= 128) {
    let acc = <u64>len * PRIME64_1;
    if (len > 32) {
      if (len > 64) {
        if (len > 96) {
          acc += mix16(p + 48, s + 96, seed);
          acc += mix16(p + len - 64, s + 112, seed);
        }
        acc += mix16(p + 32, s + 64, seed);
        acc += mix16(p + len - 48, s + 80, seed);
      }
      acc += mix16(p + 16, s + 32, seed);
      acc += mix16(p + len - 32, s + 48, seed);
    }
    acc += mix16(p, s, seed);
    acc += mix16(p + len - 16, s + 16, seed);
    return avalanche3(acc);
  }
  if (len <= 240) {
    let acc = <u64>len * PRIME64_1;
    for (let i: usize = 0; i < 8; i++) acc += mix16(p + 16 * i, s + 16 * i, seed);
    let accEnd = mix16(p + len - 16, s + 136 - 17, seed);
    acc = avalanche3(acc);
    let rounds = len / 16;
    for (let i: usize = 8; i < rounds; i++) accEnd += mix16(p + 16 * i, s + 16 * (i - 8) + 3, seed);
    return avalanche3(acc + accEnd);
  }
  if (seed != 0) {
    if (seed != customSeed || load<u64>(CUSTOM) == 0) {
      for (let i: usize = 0; i < 192; i += 16) {
        store<u64>(CUSTOM + i, load<u64>(SECRET + i) + seed);
        store<u64>(CUSTOM + i, load<u64>(SECRET + i, 8) - seed, 8);
      }
      customSeed = seed;
    }
    s = CUSTOM;
  }
  return hashLong(p, len, s);
}

// @ts-ignore: decorator
@inline function accumulate512(p: usize, s: usize): void {
  for (let i: usize = 0; i < 8; i++) {
    let v = load<u64>(p + 8 * i);
    let k = v ^ load<u64>(s + 8 * i);
    let a = ACC + ((i ^ 1) << 3);
    store<u64>(a, load<u64>(a) + v);
    a = ACC + (i << 3);
    store<u64>(a, load<u64>(a) + (k & 0xFFFFFFFF) * (k >> 32));
  }
}

function hashLong(p: usize, len: usize, s: usize): u64 {
  store<u64>(ACC, PRIME32_3);
  store<u64>(ACC, PRIME64_1, 8);
  store<u64>(ACC, PRIME64_2, 16);
  store<u64>(ACC, PRIME64_3, 24);
  store<u64>(ACC, PRIME64_4, 32);
  store<u64>(ACC, PRIME32_2, 40);
  store<u64>(ACC, PRIME64_5, 48);
  store<u64>(ACC, PRIME32_1, 56);
  let blockLen: usize = 1024; // 64-byte stripes x 16 per block with the 192-byte secret
  let blocks = (len - 1) / blockLen;
  for (let n: usize = 0; n < blocks; n++) {
    let b = p + n * blockLen;
    for (let st: usize = 0; st < 16; st++) accumulate512(b + st * 64, s + st * 8);
    for (let i: usize = 0; i < 8; i++) {
      let a = load<u64>(ACC + 8 * i);
      a ^= a >> 47;
      a ^= load<u64>(s + 128 + 8 * i);
      store<u64>(ACC + 8 * i, a * PRIME32_1);
    }
  }
  let stripes = ((len - 1) - blockLen * blocks) / 64;
  let b = p + blocks * blockLen;
  for (let st: usize = 0; st < stripes; st++) accumulate512(b + st * 64, s + st * 8);
  accumulate512(p + len - 64, s + 192 - 64 - 7);
  let result = <u64>len * PRIME64_1;
  for (let i: usize = 0; i < 4; i++) {
    result += mulFold(load<u64>(ACC + 16 * i) ^ load<u64>(s + 11 + 16 * i), load<u64>(ACC + 16 * i, 8) ^ load<u64>(s + 11 + 16 * i, 8));
  }
  return avalanche3(result);
}
