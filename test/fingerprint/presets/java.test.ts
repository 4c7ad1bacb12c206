import { describe, expect, it } from 'vitest';
import { simhash, toHex, type Bits } from '../../../src/index.js';
import { readOriginalVectors } from '../../original-vectors.js';

const vectors = readOriginalVectors<{ bits: Bits; text: string; fingerprint: string }>('seed-java.jsonl');

describe("preset 'java'", () => {
  it('reproduces every seed vector', () => {
    expect(vectors.length).toBeGreaterThan(400);
    for (const v of vectors) {
      expect(
        toHex(simhash(v.text, { preset: 'java', bits: v.bits }), v.bits),
        JSON.stringify(v.text.slice(0, 80)),
      ).toBe(v.fingerprint);
    }
  });
});
