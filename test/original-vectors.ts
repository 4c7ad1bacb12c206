// Outputs of the original implementations (the Java reference, the Python package `simhash` 2.x), which the `java`
// and `python-simhash` presets must reproduce bit for bit. Copied from ../shared/vectors into test/vectors/original
// so that a clone alone runs every test; original-vectors.test.ts checks the copies against ../shared where it is
// present. Never regenerate them.
import fs from 'node:fs';

export const ORIGINAL_VECTOR_FILES = ['seed-java.jsonl', 'python-simhash.jsonl', 'python-simhash-features.jsonl'];

/** The path of one file of original vectors in this repository. */
export function originalVectorsPath(name: string): string {
  return new URL(`./vectors/original/${name}`, import.meta.url).pathname;
}

/** The records of one file of original vectors, a JSON value per line. */
export function readOriginalVectors<T>(name: string): T[] {
  return fs
    .readFileSync(originalVectorsPath(name), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);
}
