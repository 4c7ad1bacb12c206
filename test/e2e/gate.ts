// When the end-to-end tests (the packed package, the browser page) run, decided once from SIMHASH_E2E and what the
// machine has, and shared by the tests, the build step and the end-of-run summary (test/e2e/summary-reporter.ts).
//   SIMHASH_E2E unset or empty: run what this machine can (the browser tests need /usr/bin/chromium);
//   SIMHASH_E2E=1: required, a missing Chromium fails the browser tests; SIMHASH_E2E=0: off.
import fs from 'node:fs';

/** Debian's Chromium (scripts/install-chromium.sh); SIMHASH_CHROMIUM names another binary. */
export const CHROMIUM = process.env.SIMHASH_CHROMIUM || '/usr/bin/chromium';

export type E2EMode = 'auto' | 'required' | 'off';

export interface Gate {
  run: boolean;
  /** Why it does not run, for the test title and the summary. */
  skipped?: string;
}

export function e2eMode(value = process.env.SIMHASH_E2E): E2EMode {
  if (value === undefined || value === '') return 'auto';
  if (value === '1') return 'required';
  if (value === '0') return 'off';
  throw new Error(`SIMHASH_E2E must be 1 (required), 0 (off) or unset (run what this machine can), got "${value}"`);
}

/** The packed package: needs only Node and npm (the build is made when missing or stale). */
export function distGate(mode = e2eMode()): Gate {
  if (mode === 'off') return { run: false, skipped: 'package (dist) tests (SIMHASH_E2E=0)' };
  return { run: true };
}

/** The example page in headless Chromium. */
export function browserGate(mode = e2eMode()): Gate {
  if (mode === 'off') return { run: false, skipped: 'browser tests (SIMHASH_E2E=0)' };
  if (mode === 'auto' && !fs.existsSync(CHROMIUM)) {
    return { run: false, skipped: `browser tests (no ${CHROMIUM}; bash scripts/install-chromium.sh installs it)` };
  }
  return { run: true };
}

/** The e2e tests run once, in the simd project. */
export const ONCE = process.env.SIMHASH_BUILD !== 'scalar';
