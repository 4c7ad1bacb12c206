/**
 * The fingerprint spec this build implements (see README, "Fingerprint spec"). It changes whenever any default
 * fingerprint could change; indexes and stored fingerprints record it.
 */
export const SPEC_ID = 'simhash-wasm/1';
