// Native baseline for bench/fingerprint.bench.ts: the text kernel of assembly/tokenize.ts, assembly/feature-hash.ts
// (spec simhash-wasm/2), assembly/xxh3.ts and assembly/reducer.ts, 64-bit fingerprints with unit weights, in C,
// compiled by the bench at run time and run as a child process. Never part of the package. It shows how far the
// WebAssembly is from what this machine does with the same algorithm: 64-byte blocks turned into token masks,
// tokens read off the masks with ctz, the same hashes, per-bit counts. ASCII texts only (the bench keeps only
// those): the WebAssembly's code-point path is not ported, so each mode is its ASCII fast path.
//
// Builds: gcc -O3 -march=native (AVX-512 masks and gathers here); the same without the vectoriser; gcc for SSE4
// only (128-bit vectors, WebAssembly's width); and clang --target=wasm32 -msimd128, a WebAssembly module that
// the bench runs in the same engine as the library (exports `pass` and `heap`, no main; see wasm_pass below).
//
// usage: fingerprint <file> <whitespace|words|shingles> <reps>, where the file is a sequence of records
// [u32 little-endian byte length][bytes]  ->  one JSON object on stdout: the best and median of `reps` timed
// passes (each fingerprints every document once), in ms, and a checksum of the fingerprints that the bench
// compares with the library's (XOR over documents of fingerprint * (index + 1) mod 2^64).
#include <stdint.h>
#include <stddef.h>
#ifdef __wasm__
#define memcpy __builtin_memcpy
#define memset __builtin_memset
#include <wasm_simd128.h>
// No compiler-rt here: the 128-bit product XXH3's long path needs, from 32-bit halves (as WebAssembly does it).
__int128 __multi3(__int128 a, __int128 b) {
  uint64_t x = (uint64_t)a, y = (uint64_t)b;
  uint64_t xl = (uint32_t)x, xh = x >> 32, yl = (uint32_t)y, yh = y >> 32;
  uint64_t ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
  uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
  uint64_t lo = (mid << 32) | (uint32_t)ll, hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
  hi += (uint64_t)(a >> 64) * y + x * (uint64_t)(b >> 64);
  return (__int128)(((unsigned __int128)hi << 64) | lo);
}
#else
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#endif
#if defined(__AVX512BW__) || defined(__BMI__) || defined(__SSSE3__)
#include <immintrin.h>
#endif

#ifndef __wasm__
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
#endif

#define INLINE static inline __attribute__((always_inline))

INLINE uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

INLINE uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

INLINE uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// ---- XXH3-64 for inputs of 17 bytes and more (assembly/xxh3.ts xxh3Long and hashLong) ---------------------

#define PRIME32_1 0x9E3779B1ULL
#define PRIME32_2 0x85EBCA77ULL
#define PRIME32_3 0xC2B2AE3DULL
#define PRIME64_1 0x9E3779B185EBCA87ULL
#define PRIME64_2 0xC2B2AE3D27D4EB4FULL
#define PRIME64_3 0x165667B19E3779F9ULL
#define PRIME64_4 0x85EBCA77C2B2AE63ULL
#define PRIME64_5 0x27D4EB2F165667C5ULL
#define PRIME_MX1 0x165667919E3779F9ULL

static const uint8_t SECRET[192] __attribute__((aligned(64))) = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, 0x6d,
    0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0,
    0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, 0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0,
    0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b,
    0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac,
    0xd8, 0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51,
    0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, 0x34,
    0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, 0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49,
    0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8,
    0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b,
    0x40, 0x7e,
};
static uint8_t custom_secret[192] __attribute__((aligned(64))); // derived from a non-zero seed (long inputs only)
static uint64_t custom_seed = 0;

// C has the 64x64->128 multiply that the WebAssembly builds from 32-bit halves; the folded result is the same.
INLINE uint64_t mul_fold(uint64_t a, uint64_t b) {
  __uint128_t r = (__uint128_t)a * b;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
}

INLINE uint64_t avalanche3(uint64_t h) {
  h ^= h >> 37;
  h *= PRIME_MX1;
  return h ^ (h >> 32);
}

INLINE uint64_t mix16(const uint8_t *p, const uint8_t *s, uint64_t seed) {
  return mul_fold(rd64(p) ^ (rd64(s) + seed), rd64(p + 8) ^ (rd64(s + 8) - seed));
}

// The eight accumulators stay in an array: gcc turns each 64-byte stripe into a few vector multiplies.
INLINE void accumulate512(uint64_t *acc, const uint8_t *p, const uint8_t *s) {
  for (int i = 0; i < 8; i++) {
    uint64_t v = rd64(p + 8 * i);
    uint64_t k = v ^ rd64(s + 8 * i);
    acc[i ^ 1] += v;
    acc[i] += (k & 0xFFFFFFFF) * (k >> 32);
  }
}

static uint64_t hash_long(const uint8_t *p, size_t len, const uint8_t *s) {
  uint64_t acc[8] __attribute__((aligned(64))) = {PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3,
                                                  PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1};
  const size_t block_len = 1024; // 64-byte stripes x 16 per block with the 192-byte secret
  size_t blocks = (len - 1) / block_len;
  for (size_t n = 0; n < blocks; n++) {
    const uint8_t *b = p + n * block_len;
    for (size_t st = 0; st < 16; st++) accumulate512(acc, b + st * 64, s + st * 8);
    for (int i = 0; i < 8; i++) {
      uint64_t a = acc[i];
      a ^= a >> 47;
      a ^= rd64(s + 128 + 8 * i);
      acc[i] = a * PRIME32_1;
    }
  }
  size_t stripes = ((len - 1) - block_len * blocks) / 64;
  const uint8_t *b = p + blocks * block_len;
  for (size_t st = 0; st < stripes; st++) accumulate512(acc, b + st * 64, s + st * 8);
  accumulate512(acc, p + len - 64, s + 192 - 64 - 7);
  uint64_t result = (uint64_t)len * PRIME64_1;
  for (int i = 0; i < 4; i++)
    result += mul_fold(acc[2 * i] ^ rd64(s + 11 + 16 * i), acc[2 * i + 1] ^ rd64(s + 11 + 16 * i + 8));
  return avalanche3(result);
}

// Out of line, as in the WebAssembly: tokens over 16 bytes are rare.
__attribute__((noinline)) static uint64_t xxh3_long(const uint8_t *p, size_t len, uint64_t seed) {
  const uint8_t *s = SECRET;
  if (len <= 128) {
    uint64_t acc = (uint64_t)len * PRIME64_1;
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
    uint64_t acc = (uint64_t)len * PRIME64_1;
    for (size_t i = 0; i < 8; i++) acc += mix16(p + 16 * i, s + 16 * i, seed);
    uint64_t acc_end = mix16(p + len - 16, s + 136 - 17, seed);
    acc = avalanche3(acc);
    size_t rounds = len / 16;
    for (size_t i = 8; i < rounds; i++) acc_end += mix16(p + 16 * i, s + 16 * (i - 8) + 3, seed);
    return avalanche3(acc + acc_end);
  }
  if (seed != 0) {
    if (seed != custom_seed || rd64(custom_secret) == 0) {
      for (size_t i = 0; i < 192; i += 16) {
        uint64_t lo = rd64(SECRET + i) + seed, hi = rd64(SECRET + i + 8) - seed;
        memcpy(custom_secret + i, &lo, 8);
        memcpy(custom_secret + i + 8, &hi, 8);
      }
      custom_seed = seed;
    }
    s = custom_secret;
  }
  return hash_long(p, len, s);
}

// ---- spec 2's feature and shingle hashes (assembly/feature-hash.ts) ---------------------------------------

INLINE uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

INLINE uint64_t key(uint64_t len, uint64_t seed) { return len * PRIME64_1 + seed * PRIME64_2; }

// An unaligned load that gcc may turn into a vector gather (it does not for memcpy).
typedef uint64_t u64_unaligned __attribute__((aligned(1), may_alias));

// featureHash (seed 0) of a feature of up to 16 bytes, without a branch: both of spec 2's formulas are computed
// and one is selected with masks (the WebAssembly selects among the 0..8-byte ones and branches at 8), so that
// gcc vectorises the loop over a document's tokens. Two 8-byte loads give every byte the formulas read: the
// first and last four, and below 4 bytes b[0], b[len/2] and b[len-1]. They read up to 8 bytes before p and 7
// past its end (values that are not selected): every buffer here has 64 bytes of slack on both sides.
INLINE uint64_t short_hash(const uint8_t *p, uint64_t len) {
  uint64_t a = *(const u64_unaligned *)p, b = *(const u64_unaligned *)(p + len - 8);
  uint64_t c1 = a & 0xFF, c2 = (a >> (8 * ((len >> 1) & 7))) & 0xFF, c3 = b >> 56;
  uint64_t upto3 = (c1 | (c2 << 8) | (c3 << 16)) & -(uint64_t)(len != 0);
  uint64_t four = -(uint64_t)(len >= 4), nine = -(uint64_t)(len > 8);
  uint64_t upto8 = (((a << 32) | (b >> 32)) & four) | (upto3 & ~four);
  uint64_t upto16 = (a * PRIME64_3) ^ rotl64(b, 31);
  return mix(((upto16 & nine) | (upto8 & ~nine)) ^ key(len, 0));
}

// shingleHash of three word hashes: x = rotl(x, 21) ^ h over the window, then finished.
INLINE uint64_t shingle3(uint64_t a, uint64_t b, uint64_t c) {
  return mix((rotl64(rotl64(a, 21) ^ b, 21) ^ c) ^ key(24, 0));
}

// ---- the reducer: per-bit counts of unit-weight hashes ------------------------------------------------------
//
// With AVX-512BW a hash is itself a 64-lane byte mask: one masked byte subtract of -1 adds it to 64 byte
// counters, widened into 32-bit counters every 255 hashes; the fingerprint is one unsigned compare of the counts
// with n / 2. Over the whole kernel that measured 3-10 % faster here than the WebAssembly's bit-sliced carry-save
// planes (REDUCER_PLANES below, kept for other targets and for comparison): for documents of a few hundred
// features, their padding to whole blocks and the final bit-sliced sum of the lanes cost more than the two
// instructions per hash they save.

#if defined(__AVX512BW__) && !defined(REDUCER_PLANES)
#define REDUCER "avx512 byte counters"

typedef struct {
  __m512i c8;     // count of one bits per fingerprint bit since the last widening (< 255)
  __m512i c32[4]; // the widened counts, 32 bits each
  uint32_t n, since;
} Reducer;

INLINE void red_begin(Reducer *r) {
  r->c8 = _mm512_setzero_si512();
  for (int i = 0; i < 4; i++) r->c32[i] = _mm512_setzero_si512();
  r->n = r->since = 0;
}

INLINE void red_widen(Reducer *r) {
  for (int i = 0; i < 4; i++)
    r->c32[i] = _mm512_add_epi32(r->c32[i], _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(r->c8, i)));
  r->c8 = _mm512_setzero_si512();
  r->n += r->since;
  r->since = 0;
}

// Two chains of masked subtracts: each is a one-cycle dependency, and the mask moves can overlap them.
INLINE void red_add_many(Reducer *r, const uint64_t *h, size_t n) {
  const __m512i minus1 = _mm512_set1_epi8(-1);
  while (n) {
    size_t k = 255 - r->since;
    if (k > n) k = n;
    __m512i c = r->c8, d = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 2 <= k; i += 2) {
      c = _mm512_mask_sub_epi8(c, (__mmask64)h[i], c, minus1);
      d = _mm512_mask_sub_epi8(d, (__mmask64)h[i + 1], d, minus1);
    }
    if (i < k) c = _mm512_mask_sub_epi8(c, (__mmask64)h[i], c, minus1);
    r->c8 = _mm512_add_epi8(c, d);
    r->since += (uint32_t)k;
    h += k;
    n -= k;
    if (r->since == 255) red_widen(r);
  }
}

// Bit i is set where count > n / 2 (counter 2 * count - n > 0); no features: every count is 0, so 0.
INLINE uint64_t red_end(Reducer *r) {
  if (r->n == 0) return _mm512_cmpgt_epu8_mask(r->c8, _mm512_set1_epi8((char)(r->since >> 1)));
  red_widen(r);
  __m512i t = _mm512_set1_epi32((int)(r->n >> 1));
  uint64_t fp = 0;
  for (int i = 0; i < 4; i++) fp |= (uint64_t)_mm512_cmpgt_epu32_mask(r->c32[i], t) << (16 * i);
  return fp;
}

#else
#define REDUCER "carry-save planes"
// assembly/reducer.ts's SIMD path in GNU C vectors: LANES independent streams of hashes (2, one v128, in the
// WebAssembly), folded 16 vectors at a time into ones/twos/fours/eights planes with the sixteens rippled into
// the levels above; at the end the lanes are added bit-sliced and the sum compared with n / 2 from the top level
// down. 4 and 8 lanes (-DLANES=) measured within a few % of 2 here, some modes faster, some slower.
#ifndef LANES
#define LANES 2
#endif
#define LEVELS 27
typedef uint64_t lanes_t __attribute__((vector_size(8 * LANES)));

typedef struct {
  lanes_t planes[4 + LEVELS];
  uint64_t features;
  int top; // levels from `top` up are zero
} Reducer;

INLINE void red_begin(Reducer *r) {
  for (int l = 0; l < 4 + LEVELS; l++) r->planes[l] = (lanes_t){0};
  r->features = 0;
  r->top = 4;
}

INLINE lanes_t load_lanes(const uint64_t *p) {
  lanes_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

INLINE int any_lane(lanes_t v) {
  uint64_t o = 0;
  for (int i = 0; i < LANES; i++) o |= v[i];
  return o != 0;
}

// (high, low) = low + b + c, as carry-save.
#define CSA(high, low, b, c)                                                                                \
  do {                                                                                                      \
    lanes_t b_ = (b), c_ = (c), u_ = low ^ b_;                                                              \
    high = (low & b_) | (u_ & c_);                                                                          \
    low = u_ ^ c_;                                                                                          \
  } while (0)

static void fold(Reducer *r, const uint64_t *h, size_t blocks) {
  lanes_t ones = r->planes[0], twos = r->planes[1], fours = r->planes[2], eights = r->planes[3];
  for (size_t k = 0; k < blocks; k++, h += 16 * LANES) {
    lanes_t twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, carry;
#define W(i) load_lanes(h + (i) * LANES)
    CSA(twos_a, ones, W(0), W(1));
    CSA(twos_b, ones, W(2), W(3));
    CSA(fours_a, twos, twos_a, twos_b);
    CSA(twos_a, ones, W(4), W(5));
    CSA(twos_b, ones, W(6), W(7));
    CSA(fours_b, twos, twos_a, twos_b);
    CSA(eights_a, fours, fours_a, fours_b);
    CSA(twos_a, ones, W(8), W(9));
    CSA(twos_b, ones, W(10), W(11));
    CSA(fours_a, twos, twos_a, twos_b);
    CSA(twos_a, ones, W(12), W(13));
    CSA(twos_b, ones, W(14), W(15));
    CSA(fours_b, twos, twos_a, twos_b);
    CSA(eights_b, fours, fours_a, fours_b);
    CSA(carry, eights, eights_a, eights_b);
#undef W
    for (int l = 4; any_lane(carry); l++) {
      lanes_t level = r->planes[l];
      r->planes[l] = level ^ carry;
      carry &= level;
      if (l >= r->top) r->top = l + 1;
    }
  }
  r->planes[0] = ones;
  r->planes[1] = twos;
  r->planes[2] = fours;
  r->planes[3] = eights;
}

// The hashes are already in an array: whole blocks are folded where they are, the rest padded with zero words
// (which add no one bits).
INLINE void red_add_many(Reducer *r, const uint64_t *h, size_t n) {
  r->features += n;
  size_t full = n / (16 * LANES), rest = n % (16 * LANES);
  fold(r, h, full);
  if (rest) {
    uint64_t tail[16 * LANES] = {0};
    memcpy(tail, h + full * 16 * LANES, rest * 8);
    fold(r, tail, 1);
  }
}

INLINE uint64_t red_end(Reducer *r) {
  uint64_t n = r->features;
  if (n == 0) return 0;
  int levels = r->top + 4; // room for the carries of up to 16 lanes
  uint64_t sum[4 + LEVELS + 4] = {0};
  for (int j = 0; j < LANES; j++) {
    uint64_t carry = 0;
    for (int l = 0; l < levels; l++) {
      uint64_t a = l < r->top ? r->planes[l][j] : 0, x = sum[l] ^ a;
      uint64_t c = (sum[l] & a) | (x & carry);
      sum[l] = x ^ carry;
      carry = c;
    }
  }
  uint64_t t = n >> 1, gt = 0, eq = t >> levels ? 0 : ~0ULL; // t above every count: no bit is set
  for (int l = levels - 1; l >= 0; l--) {
    if ((t >> l) & 1) eq &= sum[l];
    else {
      gt |= eq & sum[l];
      eq &= ~sum[l];
    }
  }
  return gt;
}
#endif

// ---- tokens -------------------------------------------------------------------------------------------------

enum { WHITESPACE, WORDS, SHINGLES };

// Token-byte masks of 64 bytes (the last block of a document may be shorter: n < 64 bytes, the rest zero).
#if defined(__AVX512BW__)
INLINE __m512i load_block(const uint8_t *p, size_t n) {
  return n >= 64 ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi8(((__mmask64)1 << n) - 1, p);
}

// Separators " \t\n\r\f" by their low nibble: the one separator with that nibble, or 0 which no byte with that
// nibble equals (the WebAssembly's swizzle, on four 16-byte lanes at once).
INLINE uint64_t whitespace_mask(const uint8_t *p, size_t n) {
  const __m512i table = _mm512_broadcast_i32x4(_mm_setr_epi8(0x20, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 0, 12, 13, 0, 0));
  __m512i v = load_block(p, n);
  __m512i sep = _mm512_shuffle_epi8(table, _mm512_and_si512(v, _mm512_set1_epi8(0x0F)));
  return ~(uint64_t)_mm512_cmpeq_epi8_mask(sep, v);
}

// ASCII letters and digits. The block is stored at q with 0x20 set in every byte: that lower-cases the letters
// and leaves the digits (0x30..0x39) as they are, and only word bytes are ever hashed.
INLINE uint64_t word_mask(const uint8_t *p, size_t n, uint8_t *q) {
  __m512i v = load_block(p, n);
  __m512i lower = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
  _mm512_storeu_si512(q, lower);
  uint64_t letter = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(lower, _mm512_set1_epi8('a')), _mm512_set1_epi8(26));
  uint64_t digit = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
  return letter | digit;
}
#elif defined(__wasm_simd128__) || defined(__SSSE3__)
// 128-bit vectors, the width WebAssembly's SIMD has: the same masks from four 16-byte lanes per block, each turned
// into 16 mask bits by a byte movemask (WebAssembly's i8x16.bitmask). The few operations, in each one's names.
// Letters and digits by a signed compare after a shift of the range to the bottom of the signed bytes: SSE has no
// unsigned byte compare. Lookup indices stay below 16, where pshufb and i8x16.swizzle agree.
#ifdef __wasm_simd128__
typedef v128_t v16;
#define V_LOAD(p) wasm_v128_load(p)
#define V_STORE(p, v) wasm_v128_store(p, v)
#define V_SPLAT(c) wasm_i8x16_splat((char)(c))
#define V_AND wasm_v128_and
#define V_OR wasm_v128_or
#define V_SUB wasm_i8x16_sub
#define V_EQ wasm_i8x16_eq
#define V_LT wasm_i8x16_lt
#define V_LOOKUP wasm_i8x16_swizzle
#define V_MASK(v) ((uint64_t)wasm_i8x16_bitmask(v))
#define V_SEPARATORS wasm_i8x16_make(0x20, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 0, 12, 13, 0, 0)
#else
typedef __m128i v16;
#define V_LOAD(p) _mm_loadu_si128((const __m128i *)(p))
#define V_STORE(p, v) _mm_storeu_si128((__m128i *)(p), v)
#define V_SPLAT(c) _mm_set1_epi8((char)(c))
#define V_AND _mm_and_si128
#define V_OR _mm_or_si128
#define V_SUB _mm_sub_epi8
#define V_EQ _mm_cmpeq_epi8
#define V_LT _mm_cmplt_epi8
#define V_LOOKUP _mm_shuffle_epi8
#define V_MASK(v) ((uint64_t)(uint16_t)_mm_movemask_epi8(v))
#define V_SEPARATORS _mm_setr_epi8(0x20, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 0, 12, 13, 0, 0)
#endif

// A block's four lanes; the last block of a document (n < 64) from a zero-padded copy.
INLINE void load_lanes16(const uint8_t *p, size_t n, v16 v[4]) {
  if (n >= 64) {
    for (int i = 0; i < 4; i++) v[i] = V_LOAD(p + 16 * i);
    return;
  }
  uint8_t b[64] __attribute__((aligned(16))) = {0};
  memcpy(b, p, n);
  for (int i = 0; i < 4; i++) v[i] = V_LOAD(b + 16 * i);
}

INLINE uint64_t whitespace_mask(const uint8_t *p, size_t n) {
  v16 v[4];
  load_lanes16(p, n, v);
  uint64_t sep = 0;
  for (int i = 0; i < 4; i++) sep |= V_MASK(V_EQ(V_LOOKUP(V_SEPARATORS, V_AND(v[i], V_SPLAT(0x0F))), v[i])) << (16 * i);
  return ~sep;
}

INLINE uint64_t word_mask(const uint8_t *p, size_t n, uint8_t *q) {
  v16 v[4];
  load_lanes16(p, n, v);
  uint64_t m = 0;
  for (int i = 0; i < 4; i++) {
    v16 lower = V_OR(v[i], V_SPLAT(0x20));
    V_STORE(q + 16 * i, lower);
    v16 letter = V_LT(V_SUB(lower, V_SPLAT('a' + 128)), V_SPLAT(-128 + 26));
    v16 digit = V_LT(V_SUB(v[i], V_SPLAT('0' + 128)), V_SPLAT(-128 + 10));
    m |= V_MASK(V_OR(letter, digit)) << (16 * i);
  }
  return m;
}
#else
// Other targets: byte loops over a zero-padded copy, which never read past the document.
INLINE uint64_t whitespace_mask(const uint8_t *p, size_t n) {
  uint8_t b[64] = {0};
  memcpy(b, p, n < 64 ? n : 64);
  uint64_t m = 0;
  for (int i = 0; i < 64; i++) {
    uint8_t c = b[i];
    m |= (uint64_t)!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') << i;
  }
  return m;
}

INLINE uint64_t word_mask(const uint8_t *p, size_t n, uint8_t *q) {
  uint8_t b[64] = {0};
  memcpy(b, p, n < 64 ? n : 64);
  uint64_t m = 0;
  for (int i = 0; i < 64; i++) {
    uint8_t c = b[i], lower = c | 0x20;
    q[i] = lower;
    m |= (uint64_t)((uint8_t)(lower - 'a') < 26 || (uint8_t)(c - '0') < 10) << i;
  }
  return m;
}
#endif

// ctz, defined for 0 (the flattening below runs past the last set bit). gcc turns `x ? ctz(x) : 64` into a branch.
#if defined(__BMI__)
INLINE uint32_t tz(uint64_t x) { return (uint32_t)_tzcnt_u64(x); }
#else
INLINE uint32_t tz(uint64_t x) { return x ? (uint32_t)__builtin_ctzll(x) : 64; }
#endif

// The set bits of `bits` as offsets base + i, appended at out[n]; returns the new count. The first FLATTEN are
// written whether set or not (the count says how many are real): the number of tokens in a block is not
// predictable, and a loop that stops at the last one mispredicts once per block.
#define FLATTEN 16
INLINE size_t flatten(uint64_t bits, uint32_t base, uint32_t *out, size_t n) {
  size_t count = (size_t)__builtin_popcountll(bits);
  uint32_t *o = out + n;
  for (int i = 0; i < FLATTEN; i++, bits &= bits - 1) o[i] = base + tz(bits);
  if (__builtin_expect(count > FLATTEN, 0))
    for (o += FLATTEN; bits; bits &= bits - 1) *o++ = base + tz(bits);
  return n + count;
}

// A document's tokens, hashes and shingle hashes (room for one per byte, and FLATTEN more).
typedef struct {
  uint32_t *starts, *ends;
  uint64_t *hashes, *shingles;
  uint8_t *folded; // words: the case-folded text, at the text's offsets
} Work;

// Restrict-qualified, and apart from the rare long tokens: gcc vectorises this loop (gathers for the loads).
INLINE uint32_t hash_tokens(const uint8_t *restrict text, const uint32_t *restrict starts,
                            const uint32_t *restrict ends, uint64_t *restrict out, size_t n) {
  uint32_t longest = 0;
  for (size_t k = 0; k < n; k++) {
    uint32_t len = ends[k] - starts[k];
    out[k] = short_hash(text + starts[k], len);
    longest = len > longest ? len : longest;
  }
  return longest;
}

__attribute__((noinline)) static void hash_long_tokens(const uint8_t *text, const Work *w, size_t n) {
  for (size_t k = 0; k < n; k++) {
    uint32_t len = w->ends[k] - w->starts[k];
    if (len > 16) w->hashes[k] = xxh3_long(text + w->starts[k], len, 0);
  }
}

// One document's fingerprint; `mode` is a constant in each caller, so each mode gets its own loops. The whole
// document is tokenized first (the WebAssembly hashes each token as it is found, and queues 128 words for
// shingles), then hashed, then reduced: each loop is then free of the others' branches, and the hash loops are
// vectorised.
INLINE uint64_t fingerprint(int mode, const uint8_t *p, size_t len, const Work *w) {
  const uint8_t *text = mode == WHITESPACE ? p : w->folded;
  size_t starts = 0, ends = 0;
  uint64_t carry = 0; // the previous block's last byte was a token byte
  for (size_t at = 0; at < len; at += 64) {
    size_t n = len - at;
    uint64_t m = mode == WHITESPACE ? whitespace_mask(p + at, n) : word_mask(p + at, n, w->folded + at);
    if (n < 64) m &= ((uint64_t)1 << n) - 1; // bits past the end are 0: an open token ends with the text
    // A token starts where a token byte follows a separator and ends where a separator follows a token byte:
    // over the document the k-th start and the k-th end are one token.
    uint64_t shifted = (m << 1) | carry;
    carry = m >> 63;
    starts = flatten(m & ~shifted, (uint32_t)at, w->starts, starts);
    ends = flatten(~m & shifted, (uint32_t)at, w->ends, ends);
  }
  if (starts > ends) w->ends[ends++] = (uint32_t)len;
  if (hash_tokens(text, w->starts, w->ends, w->hashes, starts) > 16) hash_long_tokens(text, w, starts);
  Reducer red;
  red_begin(&red);
  if (mode != SHINGLES) {
    red_add_many(&red, w->hashes, starts);
  } else if (starts >= 3) {
    const uint64_t *h = w->hashes;
    for (size_t k = 0; k + 2 < starts; k++) w->shingles[k] = shingle3(h[k], h[k + 1], h[k + 2]);
    red_add_many(&red, w->shingles, starts - 2);
  } else if (starts > 0) {
    // A document with fewer words than one shingle is one shingle of all of them.
    const uint64_t *h = w->hashes;
    uint64_t one = starts == 1 ? mix(h[0] ^ key(8, 0)) : mix((rotl64(h[0], 21) ^ h[1]) ^ key(16, 0));
    red_add_many(&red, &one, 1);
  }
  return red_end(&red);
}

typedef struct {
  const uint8_t *text;
  size_t len;
} Doc;

#define PASS(name, mode)                                                                                    \
  __attribute__((noinline)) static void name(const Doc *docs, size_t n, const Work *w, uint64_t *out) {     \
    for (size_t d = 0; d < n; d++) out[d] = fingerprint(mode, docs[d].text, docs[d].len, w);               \
  }
PASS(pass_whitespace, WHITESPACE)
PASS(pass_words, WORDS)
PASS(pass_shingles, SHINGLES)

#ifdef __wasm__
// The WebAssembly module's entry: the bench lays out Doc records, a Work and the output in its memory (from
// `heap` on) and calls one pass per timing, fed from the same JS strings as the library.
__attribute__((export_name("pass"))) void wasm_pass(int mode, const Doc *docs, size_t n, const Work *w, uint64_t *out) {
  if (mode == 0) pass_whitespace(docs, n, w, out);
  else if (mode == 1) pass_words(docs, n, w, out);
  else pass_shingles(docs, n, w, out);
}
extern unsigned char __heap_base;
__attribute__((export_name("heap"))) size_t heap(void) { return (size_t)&__heap_base; }
#else
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: fingerprint <file> <whitespace|words|shingles> <reps>\n");
    return 2;
  }
  const char *mode = argv[2];
  void (*pass)(const Doc *, size_t, const Work *, uint64_t *) = !strcmp(mode, "whitespace") ? pass_whitespace
                                                               : !strcmp(mode, "words")      ? pass_words
                                                               : !strcmp(mode, "shingles")   ? pass_shingles
                                                                                             : 0;
  int reps = atoi(argv[3]);
  if (!pass || reps < 1) {
    fprintf(stderr, "fingerprint: bad mode or reps\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  // The texts stay where the records put them, between their 4-byte lengths, with 64 zero bytes before and
  // after: the hashes' out-of-token reads stay inside the buffer.
  uint8_t *data = calloc((size_t)size + 128, 1);
  if (!data || fread(data + 64, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "fingerprint: cannot read %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  size_t count = 0, bytes = 0, longest = 0;
  for (size_t at = 64; at + 4 <= (size_t)size + 64; count++) {
    at += 4 + rd32(data + at);
    if (at > (size_t)size + 64) {
      fprintf(stderr, "fingerprint: truncated record %zu\n", count);
      return 1;
    }
  }
  Doc *docs = malloc(sizeof(Doc) * (count ? count : 1));
  uint64_t *out = malloc(8 * (count ? count : 1));
  double *times = malloc(sizeof(double) * (size_t)reps);
  if (!docs || !out || !times) return 1;
  for (size_t at = 64, d = 0; d < count; d++) {
    docs[d].len = rd32(data + at);
    docs[d].text = data + at + 4;
    at += 4 + docs[d].len;
    bytes += docs[d].len;
    if (docs[d].len > longest) longest = docs[d].len;
  }
  size_t room = longest + FLATTEN + 64;
  Work w = {malloc(4 * room), malloc(4 * room), malloc(8 * room), malloc(8 * room), calloc(longest + 192, 1)};
  if (!w.starts || !w.ends || !w.hashes || !w.shingles || !w.folded) return 1;
  w.folded += 64; // slack before, as for the texts
  pass(docs, count, &w, out); // warm-up
  for (int r = 0; r < reps; r++) {
    double t0 = now_ms();
    pass(docs, count, &w, out);
    __asm__ volatile("" ::: "memory");
    times[r] = now_ms() - t0;
  }
  qsort(times, (size_t)reps, sizeof(double), cmp);
  uint64_t checksum = 0;
  for (size_t d = 0; d < count; d++) checksum ^= out[d] * (uint64_t)(d + 1);
  printf("{\"mode\":\"%s\",\"documents\":%zu,\"bytes\":%zu,\"best_ms\":%.6f,\"median_ms\":%.6f,"
         "\"checksum\":\"%016llx\",\"reducer\":\"%s\"}\n",
         mode, count, bytes, times[0], times[reps / 2], (unsigned long long)checksum, REDUCER);
  return 0;
}

#endif
