import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { simhash, toHex, type Bits } from '../../../src/index.js';

const vectors = fs
  .readFileSync(new URL('../../../../shared/vectors/seed-java.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as { bits: Bits; text: string; fingerprint: string });

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
