import { describe, expect, it } from 'vitest';
import { fromBinary, fromHex, hammingDistance, similarity, toBinary, toHex } from '../../src/index.js';
import { rng } from '../reference.js';

function naiveDistance(a: bigint, b: bigint): number {
  let d = 0;
  for (let x = a ^ b; x > 0n; x >>= 1n) d += Number(x & 1n);
  return d;
}

function randomBig(next: () => number, bits: number): bigint {
  let x = 0n;
  for (let i = 0; i < bits; i += 16) x = (x << 16n) | BigInt(Math.floor(next() * 65536));
  return BigInt.asUintN(bits, x);
}

describe('hammingDistance and similarity', () => {
  it('equal the naive bit loop on random fingerprints of every width', () => {
    const next = rng(3);
    for (const bits of [32, 64, 128]) {
      for (let i = 0; i < 300; i++) {
        const a = randomBig(next, bits);
        const b = i % 3 === 0 ? a ^ (1n << BigInt(Math.floor(next() * bits))) : randomBig(next, bits);
        expect(hammingDistance(a, b)).toBe(naiveDistance(a, b));
        expect(similarity(a, b, bits as 32 | 64 | 128)).toBe(1 - naiveDistance(a, b) / bits);
      }
    }
    expect(hammingDistance(0n, (1n << 128n) - 1n)).toBe(128);
    expect(hammingDistance(5n, 5n)).toBe(0);
  });

  it('rejects non-bigints and out-of-range values', () => {
    expect(() => hammingDistance(1 as unknown as bigint, 2n)).toThrow(TypeError);
    expect(() => hammingDistance(-1n, 2n)).toThrow(/-1n/);
    expect(() => hammingDistance(1n << 128n, 2n)).toThrow(RangeError);
    expect(() => similarity(1n << 64n, 0n, 64)).toThrow(RangeError);
    expect(() => similarity(1n, 0n, 65 as 64)).toThrow(/65/);
  });
});

describe('hex and binary forms', () => {
  it('round-trip, zero-padded to the width', () => {
    const next = rng(4);
    for (const bits of [32, 64, 128] as const) {
      for (let i = 0; i < 100; i++) {
        const fp = i === 0 ? 0n : randomBig(next, bits);
        const hex = toHex(fp, bits);
        expect(hex).toHaveLength(bits / 4);
        expect(fromHex(hex, bits)).toBe(fp);
        const bin = toBinary(fp, bits);
        expect(bin).toHaveLength(bits);
        expect(fromBinary(bin)).toBe(fp);
      }
    }
    expect(toHex(0xabcn, 64)).toBe('0000000000000abc');
    expect(toBinary(5n, 32)).toBe('00000000000000000000000000000101');
    expect(fromHex('0xFF')).toBe(255n);
  });

  it('rejects malformed text and values too wide for the width', () => {
    expect(() => fromHex('xyz')).toThrow(/"xyz"/);
    expect(() => fromHex('')).toThrow(RangeError);
    expect(() => fromHex('1'.repeat(33))).toThrow(RangeError);
    expect(() => fromHex('1ffffffff', 32)).toThrow(RangeError);
    expect(() => fromBinary('0102')).toThrow(/"0102"/);
    expect(() => toHex(1n << 64n, 64)).toThrow(RangeError);
    expect(() => toHex(1n, 16 as 32)).toThrow(RangeError);
    expect(() => toBinary(-3n, 64)).toThrow(RangeError);
  });
});
