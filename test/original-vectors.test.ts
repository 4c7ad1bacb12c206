// The repository's copies of the original implementations' vectors are the files in ../shared/vectors, byte for
// byte, wherever the project's shared folder sits beside the checkout (CI has it; a plain clone does not).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ORIGINAL_VECTOR_FILES, originalVectorsPath } from './original-vectors.js';

const sharedDir = new URL('../../shared/vectors/', import.meta.url).pathname;

describe('original vectors', () => {
  for (const name of ORIGINAL_VECTOR_FILES) {
    const shared = sharedDir + name;
    it.skipIf(!fs.existsSync(shared))(`test/vectors/original/${name} equals ../shared/vectors/${name}`, () => {
      expect(fs.readFileSync(originalVectorsPath(name)).equals(fs.readFileSync(shared))).toBe(true);
    });
  }

  it('every copy holds vectors', () => {
    for (const name of ORIGINAL_VECTOR_FILES) {
      expect(fs.readFileSync(originalVectorsPath(name), 'utf8').trim().split('\n').length, name).toBeGreaterThan(10);
    }
  });
});
