// The memory layout that FingerprintIndex (fingerprint-index.ts) writes and its kernels
// (assembly/fingerprint-index.ts) read, shared by both sides: this file is written in the subset of TypeScript
// that AssemblyScript also compiles, and the kernels import it. The module re-exports these values
// (assembly/simhash.ts) and test/runtime/layout.test.ts checks them against this file.

/** The largest probe radius: the kernels keep the flipped bit positions of a probe in a buffer of this size. */
export const MAX_RADIUS = 32;

// Index header: u32 fields, by field number.
/** Words per fingerprint (1 or 2). */
export const H_WORDS = 0;
/** Table count; 0 while the index answers by linear scan. */
export const H_TABLES = 1;
/** Directory bits d: each table's directory has 2^d + 1 offsets. */
export const H_DIR_BITS = 2;
/** Tail bits kept beside each id (16 or 32). */
export const H_TAIL_BITS = 3;
/** Entries in the tables (the sorted part). */
export const H_SORTED = 4;
/** Slots: sorted plus buffered. */
export const H_SLOTS = 5;
/** Pointer to the master array of fingerprints, by slot. */
export const H_MASTER = 6;
/** Pointer to the tombstone bitmap. */
export const H_DEAD = 7;
/** Pointer to the table descriptors. */
export const H_DESCRIPTORS = 8;
/** 1 when any slot is dead. */
export const H_ANY_DEAD = 9;
export const HEADER_BYTES = 64;

// Table descriptor, DESCRIPTOR_BYTES each, by byte offset. Segments (u32 each, start << 8 | length) describe
// the permuted key, leading bits first, each inside one 64-bit word.
export const DESCRIPTOR_BYTES = 128;
/** u32: segment count. */
export const D_SEGMENT_COUNT = 0;
/** u32 × MAX_SEGMENTS: the segments. */
export const D_SEGMENTS = 4;
export const MAX_SEGMENTS = 23;
/** u64, u64: the table's leading blocks as a mask over the fingerprint (low word, high word). */
export const D_MASK_LOW = 96;
export const D_MASK_HIGH = 104;
/** u32: mask of the leading bits beyond the directory, within the tail. */
export const D_TAIL_PREFIX_MASK = 112;
/** u32 pointers: the directory, the ids and the tails. */
export const D_DIRECTORY = 116;
export const D_IDS = 120;
export const D_TAILS = 124;
