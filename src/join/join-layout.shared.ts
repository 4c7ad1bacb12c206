// The permutation layout that join-plan.ts writes and the join kernels (assembly/join.ts) read, shared by both
// sides: this file is written in the subset of TypeScript that AssemblyScript also compiles, and the kernels
// import it. The module re-exports these values (assembly/simhash.ts) and test/runtime/layout.test.ts checks them.
//
// A table's permutation is a list of segments, each a move of a bit range (bit 0 = least significant):
//   [source shift u32, width u32 (≤ 64), target shift u32, padding u32]
export const SEGMENT_BYTES = 16;
/** u32: where the range starts in the 64- or 128-bit fingerprint. */
export const S_SOURCE_SHIFT = 0;
/** u32: the range's width in bits. */
export const S_WIDTH = 4;
/** u32: where the range starts in the permuted fingerprint. */
export const S_TARGET_SHIFT = 8;
