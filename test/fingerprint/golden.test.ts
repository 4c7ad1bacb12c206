// The default spec's golden vectors (test/vectors/golden.jsonl, written once by scripts/make-golden.mjs): any
// change to any value fails here, and every value is recomputed by the plain reference (test/reference.ts), so the
// file cannot hold what only the implementation believes. If the spec changes on purpose, bump SPEC_ID and
// regenerate the file. The vectors of each earlier spec stay, frozen, and its preset must give them forever
// (test/vectors/golden-v1.jsonl: preset 'simhash-wasm/1').
import { beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import {
  SPEC_ID,
  type SpecPreset,
  featureHash,
  simhash,
  simhashMany,
  toHex,
  type Bits,
  type Feature,
  type SimHashInput,
  type SimHashOptions,
} from '../../src/index.js';
import {
  loadReference,
  referenceFeatureHash,
  referenceFingerprint,
  type RefOptions,
  type RefSpec,
} from '../reference.js';

beforeAll(loadReference);

interface Result {
  options: SimHashOptions & { bits: Bits };
  fingerprint: string;
}
type Entry =
  | { kind: 'header'; spec: string }
  | { kind: 'text'; name: string; text: string; results: Result[] }
  | { kind: 'bytes'; name: string; bytes: number[]; results: Result[] }
  | { kind: 'features'; name: string; features: Feature[]; results: Result[] }
  | { kind: 'map'; name: string; entries: [string, number][]; results: Result[] }
  | { kind: 'featureHash'; feature: string; hashes: { bits: Bits; hash: string }[] };

type Input = Exclude<Entry, { kind: 'header' } | { kind: 'featureHash' }>;

function inputOf(e: Input): SimHashInput {
  switch (e.kind) {
    case 'text':
      return e.text;
    case 'bytes':
      return Uint8Array.from(e.bytes);
    case 'features':
      return e.features;
    case 'map':
      return new Map(e.entries);
  }
}

const SPECS: Array<{ file: string; spec: string; preset: SpecPreset; ref: RefSpec }> = [
  { file: 'golden.jsonl', spec: SPEC_ID, preset: 'default', ref: 2 },
  { file: 'golden-v1.jsonl', spec: 'simhash-wasm/1', preset: 'simhash-wasm/1', ref: 1 },
];

describe.each(SPECS)('golden vectors of $spec ($file, preset $preset)', ({ file, spec, preset, ref }) => {
  const entries = fs
    .readFileSync(new URL(`../vectors/${file}`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Entry);
  const header = entries[0]!;
  const inputs = entries.filter((e): e is Input => 'results' in e);
  /** The options a value was written with, under this file's preset. */
  const withPreset = (options: Result['options']): Result['options'] =>
    preset === 'default' ? options : { ...options, preset };

  it('were written for their spec and cover every tokenizer, width and kind of input', () => {
    expect(header.kind).toBe('header');
    expect((header as { spec: string }).spec).toBe(spec);
    const texts = inputs.filter((e) => e.kind === 'text');
    expect(texts.length).toBeGreaterThanOrEqual(30);
    for (const name of ['empty', 'whitespace only', 'emoji sequences', 'lone high surrogate', 'long text']) {
      expect(texts.map((e) => e.name)).toContain(name);
    }
    const seen = new Set(
      inputs.flatMap((e) => e.results.map((r) => `${r.options.tokenizer ?? 'default'}/${r.options.bits}`)),
    );
    for (const tokenizer of ['default', 'whitespace', 'words', 'shingles', 'ngrams']) {
      for (const bits of [32, 64, 128]) expect(seen).toContain(`${tokenizer}/${bits}`);
    }
    for (const kind of ['bytes', 'features', 'map']) expect(inputs.some((e) => e.kind === kind)).toBe(true);
    expect(inputs.reduce((n, e) => n + e.results.length, 0)).toBeGreaterThan(1000);
  });

  it('every fingerprint is unchanged', () => {
    const changed: string[] = [];
    for (const e of inputs) {
      const input = inputOf(e);
      for (const r of e.results) {
        const got = toHex(simhash(input, withPreset(r.options)), r.options.bits);
        if (got !== r.fingerprint)
          changed.push(`${e.kind} ${JSON.stringify(e.name)} ${JSON.stringify(r.options)}: ${r.fingerprint} -> ${got}`);
      }
    }
    expect(changed).toEqual([]);
  });

  it('every fingerprint equals the plain reference (test/reference.ts), computed here', () => {
    const differ: string[] = [];
    let checked = 0;
    for (const e of inputs) {
      for (const r of e.results) {
        const expected = toHex(referenceFingerprint(inputOf(e), r.options as RefOptions, ref), r.options.bits);
        checked++;
        if (expected !== r.fingerprint)
          differ.push(
            `${e.kind} ${JSON.stringify(e.name)} ${JSON.stringify(r.options)}: file ${r.fingerprint}, reference ${expected}`,
          );
      }
    }
    expect(differ.slice(0, 20), `${differ.length} golden values differ from the reference`).toEqual([]);
    expect(checked).toBe(inputs.reduce((n, e) => n + e.results.length, 0));
  });

  it('batches give the same values as single calls', () => {
    const byOptions = new Map<string, { options: Result['options']; inputs: SimHashInput[]; expected: string[] }>();
    for (const e of inputs) {
      for (const r of e.results) {
        const key = JSON.stringify(r.options);
        let group = byOptions.get(key);
        if (!group) byOptions.set(key, (group = { options: r.options, inputs: [], expected: [] }));
        group.inputs.push(inputOf(e));
        group.expected.push(r.fingerprint);
      }
    }
    for (const { options, inputs: batch, expected } of byOptions.values()) {
      const fps = simhashMany(batch, withPreset(options));
      const got = expected.map((_, i) =>
        toHex(options.bits === 128 ? (fps[2 * i + 1]! << 64n) | fps[2 * i]! : fps[i]!, options.bits),
      );
      expect(got, JSON.stringify(options)).toEqual(expected);
    }
  });

  it('feature hashes are unchanged', () => {
    const hashes = entries.filter((e): e is Extract<Entry, { kind: 'featureHash' }> => e.kind === 'featureHash');
    expect(hashes.length).toBeGreaterThan(3);
    for (const e of hashes) {
      for (const h of e.hashes) {
        expect(toHex(featureHash(e.feature, h.bits, preset), h.bits), e.feature).toBe(h.hash);
        // The reference (XXH3 from hash-wasm, spec 2's short inputs written out); 32 bits is the low half.
        const expected = referenceFeatureHash(new TextEncoder().encode(e.feature), h.bits === 128 ? 128 : 64, ref);
        expect(toHex(h.bits === 32 ? expected & 0xffffffffn : expected, h.bits), e.feature).toBe(h.hash);
      }
    }
  });
});
