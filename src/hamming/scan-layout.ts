// Which memory layout the one-query scans of assembly/hamming.ts walk. The multi-stream blocks keep more DRAM
// misses in flight, which doubled the scans' speed from DRAM on a 2-core Intel Xeon VM; on a 2-core AMD EPYC VM
// the same blocks ran 25-40 % slower than one sequential stream (figures in assembly/hamming.ts). Neither is
// right everywhere and WebAssembly cannot ask which processor it runs on, so each kind of scan times both
// layouts on its first large calls and keeps the faster. The results are identical either way: only speed
// depends on the choice, and tests run the kernels in both layouts.

/** A scan this large (fingerprints per call) is long enough to time, and its data is beyond L2. */
export const TUNE_MIN = 1 << 20;

/** The layouts tried, in order: ABBA twice, so that a drift in machine load hits both alike. */
const TRIALS = [true, false, false, true, true, false, false, true] as const;

interface Kind {
  trials: number;
  /** Best milliseconds per fingerprint so far: blocked, then one stream. */
  best: [number, number];
  /** The layout kept once the trials are done (null while they run). */
  blocked: boolean | null;
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
      state = { trials: 0, best: [Infinity, Infinity], blocked: null };
      this.kinds.set(kind, state);
    }
    if (state.blocked !== null || count < TUNE_MIN) {
      this.use(state.blocked ?? true);
      return scan();
    }
    const blocked = TRIALS[state.trials]!;
    this.use(blocked);
    const start = this.now();
    const result = scan();
    const perFingerprint = (this.now() - start) / count;
    const slot = blocked ? 0 : 1;
    state.best[slot] = Math.min(state.best[slot], perFingerprint);
    if (++state.trials === TRIALS.length) state.blocked = state.best[0] <= state.best[1];
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
