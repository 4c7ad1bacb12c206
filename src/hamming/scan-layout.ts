// Which memory layout the one-query scans of assembly/hamming.ts walk. The multi-stream blocks keep more DRAM
// misses in flight, which doubled the scans' speed from DRAM on a 2-core Intel Xeon VM; on a 2-core AMD EPYC VM
// the same blocks ran 25-40 % slower than one sequential stream (figures in assembly/hamming.ts). Neither is
// right everywhere and WebAssembly cannot ask which processor it runs on, so each kind of scan times both
// layouts on its first large calls and keeps the faster. The results are identical either way: only speed
// depends on the choice, and tests run the kernels in both layouts.
//
// A choice made in a noisy moment can be wrong (a full benchmark run on 2026-12-03 kept one stream for the count
// while the blocks ran it 1.54x faster), so the kept layout keeps being checked: now and then a large call runs
// the other one, and two such calls in a row clearly faster than the kept layout's recent best switch it. Checks
// start every RECHECK_MIN large calls and grow rarer while the choice holds, so a right choice costs little.

/** A scan this large (fingerprints per call) is long enough to time, and its data is beyond L2. */
export const TUNE_MIN = 1 << 20;

/** The layouts tried, in order: ABBA twice, so that a drift in machine load hits both alike. */
const TRIALS = [true, false, false, true, true, false, false, true] as const;

/** Large calls between checks of the other layout: at first, and at most (doubling while the choice holds). */
const RECHECK_MIN = 16;
const RECHECK_MAX = 1024;
/** A check wins when the other layout takes less than this share of the kept one's recent best. */
const SWITCH_MARGIN = 0.9;
/** How much the kept layout's recent best ages per large call, so that an old lucky time does not stay the bar. */
const AGING = 1.05;

interface Kind {
  trials: number;
  /** Best milliseconds per fingerprint so far: blocked, then one stream. */
  best: [number, number];
  /** The layout kept once the trials are done (null while they run). */
  blocked: boolean | null;
  /** After the trials: large calls so far, the one that runs the other layout next, and the gap to it. */
  large: number;
  nextCheck: number;
  interval: number;
  /** The kept layout's best milliseconds per fingerprint of late (aged by AGING per large call). */
  recent: number;
  /** Checks in a row that the other layout won. */
  wins: number;
}

/** Per WebAssembly instance: the layout kept for each kind of scan, and the one the instance is set to now. */
export class ScanLayout {
  private readonly kinds = new Map<string, Kind>();
  private current = true;
  private forced: boolean | null = null;

  constructor(
    private readonly setBlocked: (blocked: boolean) => unknown,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Runs `scan` (one call over `count` fingerprints of one kind, e.g. 'count64') in the layout kept for that kind,
   * or, during its first large calls, in the layout under trial, timed. Before a kind has a layout it scans
   * blocked, which was the only layout before.
   */
  run<T>(kind: string, count: number, scan: () => T): T {
    if (this.forced !== null) {
      this.use(this.forced);
      return scan();
    }
    let state = this.kinds.get(kind);
    if (!state) {
      state = {
        trials: 0,
        best: [Infinity, Infinity],
        blocked: null,
        large: 0,
        nextCheck: 0,
        interval: 0,
        recent: 0,
        wins: 0,
      };
      this.kinds.set(kind, state);
    }
    if (count < TUNE_MIN) {
      this.use(state.blocked ?? true);
      return scan();
    }
    if (state.blocked !== null) return this.runKept(state, count, scan);
    const blocked = TRIALS[state.trials]!;
    this.use(blocked);
    const start = this.now();
    const result = scan();
    const perFingerprint = (this.now() - start) / count;
    const slot = blocked ? 0 : 1;
    state.best[slot] = Math.min(state.best[slot], perFingerprint);
    if (++state.trials === TRIALS.length) {
      state.blocked = state.best[0] <= state.best[1];
      state.recent = state.best[state.blocked ? 0 : 1];
      state.interval = RECHECK_MIN;
      state.nextCheck = RECHECK_MIN;
    }
    return result;
  }

  /** A large call once a layout is kept: timed, and now and then a check of the other layout (see the top). */
  private runKept<T>(state: Kind, count: number, scan: () => T): T {
    const check = state.large + 1 >= state.nextCheck;
    const blocked = check ? !state.blocked : state.blocked!;
    this.use(blocked);
    const start = this.now();
    const result = scan();
    const perFingerprint = (this.now() - start) / count;
    state.large++;
    if (!check) {
      state.recent = Math.min(state.recent * AGING, perFingerprint);
    } else if (perFingerprint < state.recent * SWITCH_MARGIN) {
      if (++state.wins === 2) {
        state.blocked = blocked;
        state.recent = perFingerprint;
        state.wins = 0;
        state.interval = RECHECK_MIN;
      }
      // A first win is checked again at once; after a switch, the old layout gets its checks from the start.
      state.nextCheck = state.large + (state.wins === 1 ? 1 : state.interval);
    } else {
      state.wins = 0;
      state.interval = Math.min(2 * state.interval, RECHECK_MAX);
      state.nextCheck = state.large + state.interval;
    }
    return result;
  }

  /** The layout kept for `kind`, or null while it is still being timed. */
  chosen(kind: string): boolean | null {
    return this.kinds.get(kind)?.blocked ?? null;
  }

  /** Sets one layout for every scan (tests and benchmarks), or with null goes back to the kept ones. */
  force(blocked: boolean | null): void {
    this.forced = blocked;
  }

  /** Forgets every choice: the next large scans are timed again. */
  reset(): void {
    this.kinds.clear();
  }

  private use(blocked: boolean): void {
    if (blocked === this.current) return;
    this.setBlocked(blocked);
    this.current = blocked;
  }
}
