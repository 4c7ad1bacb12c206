// MD5 (RFC 1321) over raw linear memory, for the python-simhash preset (the Python package hashes every feature
// with hashlib.md5). Plain and unrolled: 64 steps per 64-byte block, message words read little-endian straight
// from the input; only the padded tail is copied, into a 128-byte static block. No managed types.

const TAIL = memory.data(128, 16); // the last partial block plus padding (one or two blocks)

/** The digest of the last md5() call, as the four state words A, B, C, D (bytes 0-3, 4-7, 8-11, 12-15, LE). */
export let md5A: u32 = 0;
export let md5B: u32 = 0;
export let md5C: u32 = 0;
export let md5D: u32 = 0;

/** One compression of the 64-byte block at `p` into the md5A..D state. */
function compress(p: usize): void {
  let a = md5A, b = md5B, c = md5C, d = md5D;
  let m0 = load<u32>(p);
  let m1 = load<u32>(p, 4);
  let m2 = load<u32>(p, 8);
  let m3 = load<u32>(p, 12);
  let m4 = load<u32>(p, 16);
  let m5 = load<u32>(p, 20);
  let m6 = load<u32>(p, 24);
  let m7 = load<u32>(p, 28);
  let m8 = load<u32>(p, 32);
  let m9 = load<u32>(p, 36);
  let m10 = load<u32>(p, 40);
  let m11 = load<u32>(p, 44);
  let m12 = load<u32>(p, 48);
  let m13 = load<u32>(p, 52);
  let m14 = load<u32>(p, 56);
  let m15 = load<u32>(p, 60);
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + m0 + 0xd76aa478, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + m1 + 0xe8c7b756, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + m2 + 0x242070db, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + m3 + 0xc1bdceee, 22);
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + m4 + 0xf57c0faf, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + m5 + 0x4787c62a, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + m6 + 0xa8304613, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + m7 + 0xfd469501, 22);
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + m8 + 0x698098d8, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + m9 + 0x8b44f7af, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + m10 + 0xffff5bb1, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + m11 + 0x895cd7be, 22);
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + m12 + 0x6b901122, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + m13 + 0xfd987193, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + m14 + 0xa679438e, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + m15 + 0x49b40821, 22);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + m1 + 0xf61e2562, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + m6 + 0xc040b340, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + m11 + 0x265e5a51, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + m0 + 0xe9b6c7aa, 20);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + m5 + 0xd62f105d, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + m10 + 0x02441453, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + m15 + 0xd8a1e681, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + m4 + 0xe7d3fbc8, 20);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + m9 + 0x21e1cde6, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + m14 + 0xc33707d6, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + m3 + 0xf4d50d87, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + m8 + 0x455a14ed, 20);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + m13 + 0xa9e3e905, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + m2 + 0xfcefa3f8, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + m7 + 0x676f02d9, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + m12 + 0x8d2a4c8a, 20);
  a = b + rotl<u32>(a + (b ^ c ^ d) + m5 + 0xfffa3942, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + m8 + 0x8771f681, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + m11 + 0x6d9d6122, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + m14 + 0xfde5380c, 23);
  a = b + rotl<u32>(a + (b ^ c ^ d) + m1 + 0xa4beea44, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + m4 + 0x4bdecfa9, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + m7 + 0xf6bb4b60, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + m10 + 0xbebfbc70, 23);
  a = b + rotl<u32>(a + (b ^ c ^ d) + m13 + 0x289b7ec6, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + m0 + 0xeaa127fa, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + m3 + 0xd4ef3085, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + m6 + 0x04881d05, 23);
  a = b + rotl<u32>(a + (b ^ c ^ d) + m9 + 0xd9d4d039, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + m12 + 0xe6db99e5, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + m15 + 0x1fa27cf8, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + m2 + 0xc4ac5665, 23);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + m0 + 0xf4292244, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + m7 + 0x432aff97, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + m14 + 0xab9423a7, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + m5 + 0xfc93a039, 21);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + m12 + 0x655b59c3, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + m3 + 0x8f0ccc92, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + m10 + 0xffeff47d, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + m1 + 0x85845dd1, 21);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + m8 + 0x6fa87e4f, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + m15 + 0xfe2ce6e0, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + m6 + 0xa3014314, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + m13 + 0x4e0811a1, 21);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + m4 + 0xf7537e82, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + m11 + 0xbd3af235, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + m2 + 0x2ad7d2bb, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + m9 + 0xeb86d391, 21);
  md5A += a;
  md5B += b;
  md5C += c;
  md5D += d;
}

/** MD5 of `len` bytes at `p`; the digest is left in md5A..md5D. */
export function md5(p: usize, len: usize): void {
  md5A = 0x67452301;
  md5B = 0xefcdab89;
  md5C = 0x98badcfe;
  md5D = 0x10325476;
  let full = p + (len & ~(<usize>63));
  while (p < full) {
    compress(p);
    p += 64;
  }
  // Padding: 0x80, zeros up to 56 mod 64, then the bit length as u64 LE. A tail of 56..63 bytes needs two blocks.
  // Written with plain stores: features are short, and bulk memory calls cost more than the copy itself.
  let rest = len & 63;
  let blocks: usize = rest < 56 ? 64 : 128;
  for (let i: usize = 0; i < blocks; i += 16) {
    store<u64>(TAIL + i, 0);
    store<u64>(TAIL + i, 0, 8);
  }
  let i: usize = 0;
  for (; i + 8 <= rest; i += 8) store<u64>(TAIL + i, load<u64>(p + i));
  for (; i < rest; i++) store<u8>(TAIL + i, load<u8>(p + i));
  store<u8>(TAIL + rest, 0x80);
  store<u64>(TAIL + blocks - 8, <u64>len << 3);
  compress(TAIL);
  if (blocks == 128) compress(TAIL + 64);
}

// Message words 0..4 and 14 of a message of at most 16 bytes (all the others are zero), left by shortWords().
let w0: u32 = 0, w1: u32 = 0, w2: u32 = 0, w3: u32 = 0, w4: u32 = 0, w14: u32 = 0;

/** The one padded block of a message of at most 16 bytes at `p`, built in registers into w0..w4 and w14. */
// @ts-ignore: decorator
@inline function shortWords(p: usize, len: usize): void {
  let lo: u64 = 0, hi: u64 = 0; // message bytes 0-7 and 8-15, little-endian
  if (len >= 8) {
    lo = load<u64>(p);
    // Overlapping load of the last 8 bytes; the shift keeps only bytes 8..len-1.
    if (len > 8) hi = load<u64>(p + len - 8) >> (<u64>(16 - len) << 3);
  } else if (len >= 4) {
    lo = <u64>load<u32>(p) | (<u64>load<u32>(p + len - 4) << (<u64>(len - 4) << 3));
  } else {
    for (let i: usize = 0; i < len; i++) lo |= <u64>load<u8>(p + i) << (<u64>i << 3);
  }
  // The 0x80 padding byte at offset len (offset 16 is word 4).
  w4 = 0;
  if (len < 8) lo |= <u64>0x80 << (<u64>len << 3);
  else if (len < 16) hi |= <u64>0x80 << (<u64>(len - 8) << 3);
  else w4 = 0x80;
  w0 = <u32>lo;
  w1 = <u32>(lo >> 32);
  w2 = <u32>hi;
  w3 = <u32>(hi >> 32);
  w14 = <u32>(len << 3);
}

/**
 * MD5 of at most 16 bytes at `p` (a feature window is at most 4 code points): one block whose words 5..13 and 15
 * are zero, so those words drop out of the 64 steps. Same result as md5().
 */
export function md5Short(p: usize, len: usize): void {
  shortWords(p, len);
  let m0 = w0, m1 = w1, m2 = w2, m3 = w3, m4 = w4, m14 = w14;
  let a: u32 = 0x67452301, b: u32 = 0xefcdab89, c: u32 = 0x98badcfe, d: u32 = 0x10325476;
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + m0 + 0xd76aa478, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + m1 + 0xe8c7b756, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + m2 + 0x242070db, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + m3 + 0xc1bdceee, 22);
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + m4 + 0xf57c0faf, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + 0x4787c62a, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + 0xa8304613, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + 0xfd469501, 22);
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + 0x698098d8, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + 0x8b44f7af, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + 0xffff5bb1, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + 0x895cd7be, 22);
  a = b + rotl<u32>(a + ((b & c) | (~b & d)) + 0x6b901122, 7);
  d = a + rotl<u32>(d + ((a & b) | (~a & c)) + 0xfd987193, 12);
  c = d + rotl<u32>(c + ((d & a) | (~d & b)) + m14 + 0xa679438e, 17);
  b = c + rotl<u32>(b + ((c & d) | (~c & a)) + 0x49b40821, 22);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + m1 + 0xf61e2562, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + 0xc040b340, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + 0x265e5a51, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + m0 + 0xe9b6c7aa, 20);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + 0xd62f105d, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + 0x02441453, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + 0xd8a1e681, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + m4 + 0xe7d3fbc8, 20);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + 0x21e1cde6, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + m14 + 0xc33707d6, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + m3 + 0xf4d50d87, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + 0x455a14ed, 20);
  a = b + rotl<u32>(a + ((d & b) | (~d & c)) + 0xa9e3e905, 5);
  d = a + rotl<u32>(d + ((c & a) | (~c & b)) + m2 + 0xfcefa3f8, 9);
  c = d + rotl<u32>(c + ((b & d) | (~b & a)) + 0x676f02d9, 14);
  b = c + rotl<u32>(b + ((a & c) | (~a & d)) + 0x8d2a4c8a, 20);
  a = b + rotl<u32>(a + (b ^ c ^ d) + 0xfffa3942, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + 0x8771f681, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + 0x6d9d6122, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + m14 + 0xfde5380c, 23);
  a = b + rotl<u32>(a + (b ^ c ^ d) + m1 + 0xa4beea44, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + m4 + 0x4bdecfa9, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + 0xf6bb4b60, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + 0xbebfbc70, 23);
  a = b + rotl<u32>(a + (b ^ c ^ d) + 0x289b7ec6, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + m0 + 0xeaa127fa, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + m3 + 0xd4ef3085, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + 0x04881d05, 23);
  a = b + rotl<u32>(a + (b ^ c ^ d) + 0xd9d4d039, 4);
  d = a + rotl<u32>(d + (a ^ b ^ c) + 0xe6db99e5, 11);
  c = d + rotl<u32>(c + (d ^ a ^ b) + 0x1fa27cf8, 16);
  b = c + rotl<u32>(b + (c ^ d ^ a) + m2 + 0xc4ac5665, 23);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + m0 + 0xf4292244, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + 0x432aff97, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + m14 + 0xab9423a7, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + 0xfc93a039, 21);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + 0x655b59c3, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + m3 + 0x8f0ccc92, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + 0xffeff47d, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + m1 + 0x85845dd1, 21);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + 0x6fa87e4f, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + 0xfe2ce6e0, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + 0xa3014314, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + 0x4e0811a1, 21);
  a = b + rotl<u32>(a + (c ^ (b | ~d)) + m4 + 0xf7537e82, 6);
  d = a + rotl<u32>(d + (b ^ (a | ~c)) + 0xbd3af235, 10);
  c = d + rotl<u32>(c + (a ^ (d | ~b)) + m2 + 0x2ad7d2bb, 15);
  b = c + rotl<u32>(b + (d ^ (c | ~a)) + 0xeb86d391, 21);
  md5A = a + 0x67452301;
  md5B = b + 0xefcdab89;
  md5C = c + 0x98badcfe;
  md5D = d + 0x10325476;
}

// Four short messages at once, one per i32x4 lane (SIMD build only): word k of lane j at MSG + 16k + 4j (k = 0..4,
// then word 14 at k = 5); the digests come out as state words A, B, C, D of lane j at DIGESTS + 16k + 4j.
export const MSG = memory.data(6 * 16, 16);
export const DIGESTS = memory.data(4 * 16, 16);

/** Lays out the block of a message of at most 16 bytes at `p` as lane `lane` of MSG. */
export function md5ShortLane(lane: usize, p: usize, len: usize): void {
  shortWords(p, len);
  let q = MSG + (lane << 2);
  store<u32>(q, w0);
  store<u32>(q, w1, 16);
  store<u32>(q, w2, 32);
  store<u32>(q, w3, 48);
  store<u32>(q, w4, 64);
  store<u32>(q, w14, 80);
}

/** MD5 of the four messages laid out in MSG: the same 64 steps as md5Short on i32x4 (rotl as two shifts). */
export function md5Short4(): void {
  if (ASC_FEATURE_SIMD) {
    let m0 = v128.load(MSG), m1 = v128.load(MSG, 16), m2 = v128.load(MSG, 32), m3 = v128.load(MSG, 48);
    let m4 = v128.load(MSG, 64), m14 = v128.load(MSG, 80);
    let a = i32x4.splat(0x67452301), b = i32x4.splat(0xefcdab89), c = i32x4.splat(0x98badcfe), d = i32x4.splat(0x10325476);
    let t: v128;
    t = i32x4.add(i32x4.add(i32x4.add(a, v128.bitselect(c, d, b)), m0), i32x4.splat(-680876936));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 7), i32x4.shr_u(t, 25)));
    t = i32x4.add(i32x4.add(i32x4.add(d, v128.bitselect(b, c, a)), m1), i32x4.splat(-389564586));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 12), i32x4.shr_u(t, 20)));
    t = i32x4.add(i32x4.add(i32x4.add(c, v128.bitselect(a, b, d)), m2), i32x4.splat(606105819));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 17), i32x4.shr_u(t, 15)));
    t = i32x4.add(i32x4.add(i32x4.add(b, v128.bitselect(d, a, c)), m3), i32x4.splat(-1044525330));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 22), i32x4.shr_u(t, 10)));
    t = i32x4.add(i32x4.add(i32x4.add(a, v128.bitselect(c, d, b)), m4), i32x4.splat(-176418897));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 7), i32x4.shr_u(t, 25)));
    t = i32x4.add(i32x4.add(d, v128.bitselect(b, c, a)), i32x4.splat(1200080426));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 12), i32x4.shr_u(t, 20)));
    t = i32x4.add(i32x4.add(c, v128.bitselect(a, b, d)), i32x4.splat(-1473231341));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 17), i32x4.shr_u(t, 15)));
    t = i32x4.add(i32x4.add(b, v128.bitselect(d, a, c)), i32x4.splat(-45705983));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 22), i32x4.shr_u(t, 10)));
    t = i32x4.add(i32x4.add(a, v128.bitselect(c, d, b)), i32x4.splat(1770035416));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 7), i32x4.shr_u(t, 25)));
    t = i32x4.add(i32x4.add(d, v128.bitselect(b, c, a)), i32x4.splat(-1958414417));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 12), i32x4.shr_u(t, 20)));
    t = i32x4.add(i32x4.add(c, v128.bitselect(a, b, d)), i32x4.splat(-42063));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 17), i32x4.shr_u(t, 15)));
    t = i32x4.add(i32x4.add(b, v128.bitselect(d, a, c)), i32x4.splat(-1990404162));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 22), i32x4.shr_u(t, 10)));
    t = i32x4.add(i32x4.add(a, v128.bitselect(c, d, b)), i32x4.splat(1804603682));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 7), i32x4.shr_u(t, 25)));
    t = i32x4.add(i32x4.add(d, v128.bitselect(b, c, a)), i32x4.splat(-40341101));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 12), i32x4.shr_u(t, 20)));
    t = i32x4.add(i32x4.add(i32x4.add(c, v128.bitselect(a, b, d)), m14), i32x4.splat(-1502002290));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 17), i32x4.shr_u(t, 15)));
    t = i32x4.add(i32x4.add(b, v128.bitselect(d, a, c)), i32x4.splat(1236535329));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 22), i32x4.shr_u(t, 10)));
    t = i32x4.add(i32x4.add(i32x4.add(a, v128.bitselect(b, c, d)), m1), i32x4.splat(-165796510));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 5), i32x4.shr_u(t, 27)));
    t = i32x4.add(i32x4.add(d, v128.bitselect(a, b, c)), i32x4.splat(-1069501632));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 9), i32x4.shr_u(t, 23)));
    t = i32x4.add(i32x4.add(c, v128.bitselect(d, a, b)), i32x4.splat(643717713));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 14), i32x4.shr_u(t, 18)));
    t = i32x4.add(i32x4.add(i32x4.add(b, v128.bitselect(c, d, a)), m0), i32x4.splat(-373897302));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 20), i32x4.shr_u(t, 12)));
    t = i32x4.add(i32x4.add(a, v128.bitselect(b, c, d)), i32x4.splat(-701558691));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 5), i32x4.shr_u(t, 27)));
    t = i32x4.add(i32x4.add(d, v128.bitselect(a, b, c)), i32x4.splat(38016083));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 9), i32x4.shr_u(t, 23)));
    t = i32x4.add(i32x4.add(c, v128.bitselect(d, a, b)), i32x4.splat(-660478335));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 14), i32x4.shr_u(t, 18)));
    t = i32x4.add(i32x4.add(i32x4.add(b, v128.bitselect(c, d, a)), m4), i32x4.splat(-405537848));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 20), i32x4.shr_u(t, 12)));
    t = i32x4.add(i32x4.add(a, v128.bitselect(b, c, d)), i32x4.splat(568446438));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 5), i32x4.shr_u(t, 27)));
    t = i32x4.add(i32x4.add(i32x4.add(d, v128.bitselect(a, b, c)), m14), i32x4.splat(-1019803690));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 9), i32x4.shr_u(t, 23)));
    t = i32x4.add(i32x4.add(i32x4.add(c, v128.bitselect(d, a, b)), m3), i32x4.splat(-187363961));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 14), i32x4.shr_u(t, 18)));
    t = i32x4.add(i32x4.add(b, v128.bitselect(c, d, a)), i32x4.splat(1163531501));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 20), i32x4.shr_u(t, 12)));
    t = i32x4.add(i32x4.add(a, v128.bitselect(b, c, d)), i32x4.splat(-1444681467));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 5), i32x4.shr_u(t, 27)));
    t = i32x4.add(i32x4.add(i32x4.add(d, v128.bitselect(a, b, c)), m2), i32x4.splat(-51403784));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 9), i32x4.shr_u(t, 23)));
    t = i32x4.add(i32x4.add(c, v128.bitselect(d, a, b)), i32x4.splat(1735328473));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 14), i32x4.shr_u(t, 18)));
    t = i32x4.add(i32x4.add(b, v128.bitselect(c, d, a)), i32x4.splat(-1926607734));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 20), i32x4.shr_u(t, 12)));
    t = i32x4.add(i32x4.add(a, v128.xor(v128.xor(b, c), d)), i32x4.splat(-378558));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 4), i32x4.shr_u(t, 28)));
    t = i32x4.add(i32x4.add(d, v128.xor(v128.xor(a, b), c)), i32x4.splat(-2022574463));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 11), i32x4.shr_u(t, 21)));
    t = i32x4.add(i32x4.add(c, v128.xor(v128.xor(d, a), b)), i32x4.splat(1839030562));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 16), i32x4.shr_u(t, 16)));
    t = i32x4.add(i32x4.add(i32x4.add(b, v128.xor(v128.xor(c, d), a)), m14), i32x4.splat(-35309556));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 23), i32x4.shr_u(t, 9)));
    t = i32x4.add(i32x4.add(i32x4.add(a, v128.xor(v128.xor(b, c), d)), m1), i32x4.splat(-1530992060));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 4), i32x4.shr_u(t, 28)));
    t = i32x4.add(i32x4.add(i32x4.add(d, v128.xor(v128.xor(a, b), c)), m4), i32x4.splat(1272893353));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 11), i32x4.shr_u(t, 21)));
    t = i32x4.add(i32x4.add(c, v128.xor(v128.xor(d, a), b)), i32x4.splat(-155497632));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 16), i32x4.shr_u(t, 16)));
    t = i32x4.add(i32x4.add(b, v128.xor(v128.xor(c, d), a)), i32x4.splat(-1094730640));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 23), i32x4.shr_u(t, 9)));
    t = i32x4.add(i32x4.add(a, v128.xor(v128.xor(b, c), d)), i32x4.splat(681279174));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 4), i32x4.shr_u(t, 28)));
    t = i32x4.add(i32x4.add(i32x4.add(d, v128.xor(v128.xor(a, b), c)), m0), i32x4.splat(-358537222));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 11), i32x4.shr_u(t, 21)));
    t = i32x4.add(i32x4.add(i32x4.add(c, v128.xor(v128.xor(d, a), b)), m3), i32x4.splat(-722521979));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 16), i32x4.shr_u(t, 16)));
    t = i32x4.add(i32x4.add(b, v128.xor(v128.xor(c, d), a)), i32x4.splat(76029189));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 23), i32x4.shr_u(t, 9)));
    t = i32x4.add(i32x4.add(a, v128.xor(v128.xor(b, c), d)), i32x4.splat(-640364487));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 4), i32x4.shr_u(t, 28)));
    t = i32x4.add(i32x4.add(d, v128.xor(v128.xor(a, b), c)), i32x4.splat(-421815835));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 11), i32x4.shr_u(t, 21)));
    t = i32x4.add(i32x4.add(c, v128.xor(v128.xor(d, a), b)), i32x4.splat(530742520));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 16), i32x4.shr_u(t, 16)));
    t = i32x4.add(i32x4.add(i32x4.add(b, v128.xor(v128.xor(c, d), a)), m2), i32x4.splat(-995338651));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 23), i32x4.shr_u(t, 9)));
    t = i32x4.add(i32x4.add(i32x4.add(a, v128.xor(c, v128.or(b, v128.not(d)))), m0), i32x4.splat(-198630844));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 6), i32x4.shr_u(t, 26)));
    t = i32x4.add(i32x4.add(d, v128.xor(b, v128.or(a, v128.not(c)))), i32x4.splat(1126891415));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 10), i32x4.shr_u(t, 22)));
    t = i32x4.add(i32x4.add(i32x4.add(c, v128.xor(a, v128.or(d, v128.not(b)))), m14), i32x4.splat(-1416354905));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 15), i32x4.shr_u(t, 17)));
    t = i32x4.add(i32x4.add(b, v128.xor(d, v128.or(c, v128.not(a)))), i32x4.splat(-57434055));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 21), i32x4.shr_u(t, 11)));
    t = i32x4.add(i32x4.add(a, v128.xor(c, v128.or(b, v128.not(d)))), i32x4.splat(1700485571));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 6), i32x4.shr_u(t, 26)));
    t = i32x4.add(i32x4.add(i32x4.add(d, v128.xor(b, v128.or(a, v128.not(c)))), m3), i32x4.splat(-1894986606));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 10), i32x4.shr_u(t, 22)));
    t = i32x4.add(i32x4.add(c, v128.xor(a, v128.or(d, v128.not(b)))), i32x4.splat(-1051523));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 15), i32x4.shr_u(t, 17)));
    t = i32x4.add(i32x4.add(i32x4.add(b, v128.xor(d, v128.or(c, v128.not(a)))), m1), i32x4.splat(-2054922799));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 21), i32x4.shr_u(t, 11)));
    t = i32x4.add(i32x4.add(a, v128.xor(c, v128.or(b, v128.not(d)))), i32x4.splat(1873313359));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 6), i32x4.shr_u(t, 26)));
    t = i32x4.add(i32x4.add(d, v128.xor(b, v128.or(a, v128.not(c)))), i32x4.splat(-30611744));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 10), i32x4.shr_u(t, 22)));
    t = i32x4.add(i32x4.add(c, v128.xor(a, v128.or(d, v128.not(b)))), i32x4.splat(-1560198380));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 15), i32x4.shr_u(t, 17)));
    t = i32x4.add(i32x4.add(b, v128.xor(d, v128.or(c, v128.not(a)))), i32x4.splat(1309151649));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 21), i32x4.shr_u(t, 11)));
    t = i32x4.add(i32x4.add(i32x4.add(a, v128.xor(c, v128.or(b, v128.not(d)))), m4), i32x4.splat(-145523070));
    a = i32x4.add(b, v128.or(i32x4.shl(t, 6), i32x4.shr_u(t, 26)));
    t = i32x4.add(i32x4.add(d, v128.xor(b, v128.or(a, v128.not(c)))), i32x4.splat(-1120210379));
    d = i32x4.add(a, v128.or(i32x4.shl(t, 10), i32x4.shr_u(t, 22)));
    t = i32x4.add(i32x4.add(i32x4.add(c, v128.xor(a, v128.or(d, v128.not(b)))), m2), i32x4.splat(718787259));
    c = i32x4.add(d, v128.or(i32x4.shl(t, 15), i32x4.shr_u(t, 17)));
    t = i32x4.add(i32x4.add(b, v128.xor(d, v128.or(c, v128.not(a)))), i32x4.splat(-343485551));
    b = i32x4.add(c, v128.or(i32x4.shl(t, 21), i32x4.shr_u(t, 11)));
    v128.store(DIGESTS, i32x4.add(a, i32x4.splat(0x67452301)));
    v128.store(DIGESTS, i32x4.add(b, i32x4.splat(0xefcdab89)), 16);
    v128.store(DIGESTS, i32x4.add(c, i32x4.splat(0x98badcfe)), 32);
    v128.store(DIGESTS, i32x4.add(d, i32x4.splat(0x10325476)), 48);
  }
}
