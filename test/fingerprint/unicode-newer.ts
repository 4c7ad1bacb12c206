// Code points the WebAssembly tables (built from a newer Unicode than Debian's unicode-data) make word characters
// but the Unicode Character Database used (test/ucd.ts) does not assign yet. The UCD cannot judge them, so
// test/fingerprint/unicode.test.ts excludes exactly these from the comparison and asserts that (a) every one is
// unassigned (Cn) in that database, (b) the tables give each the class listed here, and (c) no other code
// point differs. Their case folding has no independent source here and is not checked.
//
// Keyed by "<UCD version> -> <tables version>". A pair of versions not listed here fails the test: use the UCD
// of the tables' version (then nothing is excluded) or add the pair's list, checked against the UCD's DerivedAge.
import { STANDALONE, WORD, type CharClass } from '../ucd.js';

export type NewerRange = readonly [first: number, last: number, cls: CharClass];

const UCD_15_0_TO_17_0: readonly NewerRange[] = [
  [0x088f, 0x088f, WORD],
  [0x0897, 0x0897, WORD],
  [0x0c5c, 0x0c5c, WORD],
  [0x0cdc, 0x0cdc, WORD],
  [0x1acf, 0x1add, WORD],
  [0x1ae0, 0x1aeb, WORD],
  [0x1c89, 0x1c8a, WORD],
  [0xa7cb, 0xa7cf, WORD],
  [0xa7d2, 0xa7d2, WORD],
  [0xa7d4, 0xa7d4, WORD],
  [0xa7da, 0xa7dc, WORD],
  [0xa7f1, 0xa7f1, WORD],
  [0x105c0, 0x105f3, WORD],
  [0x10940, 0x10959, WORD],
  [0x10d40, 0x10d65, WORD],
  [0x10d69, 0x10d6d, WORD],
  [0x10d6f, 0x10d85, WORD],
  [0x10ec2, 0x10ec7, WORD],
  [0x10efa, 0x10efc, WORD],
  [0x11380, 0x11389, WORD],
  [0x1138b, 0x1138b, WORD],
  [0x1138e, 0x1138e, WORD],
  [0x11390, 0x113b5, WORD],
  [0x113b7, 0x113c0, WORD],
  [0x113c2, 0x113c2, WORD],
  [0x113c5, 0x113c5, WORD],
  [0x113c7, 0x113ca, WORD],
  [0x113cc, 0x113d3, WORD],
  [0x113e1, 0x113e2, WORD],
  [0x116d0, 0x116e3, STANDALONE], // Myanmar Extended-C digits (16.0)
  [0x11b60, 0x11b67, WORD],
  [0x11bc0, 0x11be0, WORD],
  [0x11bf0, 0x11bf9, WORD],
  [0x11db0, 0x11ddb, WORD],
  [0x11de0, 0x11de9, WORD],
  [0x11f5a, 0x11f5a, WORD],
  [0x13460, 0x143fa, WORD], // Egyptian Hieroglyphs Extended-A (16.0)
  [0x16100, 0x16139, WORD],
  [0x16d40, 0x16d6c, WORD],
  [0x16d70, 0x16d79, WORD],
  [0x16ea0, 0x16eb8, WORD],
  [0x16ebb, 0x16ed3, WORD],
  [0x16ff2, 0x16ff6, STANDALONE],
  [0x187f8, 0x187ff, WORD],
  [0x18cff, 0x18cff, WORD],
  [0x18d09, 0x18d1e, WORD],
  [0x18d80, 0x18df2, WORD],
  [0x1ccf0, 0x1ccf9, WORD],
  [0x1e5d0, 0x1e5fa, WORD],
  [0x1e6c0, 0x1e6de, WORD],
  [0x1e6e0, 0x1e6f5, WORD],
  [0x1e6fe, 0x1e6ff, WORD],
  [0x2b73a, 0x2b73f, STANDALONE],
  [0x2cea2, 0x2cead, STANDALONE],
  [0x2ebf0, 0x2ee5d, STANDALONE], // CJK Unified Ideographs Extension I (15.1)
  [0x323b0, 0x33479, STANDALONE], // CJK Unified Ideographs Extension J (17.0)
];

export const NEWER_THAN_UCD: Readonly<Record<string, readonly NewerRange[]>> = {
  '15.0.0 -> 17.0': UCD_15_0_TO_17_0,
};
