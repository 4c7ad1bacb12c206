// The choice of memory layout for the one-query scans (src/hamming/scan-layout.ts): its trials and what it keeps,
// on a fake clock; and the public scans over a resident set large enough to be timed, whose results must not
// depend on the layout: the same as a plain popcount reference during the trials, after them, and in each layout
// forced.
import { afterEach, describe, expect, it } from 'vitest';
import { FingerprintSet } from '../../src/index.js';
import { scanLayout } from '../../src/hamming/hamming.js';
import { ScanLayout, TUNE_MIN } from '../../src/hamming/scan-layout.js';
import { rng } from '../reference.js';

/** A ScanLayout on a clock that each scan advances by the milliseconds `cost(blocked)` gives. */
function fakeLayout(cost: (blocked: boolean) => number) {
  let clock = 0;
  let kernelBlocked = true;
  const sets: boolean[] = [];
  const layout = new ScanLayout(
    (blocked) => {
      kernelBlocked = blocked;
      sets.push(blocked);
    },
    () => clock,
  );
  const scan = (kind: string, count: number) =>
    layout.run(kind, count, () => {
      clock += cost(kernelBlocked);
      return kernelBlocked;
    });
  return { layout, scan, sets };
}

describe('ScanLayout', () => {
  it('times both layouts ABBA twice on large scans, then keeps the faster one', () => {
    const { layout, scan, sets } = fakeLayout((blocked) => (blocked ? 3 : 2));
    const seen = Array.from({ length: 8 }, () => scan('count64', TUNE_MIN));
    expect(seen).toEqual([true, false, false, true, true, false, false, true]);
    expect(layout.chosen('count64')).toBe(false);
    // Kept for every size of that kind from now on, small scans included.
    expect(scan('count64', TUNE_MIN * 4)).toBe(false);
    expect(scan('count64', 10)).toBe(false);
    // The kernel's flag is set only when it changes.
    expect(sets).toEqual([false, true, false, true, false]);
  });

  it('keeps the blocked layout when it is faster or as fast', () => {
    for (const cost of [(b: boolean) => (b ? 1 : 5), () => 4]) {
      const { layout, scan } = fakeLayout(cost);
      for (let i = 0; i < 8; i++) scan('distances64', TUNE_MIN);
      expect(layout.chosen('distances64')).toBe(true);
      expect(scan('distances64', TUNE_MIN)).toBe(true);
    }
  });

  it('compares the best time per fingerprint of each layout, so one slow first call does not decide', () => {
    // The first call (blocked) is 10x slow, as a first call in baseline-tier code can be.
    let calls = 0;
    const { layout, scan } = fakeLayout((blocked) => (calls++ === 0 ? 30 : blocked ? 2 : 2.5));
    // Trials of different sizes: per fingerprint, blocked is still the faster.
    for (let i = 0; i < 8; i++) scan('collect64', TUNE_MIN * (i % 2 === 0 ? 1 : 2));
    expect(layout.chosen('collect64')).toBe(true);
  });

  it('does not time small scans, and decides each kind on its own', () => {
    const { layout, scan } = fakeLayout((blocked) => (blocked ? 3 : 2));
    for (let i = 0; i < 20; i++) expect(scan('count64', TUNE_MIN - 1)).toBe(true);
    expect(layout.chosen('count64')).toBeNull();
    for (let i = 0; i < 8; i++) scan('count128', TUNE_MIN);
    expect(layout.chosen('count128')).toBe(false);
    expect(layout.chosen('count64')).toBeNull();
    expect(scan('count64', 5)).toBe(true);
  });

  it('runs a forced layout everywhere until force(null), and times again after reset()', () => {
    const { layout, scan } = fakeLayout((blocked) => (blocked ? 3 : 2));
    layout.force(true);
    for (let i = 0; i < 10; i++) expect(scan('count64', TUNE_MIN)).toBe(true);
    expect(layout.chosen('count64')).toBeNull();
    layout.force(null);
    for (let i = 0; i < 8; i++) scan('count64', TUNE_MIN);
    expect(scan('count64', 1)).toBe(false);
    layout.force(true);
    expect(scan('count64', 1)).toBe(true);
    layout.force(null);
    layout.reset();
    expect(layout.chosen('count64')).toBeNull();
    expect(scan('count64', TUNE_MIN)).toBe(true); // the first trial again
  });

  it('checks the other layout now and then, and switches when it wins two checks in a row', () => {
    // During the trials the machine favours one stream; afterwards the blocks are twice as fast.
    let calls = 0;
    const { layout, scan } = fakeLayout((blocked) => (calls++ < 8 ? (blocked ? 3 : 2) : blocked ? 1 : 2));
    for (let i = 0; i < 8; i++) scan('count64', TUNE_MIN);
    expect(layout.chosen('count64')).toBe(false);
    const seen = Array.from({ length: 40 }, () => scan('count64', TUNE_MIN));
    // The 16th large call checks the blocks, the 17th confirms, and they are kept from then on.
    expect(seen.slice(0, 15).every((b) => b === false)).toBe(true);
    expect(seen.slice(15, 17)).toEqual([true, true]);
    expect(layout.chosen('count64')).toBe(true);
    // After a switch the old layout is checked again (and loses, so the choice holds).
    expect(seen.slice(17).filter((b) => b === false).length).toBe(1);
    expect(scan('count64', 10)).toBe(true);
  });

  it('does not switch on one lucky check, nor on a check that is only a little faster', () => {
    // After the trials (blocks kept), the first check of one stream is lucky and the ones after it are not.
    let trials = true;
    let checks = 0;
    const lucky = fakeLayout((blocked) => (blocked ? 2 : trials ? 4 : ++checks === 1 ? 0.5 : 4));
    for (let i = 0; i < 8; i++) lucky.scan('count64', TUNE_MIN);
    expect(lucky.layout.chosen('count64')).toBe(true);
    trials = false;
    for (let i = 0; i < 200; i++) lucky.scan('count64', TUNE_MIN);
    expect(lucky.layout.chosen('count64')).toBe(true);
    expect(checks).toBeGreaterThanOrEqual(3); // the lucky check, its failed confirmation, and later ones
    // One stream 5 % faster than the blocks after the trials: within the margin, the choice holds.
    trials = true;
    const close = fakeLayout((blocked) => (blocked ? 2 : trials ? 2.5 : 1.9));
    for (let i = 0; i < 8; i++) close.scan('count64', TUNE_MIN);
    trials = false;
    for (let i = 0; i < 500; i++) close.scan('count64', TUNE_MIN);
    expect(close.layout.chosen('count64')).toBe(true);
  });

  it('checks less and less often while the choice holds', () => {
    const { scan } = fakeLayout((blocked) => (blocked ? 1 : 2));
    for (let i = 0; i < 8; i++) scan('count64', TUNE_MIN);
    const seen = Array.from({ length: 5000 }, () => scan('count64', TUNE_MIN));
    const checks = seen.flatMap((b, i) => (b ? [] : [i + 1]));
    // Every 16, 32, 64, ... up to every 1,024 large calls: at 16, 48, 112, 240, 496, 1008, 2032, 3056, 4080.
    expect(checks).toEqual([16, 48, 112, 240, 496, 1008, 2032, 3056, 4080]);
  });

  it('a scan that throws during a trial counts no trial and leaves the next call usable', () => {
    const { layout, scan } = fakeLayout(() => 1);
    expect(() =>
      layout.run('count64', TUNE_MIN, () => {
        throw new Error('kernel failed');
      }),
    ).toThrow('kernel failed');
    const seen = Array.from({ length: 8 }, () => scan('count64', TUNE_MIN));
    expect(seen).toEqual([true, false, false, true, true, false, false, true]);
  });
});

describe('scans of a resident set large enough to be timed, in every layout', () => {
  afterEach(() => {
    scanLayout().force(null);
    scanLayout().reset();
  });

  it('give the reference results during the trials, after them and in each layout forced', () => {
    const n = TUNE_MIN + 37;
    const next = rng(20261202);
    const halves = new Uint32Array(2 * n);
    for (let i = 0; i < halves.length; i++) halves[i] = Math.floor(next() * 2 ** 32);
    const query = 0x0123456789abcdefn;
    const qlo = Number(query & 0xffffffffn);
    const qhi = Number(query >> 32n);
    // Neighbours at distances 0..4 spread over the set, the last ones in the tail past any block.
    for (let j = 0; j < 64; j++) {
      const i = Math.floor((j * (n - 1)) / 63);
      halves[2 * i] = qlo ^ ((1 << (j % 5)) - 1);
      halves[2 * i + 1] = qhi;
    }
    const fps = new BigUint64Array(halves.buffer);
    const pop = (x: number) => {
      let c = 0;
      for (; x; x &= x - 1) c++;
      return c;
    };
    const distances = new Uint8Array(n);
    for (let i = 0; i < n; i++) distances[i] = pop(halves[2 * i]! ^ qlo) + pop(halves[2 * i + 1]! ^ qhi);
    const within = (k: number) => Uint32Array.from(distances.keys()).filter((i) => distances[i]! <= k);
    const within2 = within(2);
    const count3 = within(3).length;
    // The first index where two arrays differ, or -1 (toEqual on a million elements takes seconds).
    const firstDifference = (a: ArrayLike<number>, b: ArrayLike<number>) => {
      if (a.length !== b.length) return Math.min(a.length, b.length);
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
      return -1;
    };

    const set = FingerprintSet.from(fps);
    try {
      const out = new Uint8Array(n);
      const check = () => {
        out.fill(255);
        expect(firstDifference(set.hammingDistancesInto(query, out), distances)).toBe(-1);
        expect(set.countWithinDistance(query, 3)).toBe(count3);
        expect(set.withinDistance(query, 2)).toEqual(within2);
      };
      scanLayout().reset();
      for (let i = 0; i < 9; i++) check(); // eight trials of each kind, then the layout kept
      for (const kind of ['distances64', 'count64', 'collect64']) expect(scanLayout().chosen(kind)).not.toBeNull();
      for (const blocked of [true, false]) {
        scanLayout().force(blocked);
        check();
      }
    } finally {
      set.free();
    }
  });
});
