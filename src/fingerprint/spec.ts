/**
 * The fingerprint spec this build implements (see docs/spec.md). It changes whenever any default
 * fingerprint could change; indexes and stored fingerprints record it.
 */
export const SPEC_ID = 'simhash-wasm/2';

/** Every spec this build implements (the earlier ones as presets of the same name), oldest first. */
export const SPEC_IDS = ['simhash-wasm/1', SPEC_ID] as const;
/** One of SPEC_IDS: a spec this build can compute and read fingerprints (and index files) of. */
export type SpecId = (typeof SPEC_IDS)[number];
