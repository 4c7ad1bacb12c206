// Native baseline for bench/hamming.bench.ts: the same one-query scans as assembly/hamming.ts, in C, compiled
// by the bench at run time (gcc -O3 -march=native) and run as a child process. Never part of the package.
// Data: the bench's xorshift32 generator (bench/corpus.ts randomWords), so both sides scan the same words; the
// printed checksums let the bench check that. With clang --target=wasm32 it builds a WebAssembly module instead
// (no main; the scans exported, see the end), which the bench runs in the same engine as the library.
//
// usage: hamming <n> <passes> <reps> <k> <seed>  ->  one JSON object on stdout: for each scan the median and
// best of `reps` timed samples, in ms per pass over n (a sample runs `passes` passes, so small n stays in cache)
#include <stddef.h>
#include <stdint.h>
#ifdef __wasm__
#define memcpy __builtin_memcpy
#else
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#endif

#ifndef __wasm__
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
#endif

// The plain loops, as gcc -O3 -march=native compiles them (vectorised where the target has a vector popcount).
__attribute__((noinline)) void distances(const uint64_t *fps, size_t n, uint64_t q, uint8_t *out) {
  for (size_t i = 0; i < n; i++) out[i] = (uint8_t)__builtin_popcountll(fps[i] ^ q);
}

__attribute__((noinline)) size_t count_within(const uint64_t *fps, size_t n, uint64_t q, int k) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += __builtin_popcountll(fps[i] ^ q) <= k;
  return c;
}

__attribute__((noinline)) size_t within(const uint64_t *fps, size_t n, uint64_t q, int k, uint32_t *out) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (__builtin_popcountll(fps[i] ^ q) <= k) out[c++] = (uint32_t)i;
  return c;
}

// The loops of assembly/hamming.ts, scalar popcnt only (no vectoriser): what a WebAssembly engine could match
// instruction for instruction.
#ifdef __clang__
#define NOVEC __attribute__((noinline)) // clang has no per-function switch; the wasm32 build compares both loops
#else
#define NOVEC __attribute__((noinline, optimize("no-tree-vectorize")))
#endif
#define D64(p, q) ((uint64_t)__builtin_popcountll(*(p) ^ (q)))

NOVEC void distances_scalar(const uint64_t *fps, size_t n, uint64_t q, uint8_t *out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t *p = fps + i;
    uint64_t packed = D64(p, q) | D64(p + 1, q) << 8 | D64(p + 2, q) << 16 | D64(p + 3, q) << 24 |
                      D64(p + 4, q) << 32 | D64(p + 5, q) << 40 | D64(p + 6, q) << 48 | D64(p + 7, q) << 56;
    memcpy(out + i, &packed, 8);
  }
  for (; i < n; i++) out[i] = (uint8_t)D64(fps + i, q);
}

// Eight distances a byte each in one word, (127 - k) added to every byte at once, and one popcount of the bytes'
// bit 7 counts the misses (assembly/hamming.ts, hammingCount64). Here too it beat adding each (d + off) >> 7: 1.0-1.24x.
static inline uint64_t distances4(const uint64_t *p, uint64_t q) {
  return D64(p, q) | D64(p + 1, q) << 8 | D64(p + 2, q) << 16 | D64(p + 3, q) << 24;
}

NOVEC size_t count_scalar(const uint64_t *fps, size_t n, uint64_t q, int k) {
  uint64_t off = (uint64_t)(127 - k) * 0x0101010101010101ULL, misses = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t *p = fps + i;
    misses += (uint64_t)__builtin_popcountll(((distances4(p, q) | distances4(p + 4, q) << 32) + off) &
                                             0x8080808080808080ULL);
  }
  for (; i < n; i++) misses += (D64(fps + i, q) + (uint64_t)(127 - k)) >> 7;
  return n - misses;
}

NOVEC size_t within_scalar(const uint64_t *fps, size_t n, uint64_t q, int k, uint32_t *out) {
  uint64_t off = 127 - k;
  size_t c = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint64_t *p = fps + i;
    uint64_t e0 = D64(p, q), e1 = D64(p + 1, q), e2 = D64(p + 2, q), e3 = D64(p + 3, q);
    if ((((e0 + off) & (e1 + off) & (e2 + off) & (e3 + off)) & 128) == 0) {
      if ((int)e0 <= k) out[c++] = (uint32_t)i;
      if ((int)e1 <= k) out[c++] = (uint32_t)i + 1;
      if ((int)e2 <= k) out[c++] = (uint32_t)i + 2;
      if ((int)e3 <= k) out[c++] = (uint32_t)i + 3;
    }
  }
  for (; i < n; i++)
    if ((int)D64(fps + i, q) <= k) out[c++] = (uint32_t)i;
  return c;
}

#ifdef __wasm__
// The WebAssembly module's entries: the bench copies the words to `heap()` and calls these.
__attribute__((export_name("distances"))) void wasm_distances(const uint64_t *f, size_t n, uint64_t q, uint8_t *o) {
  distances(f, n, q, o);
}
__attribute__((export_name("distancesScalar"))) void wasm_distances_scalar(const uint64_t *f, size_t n, uint64_t q,
                                                                            uint8_t *o) {
  distances_scalar(f, n, q, o);
}
__attribute__((export_name("count"))) size_t wasm_count(const uint64_t *f, size_t n, uint64_t q, int k) {
  return count_within(f, n, q, k);
}
__attribute__((export_name("countScalar"))) size_t wasm_count_scalar(const uint64_t *f, size_t n, uint64_t q, int k) {
  return count_scalar(f, n, q, k);
}
extern unsigned char __heap_base;
__attribute__((export_name("heap"))) size_t heap(void) { return (size_t)&__heap_base; }
#else
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define TIME(name, expr)                                                                                    \
  do {                                                                                                      \
    for (int w = 0; w < 2; w++) sink += (uint64_t)(expr);                                                   \
    for (int r = 0; r < reps; r++) {                                                                        \
      double t0 = now_ms();                                                                                 \
      for (int pass = 0; pass < passes; pass++) {                                                           \
        __asm__ volatile("" ::: "memory"); /* the scans are pure: keep gcc from running one pass only */  \
        sink += (uint64_t)(expr);                                                                           \
      }                                                                                                     \
      times[r] = (now_ms() - t0) / passes;                                                                  \
    }                                                                                                       \
    qsort(times, reps, sizeof(double), cmp);                                                                \
    printf("%s\"%s\":{\"median\":%.6f,\"best\":%.6f}", first ? "" : ",", name, times[reps / 2], times[0]);  \
    first = 0;                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: hamming <n> <passes> <reps> <k> <seed>\n");
    return 2;
  }
  size_t n = strtoull(argv[1], 0, 10);
  int passes = atoi(argv[2]);
  int reps = atoi(argv[3]);
  int k = atoi(argv[4]);
  uint32_t x = (uint32_t)strtoul(argv[5], 0, 10);
  if (!x) x = 1;
  uint64_t *fps = aligned_alloc(64, (n * 8 + 63) & ~(size_t)63);
  uint8_t *out = aligned_alloc(64, (n + 63) & ~(size_t)63);
  uint32_t *idx = malloc(n * 4);
  double *times = malloc(sizeof(double) * (reps > 0 ? (size_t)reps : 1));
  if (!fps || !out || !idx || !times || passes < 1 || reps < 1) return 1;
  uint32_t *u32 = (uint32_t *)fps;
  for (size_t i = 0; i < 2 * n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    u32[i] = x;
  }
  const uint64_t q = 0x0123456789abcdefULL;
  // The bench plants the same three hits at distance 2 (in a 10^7 array; a shorter one is its prefix).
  size_t at[3] = {17, 5000000, 9999997};
  for (int i = 0; i < 3; i++)
    if (at[i] < n) fps[at[i]] = q ^ 5;
  uint64_t sink = 0;
  int first = 1;
  printf("{");
  TIME("distances", (distances(fps, n, q, out), out[n / 3]));
  TIME("distancesScalar", (distances_scalar(fps, n, q, out), out[n / 3]));
  TIME("count", count_within(fps, n, q, k));
  TIME("countScalar", count_scalar(fps, n, q, k));
  TIME("within", within(fps, n, q, k, idx));
  TIME("withinScalar", within_scalar(fps, n, q, k, idx));
  uint64_t sum = 0;
  distances(fps, n, q, out);
  for (size_t i = 0; i < n; i++) sum += out[i];
  printf(",\"distanceSum\":%llu,\"hits\":%zu,\"sink\":%llu}\n", (unsigned long long)sum, count_within(fps, n, q, k),
         (unsigned long long)(sink & 1));
  return 0;
}
#endif
