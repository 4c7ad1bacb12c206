// Fingerprint helpers on bigints: distance, similarity and text forms. Batch work on typed arrays lives in hamming.ts.
import { type Bits, checkBits } from './options.js';
import { show } from '../errors.js';

const M32 = 0xffffffffn;

/** Set bits of a 32-bit value (the join's planner and the evaluation's join use it too). */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function checkFingerprint(fp: unknown, name: string, bits: number = 128): bigint {
  if (typeof fp !== 'bigint') throw new TypeError(`${name} must be a bigint, got ${show(fp)}`);
  if (fp < 0n || fp >> BigInt(bits) !== 0n) {
    throw new RangeError(`${name} must be a ${bits}-bit unsigned fingerprint, got ${show(fp)}`);
  }
  return fp;
}

/** Number of bit positions where two fingerprints (up to 128 bits) differ. */
export function hammingDistance(a: bigint, b: bigint): number {
  let x = checkFingerprint(a, 'a') ^ checkFingerprint(b, 'b');
  let d = 0;
  while (x !== 0n) {
    d += popcount32(Number(x & M32));
    x >>= 32n;
  }
  return d;
}

/** 1 − hammingDistance / bits: 1 for equal fingerprints, about 0.5 for unrelated ones. */
export function similarity(a: bigint, b: bigint, bits: Bits = 64): number {
  checkBits(bits);
  checkFingerprint(a, 'a', bits);
  checkFingerprint(b, 'b', bits);
  return 1 - hammingDistance(a, b) / bits;
}

/** Lowercase hex, zero-padded to bits / 4 digits. */
export function toHex(fp: bigint, bits: Bits = 64): string {
  checkBits(bits);
  return checkFingerprint(fp, 'fingerprint', bits)
    .toString(16)
    .padStart(bits / 4, '0');
}

/** Parses hex (upper or lower case, optional 0x, at most 32 digits) into a fingerprint. */
export function fromHex(hex: string, bits?: Bits): bigint {
  if (typeof hex !== 'string') throw new TypeError(`hex must be a string, got ${show(hex)}`);
  const digits = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (!/^[0-9a-fA-F]{1,32}$/.test(digits)) throw new RangeError(`not a hex fingerprint: ${show(hex)}`);
  const fp = BigInt('0x' + digits);
  if (bits !== undefined) checkFingerprint(fp, 'fingerprint', checkBits(bits));
  return fp;
}

/** The fingerprint as `bits` characters '0'/'1', most significant bit first. */
export function toBinary(fp: bigint, bits: Bits = 64): string {
  checkBits(bits);
  return checkFingerprint(fp, 'fingerprint', bits).toString(2).padStart(bits, '0');
}

/** Parses a string of '0'/'1' (most significant first, at most 128 characters). */
export function fromBinary(binary: string): bigint {
  if (typeof binary !== 'string') throw new TypeError(`binary must be a string, got ${show(binary)}`);
  if (!/^[01]{1,128}$/.test(binary)) throw new RangeError(`not a binary fingerprint: ${show(binary)}`);
  return BigInt('0b' + binary);
}
