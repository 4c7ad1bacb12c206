// FingerprintIndex: exact near-duplicate search over 64- or 128-bit fingerprints, stored in WebAssembly memory.
//
// Storage (all heap blocks owned by the index): `master` holds each slot's fingerprint, `keys` its id key (the
// number itself, or the key string-ids.ts gives a string id), `dead` one tombstone bit per slot. Slots
// [0, sorted) are in ascending key order and in the tables planned by planner.ts; slots [sorted, slots) are the
// insert buffer, scanned linearly by every query. A rebuild (when the buffer fills, on addMany, compact, or when
// many removals are pending) drops dead slots, merges the buffer and any new batch in key order, re-plans for the
// new size and builds the tables. Removed slots are tombstoned until then and filtered by every query.
//
// Every mutation is all-or-nothing: a rebuild writes only into fresh blocks (a Txn) under a fresh header, and
// the index switches to them in one step (commit) once nothing can fail any more. Until then the index is
// untouched, so any failure — memory exhaustion included — releases the fresh blocks and leaves it as it was.
import { Region, type Heap } from '../runtime/heap.js';
import { checkAttached, checkTextItems, freedError, show } from '../errors.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import { checkThreads, hardwareThreads, sharedPool, snapshotBytes, type Resident } from '../runtime/pool.js';
import { offerTasks, residentValue } from '../runtime/pool-worker.js';
import { planIndex, validateLayout, type IndexBits, type IndexLayout, type IndexPlan } from './planner.js';
import { decodeIndex, encodeIndex, type Allocate, type Checksum, type IndexData } from './format.js';
import { SPEC_ID, SPEC_IDS, type SpecId } from '../fingerprint/spec.js';
import { MAX_STRING_IDS, StringIdStore } from './string-ids.js';
import { createSimHasher, type SimHasher } from '../fingerprint/fingerprint.js';
import type { Preset, SimHashOptions } from '../fingerprint/options.js';
import type { Neighbors } from '../results.js';
import {
  D_DIRECTORY,
  D_IDS,
  D_MASK_HIGH,
  D_MASK_LOW,
  D_SEGMENT_COUNT,
  D_SEGMENTS,
  D_TAIL_PREFIX_MASK,
  D_TAILS,
  DESCRIPTOR_BYTES,
  H_ANY_DEAD,
  H_DEAD,
  H_DESCRIPTORS,
  H_DIR_BITS,
  H_MASTER,
  H_SLOTS,
  H_SORTED,
  H_TABLES,
  H_TAIL_BITS,
  H_WORDS,
  HEADER_BYTES,
  MAX_SEGMENTS,
} from './layout.shared.js';

export type { IndexLayout, IndexPlan, TablePlan } from './planner.js';

/** The ids an index can hold: u32 numbers or strings (one kind per index). */
export type FingerprintId = number | string;

/** How a FingerprintIndex is built. */
export interface FingerprintIndexOptions {
  /** Fingerprint width: 64 (default, or simhash.bits when that is given) or 128. */
  bits?: IndexBits;
  /** Largest distance a query may ask for (default 3); the tables are planned for it. */
  maxDistance?: number;
  /** Force a table layout instead of the planner's choice (see explain()). */
  layout?: IndexLayout;
  /** Memory target for the planner, bytes per fingerprint (default 40 at 64 bits, 48 at 128). */
  bytesPerFingerprint?: number;
  /**
   * The fingerprint spec of the fingerprints it will hold (default SPEC_ID): recorded by serialize() so that
   * whoever loads the file knows which preset to query it with. With `simhash`, it must be its preset's spec.
   */
  spec?: SpecId;
  /**
   * How addText, addTexts and queryText hash texts (default: the default options at the index's bits, under
   * `spec`'s preset). Its bits must equal the index's bits, and its preset be one of the spec presets ('default',
   * 'simhash-wasm/2', 'simhash-wasm/1') matching `spec` when both are given: a RangeError names both otherwise.
   * serialize() records the spec, not these options: give them again to deserialize() to keep adding texts.
   */
  simhash?: SimHashOptions;
}

/** What deserialize() checks the stored index against; a mismatch is a RangeError naming both values. */
export interface DeserializeOptions {
  /** The fingerprint width the index must hold. */
  bits?: IndexBits;
  /** The maxDistance the index must have been built for. */
  maxDistance?: number;
  /** The fingerprint spec the index must hold. */
  spec?: SpecId;
  /** The kind of ids the index must hold ('number' or 'string'; an empty index holds either). */
  ids?: 'number' | 'string';
  /**
   * How the loaded index hashes texts (addText, addTexts, queryText): the options it was built with, which the
   * file does not record. Checked like FingerprintIndexOptions.simhash against the stored bits and spec.
   */
  simhash?: SimHashOptions;
}

/** What FingerprintIndex.explain() reports: the plan in use and what the index holds. */
export interface IndexExplanation extends IndexPlan {
  /** Live fingerprints. */
  readonly size: number;
  /** Fingerprints in the insert buffer (scanned linearly until the next merge). */
  readonly buffered: number;
  /** Removed fingerprints whose slots are purged at the next merge. */
  readonly removedPending: number;
  /** Bytes of WebAssembly memory the index holds now (tables, directories, fingerprints, keys, tombstones). */
  readonly bytes: number;
  /** bytes / size (0 when empty). */
  readonly bytesPerFingerprintActual: number;
}

interface IndexKernels {
  indexBuildTable(h: number, t: number, tmp: number): void;
  indexQuery(
    h: number,
    queries: number,
    nq: number,
    k: number,
    radius: number,
    out: number,
    cap: number,
    counts: number,
  ): number;
  indexSortPairs(keys: number, vals: number, n: number, tk: number, tv: number): number;
  indexFirstRepeat(keys: number, n: number): number;
  indexFirstCommon(h: number, keys: number, b: number, nb: number): number;
  indexMerge(
    h: number,
    keys: number,
    bk: number,
    bs: number,
    nb: number,
    ck: number,
    cs: number,
    nc: number,
    cMaster: number,
    outMaster: number,
    outKeys: number,
  ): number;
  xxh64Begin(seed: bigint): void;
  xxh64Stripes(ptr: number, len: number): void;
  xxh64End(ptr: number, len: number, total: bigint): bigint;
}

const MAX_U32 = 0xffffffff;
const M64 = 0xffffffffffffffffn;

/** Set while deserialize adds a file's fingerprints, which addMany then takes as they were saved. */
let restoring = false;

/**
 * The first 128-bit fingerprint of `fps` (two words each, low first) that is non-zero with a high word of 0, or -1:
 * a 64-bit fingerprint, almost surely (a 128-bit SimHash looks like that with probability 2^-64), as checkFingerprint
 * refuses one given as a bigint. Read as 32-bit halves, with no BigInt per word.
 */
function firstNarrow(fps: BigUint64Array): number {
  const h = new Uint32Array(fps.buffer, fps.byteOffset, fps.length * 2);
  for (let i = 0; i < h.length; i += 4) {
    if (h[i + 2] === 0 && h[i + 3] === 0 && (h[i] !== 0 || h[i + 1] !== 0)) return i / 4;
  }
  return -1;
}

function narrowError(fps: BigUint64Array, i: number, what: string): RangeError {
  return new RangeError(
    `fingerprints[${2 * i}..${2 * i + 1}] (${what}) is ${show(fps[2 * i])} with a high word of 0: it fits in 64 bits, ` +
      'a 64-bit fingerprint, but this index holds 128-bit fingerprints',
  );
}

interface Scratch {
  readonly query: Region;
  readonly out: Region;
}
const scratchByHeap = new WeakMap<Heap, Scratch>();
function scratch(heap: Heap): Scratch {
  let s = scratchByHeap.get(heap);
  if (!s) {
    s = { query: new Region(heap), out: new Region(heap) };
    scratchByHeap.set(heap, s);
  }
  return s;
}

function kernelsOf(rt: Runtime): IndexKernels {
  return rt.kernels as unknown as IndexKernels;
}

function blockBytes(bytes: number): number {
  return Math.max(16, Math.ceil(bytes / 16) * 16);
}

/**
 * The heap blocks of one mutation. `alloc` blocks become the index's at commit; `temp` blocks are released at
 * the end either way; `abort` releases everything, so a failed mutation leaves no trace in the heap.
 */
class Txn {
  readonly fresh = new Map<number, number>(); // ptr → bytes
  private readonly temps = new Set<number>();
  constructor(private readonly heap: Heap) {}

  alloc(bytes: number): number {
    const ptr = this.heap.alloc(bytes);
    this.fresh.set(ptr, blockBytes(bytes));
    return ptr;
  }

  temp(bytes: number): number {
    const ptr = this.heap.alloc(bytes);
    this.temps.add(ptr);
    return ptr;
  }

  /** A temp block the index keeps after all. */
  keep(ptr: number, bytes: number): void {
    if (this.temps.delete(ptr)) this.fresh.set(ptr, blockBytes(bytes));
  }

  /** Releases a block of this transaction early (0 and unknown pointers are ignored). */
  drop(ptr: number): void {
    if (this.temps.delete(ptr) || this.fresh.delete(ptr)) this.heap.release(ptr);
  }

  abort(): void {
    for (const ptr of this.temps) this.heap.release(ptr);
    for (const ptr of this.fresh.keys()) this.heap.release(ptr);
    this.temps.clear();
    this.fresh.clear();
  }

  /** Releases the temp blocks; returns the blocks the index now owns. */
  finish(): Map<number, number> {
    for (const ptr of this.temps) this.heap.release(ptr);
    this.temps.clear();
    return this.fresh;
  }
}

/** Runs `fn` in a transaction; releases its blocks when it throws. */
function transaction<T>(heap: Heap, fn: (txn: Txn) => T): T {
  const txn = new Txn(heap);
  try {
    return fn(txn);
  } catch (error) {
    txn.abort();
    throw error;
  }
}

/** The storage a rebuild produced, not yet the index's. */
interface Staged {
  readonly hdr: number;
  readonly master: number;
  readonly keys: number;
  readonly dead: number;
  readonly capacity: number;
  readonly desc: number;
  readonly tableBlocks: number[];
  readonly plan: IndexPlan;
  readonly live: number;
}

/** New entries for a rebuild: `n` keys ascending at `keys`, the batch position of each at `slots` (0: i). */
interface Batch {
  readonly keys: number;
  readonly slots: number;
  readonly n: number;
  /** The fingerprints, by batch position (a block of the transaction). */
  readonly fps: number;
}

/** Insert buffer size before a merge: large enough to amortise the O(N) rebuild, small enough to scan fast. */
function bufferLimit(live: number): number {
  return Math.max(256, Math.min(16384, live >>> 6));
}

/** How an index is known to the worker pool (queryManyAsync): its key there, and whether workers hold a copy. */
interface PoolCopy {
  readonly key: string;
  shipped: boolean;
  /** The version last sent to the workers. */
  version: number;
}
let nextPoolKey = 0;

function dropPoolCopies(copy: PoolCopy): void {
  if (copy.shipped) sharedPool().forget(copy.key);
  copy.shipped = false;
}

// An index dropped without free() still returns its blocks (and its workers' copies) once it is garbage collected.
const unfreed = new FinalizationRegistry<{ heap: Heap; blocks: Map<number, number>; copy: PoolCopy }>(
  ({ heap, blocks, copy }) => {
    for (const ptr of blocks.keys()) heap.release(ptr);
    blocks.clear();
    dropPoolCopies(copy);
  },
);

/**
 * Queries from which queryManyAsync uses every core by default once the workers hold the index; before that, the
 * batch must also have at least as many queries as the index has fingerprints, since sending and rebuilding the
 * copy costs about as much as that many queries (bench/threads.bench.ts measures both).
 */
export const PARALLEL_MIN_QUERIES = 4096;
/** Queries per pool task: several tasks per thread even out loaded cores. */
const QUERIES_PER_TASK_MAX = 16384;

/** The pool task that answers a batch of queries on a worker's copy of an index. */
const INDEX_QUERY_TASK = 'index-query';

interface IndexQueryTask {
  key: string;
  version: number;
  /** The index's hand-over bytes (handoverBytes): present when this worker does not hold this version yet. */
  resident?: Uint8Array;
  fingerprints: BigUint64Array;
  k: number;
}

/** Answers to a batch of queries in typed arrays (a structured clone of 10^5 small arrays costs more than them). */
interface PackedNeighbors {
  /** Neighbours of each query. */
  counts: Uint32Array;
  ids: Uint32Array | string[];
  distances: Uint8Array;
}

function packNeighbors(lists: Neighbors<FingerprintId[]>[]): PackedNeighbors {
  const counts = new Uint32Array(lists.length);
  let total = 0;
  for (let i = 0; i < lists.length; i++) total += counts[i] = lists[i]!.id.length;
  const strings = lists.some((l) => l.id.length > 0 && typeof l.id[0] === 'string');
  const ids: Uint32Array | string[] = strings ? new Array<string>(total) : new Uint32Array(total);
  const distances = new Uint8Array(total);
  let at = 0;
  for (const list of lists) {
    for (let j = 0; j < list.id.length; j++, at++) ids[at] = list.id[j] as never;
    distances.set(list.distance, at - list.id.length);
  }
  return { counts, ids, distances };
}

function unpackNeighbors<Id>({ counts, ids, distances }: PackedNeighbors, into: Neighbors<Id[]>[]): void {
  let at = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    const id = ids instanceof Uint32Array ? Array.from(ids.subarray(at, at + c)) : ids.slice(at, at + c);
    into.push({ id: id as Id[], distance: distances.slice(at, at + c) });
    at += c;
  }
}

offerTasks({
  [INDEX_QUERY_TASK]: (task: IndexQueryTask) => {
    const index = residentValue(
      task.key,
      task.version,
      task.resident,
      (bytes) => indexOf(decodeIndex(bytes, null)),
      (copy) => copy.free(),
    );
    const packed = packNeighbors(index.queryMany(task.fingerprints, task.k));
    const transfer = [packed.counts.buffer as ArrayBuffer, packed.distances.buffer as ArrayBuffer];
    if (packed.ids instanceof Uint32Array) transfer.push(packed.ids.buffer as ArrayBuffer);
    return { result: packed, transfer };
  },
});

function checkSpec(spec: unknown): SpecId {
  if (!(SPEC_IDS as readonly unknown[]).includes(spec)) {
    throw new (typeof spec === 'string' ? RangeError : TypeError)(
      `spec must be ${SPEC_IDS.map((id) => show(id)).join(' or ')}, got ${show(spec)}`,
    );
  }
  return spec as SpecId;
}

/** The presets whose fingerprints an index can record a spec for, and that spec. */
const SPEC_OF_PRESET: Partial<Record<Preset, SpecId>> = {
  default: SPEC_ID,
  'simhash-wasm/2': 'simhash-wasm/2',
  'simhash-wasm/1': 'simhash-wasm/1',
};

/**
 * An index's width, spec and text hashing options from its options: `bits` and `spec` as given (undefined: not
 * given), checked against `simhash` (see FingerprintIndexOptions.simhash). Throws before anything is built.
 */
function hashingOf(
  simhash: unknown,
  bitsOption: IndexBits | undefined,
  specOption: SpecId | undefined,
): { bits: IndexBits; spec: SpecId; hasher: SimHasher; options: Readonly<SimHashOptions> } {
  if (simhash !== undefined && (simhash === null || typeof simhash !== 'object' || Array.isArray(simhash)))
    throw new TypeError(`simhash must be an object of SimHashOptions, got ${show(simhash)}`);
  const given = (simhash ?? {}) as SimHashOptions;
  let bits: IndexBits;
  if (bitsOption === undefined) bits = given.bits === undefined ? 64 : checkBits(given.bits, 'simhash.bits');
  else {
    bits = bitsOption;
    if (given.bits !== undefined && checkBits(given.bits, 'simhash.bits') !== bits)
      throw new RangeError(`simhash.bits (${given.bits}) must equal the index's bits (${bits})`);
  }
  const preset = given.preset ?? specOption ?? 'default';
  const hasher = createSimHasher({ ...given, bits, preset }); // checks every option
  const spec = SPEC_OF_PRESET[preset];
  if (spec === undefined) {
    throw new RangeError(
      `simhash.preset must be one of the spec presets ('default', 'simhash-wasm/2', 'simhash-wasm/1') for an index, which records its spec; got ${show(preset)} (hash with it and add() the fingerprints instead)`,
    );
  }
  if (specOption !== undefined && specOption !== spec)
    throw new RangeError(
      `simhash.preset ${show(preset)} makes ${show(spec)} fingerprints, but spec is ${show(specOption)}`,
    );
  // The preset is recorded as the spec it names, as serialize() records it: 'default' follows SPEC_ID.
  return { bits, spec, hasher, options: Object.freeze({ ...given, bits, preset: spec }) };
}

/**
 * Exact near-duplicate search over 64- or 128-bit fingerprints under ids of type `Id` (u32 numbers or strings; one
 * kind per index). query() and queryText() return typed-array columns of ids and distances (Neighbors; see rows()).
 *
 * @typeParam Id - The ids it holds: `number`, `string`, or either (the default) until the first add decides.
 */
export class FingerprintIndex<Id extends FingerprintId = FingerprintId> {
  /** Fingerprint width: 64 or 128. */
  readonly bits: IndexBits;
  /** Largest distance a query may ask for. */
  readonly maxDistance: number;
  /** The fingerprint spec recorded with the index (the option, or the file's). */
  readonly spec: SpecId;
  /**
   * The options addText, addTexts and queryText hash with: the `simhash` option with the index's bits and the
   * preset of its spec filled in.
   */
  readonly simhashOptions: Readonly<SimHashOptions>;
  private readonly hasher: SimHasher;
  private readonly layoutOption: IndexLayout | undefined;
  private readonly budget: number | undefined;
  private readonly rt: Runtime;
  private readonly words: 1 | 2;
  private readonly blocks = new Map<number, number>(); // heap blocks owned: ptr → bytes
  private hdr = 0;
  private plan!: IndexPlan;
  private master = 0;
  private keys = 0;
  private dead = 0;
  private capacity = 0; // slots the master/keys/dead blocks hold
  private desc = 0;
  private tableBlocks: number[] = [];
  private sorted = 0;
  private slots = 0;
  private live = 0;
  private deadCount = 0;
  private readonly pending = new Map<number, number>(); // key → slot of each live buffered entry
  private idKind: 'number' | 'string' | undefined;
  private readonly strings: StringIdStore;
  private freed = false;
  /** Bumped by every change of contents: workers' copies of an older version are stale. */
  private version = 0;
  private handover: { version: number; bytes: Uint8Array } | undefined;
  private readonly copy: PoolCopy = { key: `index ${nextPoolKey++}`, shipped: false, version: -1 };

  constructor(options: FingerprintIndexOptions = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`options must be an object, got ${show(options)}`);
    }
    for (const key of Object.keys(options)) {
      if (!['bits', 'maxDistance', 'layout', 'bytesPerFingerprint', 'spec', 'simhash'].includes(key))
        throw new TypeError(`unknown option ${JSON.stringify(key)}`);
    }
    const hashing = hashingOf(
      options.simhash,
      options.bits === undefined ? undefined : checkBits(options.bits, 'bits'),
      options.spec === undefined ? undefined : checkSpec(options.spec),
    );
    const bits = hashing.bits;
    const k = options.maxDistance ?? 3;
    if (typeof k !== 'number') throw new TypeError(`maxDistance must be a number, got ${show(k)}`);
    if (!Number.isInteger(k) || k < 0 || k > bits)
      throw new RangeError(`maxDistance must be an integer from 0 to ${bits}, got ${show(k)}`);
    const budget = options.bytesPerFingerprint;
    if (budget !== undefined && (typeof budget !== 'number' || !(budget > 0) || !Number.isFinite(budget))) {
      throw new RangeError(`bytesPerFingerprint must be a positive number, got ${show(budget)}`);
    }
    this.layoutOption = validateLayout(options.layout, bits);
    this.spec = hashing.spec;
    this.simhashOptions = hashing.options;
    this.hasher = hashing.hasher;
    this.bits = bits;
    this.maxDistance = k;
    this.budget = budget;
    this.words = bits === 64 ? 1 : 2;
    this.rt = wasm();
    this.strings = new StringIdStore(stringMapCapacity);
    transaction(this.rt.heap, (txn) => this.commit(txn, this.rebuild(txn, undefined)));
    unfreed.register(this, { heap: this.rt.heap, blocks: this.blocks, copy: this.copy }, this);
  }

  /** Live fingerprints. */
  get size(): number {
    this.checkLive();
    return this.live;
  }

  /**
   * Adds one fingerprint under `id` (a u32 number or a string; one kind per index). Throws RangeError when the
   * id is already present (remove it first).
   */
  add(id: Id, fingerprint: bigint): void {
    this.checkLive();
    this.checkIdKind(id, 'id');
    const [lo, hi] = this.checkFingerprint(fingerprint, 'fingerprint');
    if (this.slotOf(id) >= 0) throw new RangeError(`id ${show(id)} is already in the index`);
    const key = typeof id === 'string' ? this.strings.insert(id) : (id as number);
    try {
      const heap = this.rt.heap;
      if (this.slots + 1 - this.sorted >= bufferLimit(this.live + 1)) {
        // The buffer is full: this entry goes in with the rebuild, as a batch of one.
        transaction(heap, (txn) => {
          const fps = txn.alloc(16);
          const ck = txn.temp(16);
          heap.u64[fps / 8] = lo;
          heap.u64[fps / 8 + 1] = hi;
          heap.u32[ck / 4] = key;
          this.commit(txn, this.rebuild(txn, { keys: ck, slots: 0, n: 1, fps }));
        });
      } else {
        if (this.slots + 1 > this.capacity) this.grow(this.slots + 1);
        const slot = this.slots;
        const u64 = heap.u64;
        u64[this.master / 8 + slot * this.words] = lo;
        if (this.words === 2) u64[this.master / 8 + slot * 2 + 1] = hi;
        heap.u32[this.keys / 4 + slot] = key;
        this.pending.set(key, slot);
        this.slots++;
        this.live++;
        this.setHeader(H_SLOTS, this.slots);
      }
    } catch (error) {
      if (typeof id === 'string') this.strings.delete(id);
      throw error;
    }
    this.idKind = typeof id as 'number' | 'string';
    this.version++;
  }

  /**
   * Adds many fingerprints at once (the bulk build): `fingerprints` holds one word per id at 64 bits, two (low
   * word first) at 128. Validates everything first: a duplicate or already present id, or a fingerprint that add()
   * would refuse (at 128 bits, a high word of 0 under a non-zero low word), throws and adds nothing.
   */
  addMany(ids: ArrayLike<Id>, fingerprints: BigUint64Array): void {
    this.checkLive();
    if (ids === null || typeof ids !== 'object' || typeof (ids as ArrayLike<unknown>).length !== 'number') {
      throw new TypeError(`ids must be an array or Uint32Array, got ${show(ids)}`);
    }
    if (ArrayBuffer.isView(ids)) checkAttached(ids, 'ids');
    if (!(fingerprints instanceof BigUint64Array))
      throw new TypeError(`fingerprints must be a BigUint64Array, got ${show(fingerprints)}`);
    checkAttached(fingerprints, 'fingerprints');
    const n = ids.length;
    if (fingerprints.length !== n * this.words) {
      throw new RangeError(
        `fingerprints must hold ${this.words} word(s) per id (${n * this.words} for ${n} ids), got ${fingerprints.length}`,
      );
    }
    if (n === 0) return;
    const kind = ids instanceof Uint32Array ? 'number' : typeof ids[0] === 'string' ? 'string' : 'number';
    if (ids instanceof Uint32Array) {
      this.checkIdKind(0, 'ids[0]');
    } else {
      for (let i = 0; i < n; i++) {
        this.checkIdKind(ids[i], `ids[${i}]`);
        if (typeof ids[i] !== kind)
          throw new TypeError(
            `ids[${i}] is a ${typeof ids[i]} but ids[0] is a ${kind}: one index holds one kind of id`,
          );
      }
    }
    if (kind === 'string' && this.strings.size + n > MAX_STRING_IDS) {
      throw new RangeError(
        `an index holds at most ${MAX_STRING_IDS} string ids: ${this.strings.size} + ${n} would exceed it`,
      );
    }
    // A file keeps what an index held: one saved before addMany refused these still loads as it was.
    const narrow = this.bits === 128 && !restoring ? firstNarrow(fingerprints) : -1;
    if (narrow >= 0) throw narrowError(fingerprints, narrow, `ids[${narrow}] ${show(ids[narrow])}`);
    // Whatever the plan, the merged index keeps a fingerprint and a key per entry while the batch is held too:
    // a batch that cannot fit even that fails here, before any work.
    const least = (this.live + n) * (8 * this.words + 4) + (this.live > 0 ? n * 8 * this.words : 0);
    if (least > this.rt.heap.limit) {
      throw new RangeError(
        `cannot add ${n} fingerprints to an index of ${this.live}: that needs more than ${least} bytes, and WebAssembly memory is limited to ${this.rt.heap.limit} bytes`,
      );
    }
    let inserted = 0;
    try {
      transaction(this.rt.heap, (txn) => {
        const batch = kind === 'string' ? this.stringBatch(txn, ids as ArrayLike<string>, () => inserted++) : null;
        const sorted = batch ?? this.numberBatch(txn, ids as ArrayLike<number>);
        const fps = txn.alloc(n * 8 * this.words);
        this.rt.heap.u64.set(fingerprints, fps / 8);
        this.commit(txn, this.rebuild(txn, { ...sorted, n, fps }));
      });
    } catch (error) {
      for (let i = inserted - 1; i >= 0; i--) this.strings.delete(ids[i] as string);
      throw error;
    }
    this.idKind = kind;
    this.version++;
  }

  /**
   * Adds the fingerprint of `text` under `id`: add(id, simhash(text, index.simhashOptions)), hashed with the
   * options the index was built with. Throws (before hashing, changing nothing) when the id is of the wrong kind
   * or already present, or the text is not a string or Uint8Array.
   */
  addText(id: Id, text: string | Uint8Array): void {
    this.checkLive();
    this.checkIdKind(id, 'id');
    checkText(text, 'text');
    if (this.slotOf(id) >= 0) throw new RangeError(`id ${show(id)} is already in the index`);
    this.add(id, this.hasher.hash(text));
  }

  /**
   * addMany for texts: hashes them all with the index's options in one batch (simhashMany), then adds them under
   * `ids` (ids[i] for texts[i]). Validates everything first: a bad or already present id or text throws and adds
   * nothing.
   */
  addTexts(ids: ArrayLike<Id>, texts: readonly (string | Uint8Array)[]): void {
    this.checkLive();
    if (ids === null || typeof ids !== 'object' || typeof (ids as ArrayLike<unknown>).length !== 'number') {
      throw new TypeError(`ids must be an array or Uint32Array, got ${show(ids)}`);
    }
    if (ArrayBuffer.isView(ids)) checkAttached(ids, 'ids');
    if (!Array.isArray(texts)) throw new TypeError(`texts must be an array, got ${show(texts)}`);
    if (texts.length !== ids.length) {
      throw new RangeError(`ids and texts must have the same length, got ${ids.length} ids and ${texts.length} texts`);
    }
    checkTextItems(texts);
    for (let i = 0; i < ids.length; i++) {
      this.checkIdKind(ids[i], `ids[${i}]`);
      if (typeof ids[i] !== typeof ids[0])
        throw new TypeError(
          `ids[${i}] is a ${typeof ids[i]} but ids[0] is a ${typeof ids[0]}: one index holds one kind of id`,
        );
      if (this.slotOf(ids[i]!) >= 0) throw new RangeError(`ids[${i}] ${show(ids[i])} is already in the index`);
    }
    if (ids.length === 0) return;
    this.addMany(ids, this.hasher.hashMany(texts));
  }

  /**
   * query() for the fingerprint of `text`, hashed with the options the index was built with (simhashOptions):
   * typed-array columns of ids and distances, nearest first.
   */
  queryText(text: string | Uint8Array, k?: number): Neighbors<Id[]> {
    this.checkLive();
    checkText(text, 'text');
    this.checkK(k);
    return this.query(this.hasher.hash(text), k);
  }

  /**
   * Removes `id`; returns false (and changes nothing) when it is not in the index. Ids of the wrong kind
   * (not a u32 number or string) throw TypeError/RangeError.
   */
  remove(id: Id): boolean {
    this.checkLive();
    this.checkIdKind(id, 'id');
    const slot = this.slotOf(id);
    if (slot < 0) return false;
    const heap = this.rt.heap;
    const word = this.dead / 4 + (slot >>> 5);
    const before = heap.u32[word]!;
    const anyDead = heap.u32[this.hdr / 4 + H_ANY_DEAD]!;
    const key = heap.u32[this.keys / 4 + slot]!;
    const buffered = this.pending.delete(key);
    heap.u32[word] = before | (1 << (slot & 31));
    this.setHeader(H_ANY_DEAD, 1);
    this.deadCount++;
    this.live--;
    if (this.deadCount >= Math.max(1024, this.live >>> 2)) {
      try {
        transaction(heap, (txn) => this.commit(txn, this.rebuild(txn, undefined)));
      } catch (error) {
        heap.u32[word] = before;
        this.setHeader(H_ANY_DEAD, anyDead);
        if (buffered) this.pending.set(key, slot);
        this.deadCount--;
        this.live++;
        throw error;
      }
    }
    if (typeof id === 'string') this.strings.delete(id);
    this.version++;
    return true;
  }

  /** Whether `id` is in the index. */
  has(id: Id): boolean {
    this.checkLive();
    this.checkIdKind(id, 'id');
    return this.slotOf(id) >= 0;
  }

  /**
   * Every fingerprint within `k` (default maxDistance) of `fingerprint`, sorted by distance, then id (numbers
   * ascending, strings by code unit), as columns: `id` an array of ids, `distance` a Uint8Array (see rows()).
   */
  query(fingerprint: bigint, k?: number): Neighbors<Id[]> {
    this.checkLive();
    const [lo, hi] = this.checkFingerprint(fingerprint, 'fingerprint');
    const kk = this.checkK(k);
    const q = scratch(this.rt.heap).query.reserve(16);
    const u64 = this.rt.heap.u64;
    u64[q / 8] = lo;
    u64[q / 8 + 1] = hi;
    return this.run(q, 1, kk)[0]!;
  }

  /**
   * query() for each fingerprint of a batch (one word each at 64 bits, two, low word first, at 128): one Neighbors
   * per query. A fingerprint that query() refuses (at 128 bits, a high word of 0 under a non-zero low word) throws,
   * naming the query.
   */
  queryMany(fingerprints: BigUint64Array, k?: number): Neighbors<Id[]>[] {
    this.checkLive();
    this.checkQueries(fingerprints);
    const kk = this.checkK(k);
    const nq = fingerprints.length / this.words;
    const q = scratch(this.rt.heap).query.reserve(Math.max(16, fingerprints.length * 8));
    this.rt.heap.u64.set(fingerprints, q / 8);
    return this.run(q, nq, kk);
  }

  /**
   * queryMany on a pool of workers (Node worker threads, or Web Workers in browsers), each holding a copy of the
   * index: the queries are split into contiguous batches and the answers put back in order, identical to
   * queryMany's. The copy is sent once per version of the index (any add or remove makes a new version) and freed
   * with the index. `threads` defaults to the hardware's concurrency from PARALLEL_MIN_QUERIES queries, else 1.
   */
  async queryManyAsync(
    fingerprints: BigUint64Array,
    k?: number,
    options: { threads?: number } = {},
  ): Promise<Neighbors<Id[]>[]> {
    this.checkLive();
    this.checkQueries(fingerprints);
    const kk = this.checkK(k);
    if (options === null || typeof options !== 'object' || Array.isArray(options))
      throw new TypeError(`options must be an object, got ${show(options)}`);
    for (const key of Object.keys(options))
      if (key !== 'threads') throw new TypeError(`unknown option ${JSON.stringify(key)}`);
    const nq = fingerprints.length / this.words;
    const held = this.copy.shipped && this.copy.version === this.version;
    const enough = nq >= PARALLEL_MIN_QUERIES && (held || nq >= this.live);
    const threads = checkThreads(options.threads) ?? (enough ? hardwareThreads() : 1);
    if (threads === 1 || nq === 0) return this.queryMany(fingerprints, kk);
    const pool = sharedPool();
    const version = this.version;
    // Taken now: a task still queued after a later change must get the version it was made for.
    const bytes = this.handoverBytes();
    const resident: Resident = { key: this.copy.key, version, bytes: () => bytes };
    const per = Math.min(QUERIES_PER_TASK_MAX, Math.max(1, Math.ceil(nq / (threads * 4))));
    const tasks: Promise<PackedNeighbors>[] = [];
    for (let start = 0; start < nq; start += per) {
      const end = Math.min(nq, start + per);
      const task: IndexQueryTask = {
        key: this.copy.key,
        version,
        fingerprints: fingerprints.slice(start * this.words, end * this.words),
        k: kk,
      };
      const job = pool.run<PackedNeighbors>(
        INDEX_QUERY_TASK,
        task,
        threads,
        [task.fingerprints.buffer as ArrayBuffer],
        resident,
      );
      job.catch(() => undefined); // awaited below, in order
      tasks.push(job);
    }
    this.copy.shipped = true;
    this.copy.version = version;
    const results: Neighbors<Id[]>[] = [];
    for (const part of await Promise.all(tasks)) unpackNeighbors(part, results);
    return results;
  }

  /**
   * The index as queryManyAsync hands it to each worker once, kept for this version: format.ts's bytes without a
   * checksum, in a SharedArrayBuffer where the platform shares memory with workers (Node; browsers when
   * cross-origin isolated), so that every worker reads the same bytes and the calling thread copies them once.
   */
  private handoverBytes(): Uint8Array {
    if (this.handover?.version !== this.version)
      this.handover = { version: this.version, bytes: this.encode(null, snapshotBytes) };
    return this.handover.bytes;
  }

  /** Merges the insert buffer and purges removed entries now (queries are fastest after this). */
  compact(): void {
    this.checkLive();
    if (this.slots > this.sorted || this.deadCount > 0) {
      transaction(this.rt.heap, (txn) => this.commit(txn, this.rebuild(txn, undefined)));
    }
  }

  /** The plan in use and what the index holds: tables, leading bits, expected candidates per probe, bytes. */
  explain(): IndexExplanation {
    this.checkLive();
    let bytes = 0;
    for (const size of this.blocks.values()) bytes += size;
    return {
      ...this.plan,
      size: this.live,
      buffered: this.slots - this.sorted,
      removedPending: this.deadCount,
      bytes,
      bytesPerFingerprintActual: this.live === 0 ? 0 : bytes / this.live,
    };
  }

  /** The index in the binary format of format.ts. Changes nothing (the buffer is merged into a copy). */
  serialize(): Uint8Array {
    this.checkLive();
    return this.encode((bytes) => checksum(this.rt, bytes));
  }

  /**
   * The index in format.ts's format, copied into `allocate`'s buffer straight from WebAssembly memory (one copy of
   * the fingerprints and ids), with its checksum, or without one (null) for a hand-over between threads.
   */
  private encode(sum: Checksum, allocate?: Allocate): Uint8Array {
    const heap = this.rt.heap;
    const n = this.live;
    const w = this.words;
    return transaction(heap, (txn) => {
      let master = this.master;
      let keys = this.keys;
      if (this.slots > this.sorted || this.deadCount > 0) {
        const buffer = this.sortedBuffer(txn);
        master = txn.temp(Math.max(16, n * 8 * w));
        keys = txn.temp(Math.max(16, n * 4));
        const written = kernelsOf(this.rt).indexMerge(
          this.hdr,
          this.keys,
          buffer.keys,
          buffer.slots,
          buffer.n,
          0,
          0,
          0,
          0,
          master,
          keys,
        );
        if (written !== n) throw new Error(`internal: merge wrote ${written} fingerprints, expected ${n}`);
      }
      // Views of WebAssembly memory, read before anything can grow it: encodeIndex copies them first, and only
      // the checksum (after the copies) allocates in WebAssembly memory.
      const keyView = heap.u32.subarray(keys / 4, keys / 4 + n);
      const encoded = encodeIndex(
        {
          spec: this.spec,
          bits: this.bits,
          maxDistance: this.maxDistance,
          layout: this.layoutOption,
          bytesPerFingerprint: this.budget,
          idKind: this.idKind ?? 'number',
          ids: this.idKind === 'string' ? Array.from(keyView, (key) => this.strings.name(key)) : keyView,
          fingerprints: heap.u64.subarray(master / 8, master / 8 + n * w),
        },
        sum,
        allocate,
      );
      txn.abort();
      return encoded;
    });
  }

  /**
   * Loads an index written by serialize() (under either spec: its `spec` says which); throws RangeError on
   * truncated, altered or foreign bytes, and when the stored bits, maxDistance or spec differ from the ones
   * `expected` names.
   */
  static deserialize<Id extends FingerprintId = FingerprintId>(
    bytes: Uint8Array,
    expected: DeserializeOptions = {},
  ): FingerprintIndex<Id> {
    const rt = wasm();
    if (bytes instanceof Uint8Array) checkAttached(bytes, 'bytes');
    if (expected === null || typeof expected !== 'object' || Array.isArray(expected)) {
      throw new TypeError(`deserialize options must be an object, got ${show(expected)}`);
    }
    for (const key of Object.keys(expected)) {
      if (!['bits', 'maxDistance', 'spec', 'ids', 'simhash'].includes(key))
        throw new TypeError(`unknown option ${JSON.stringify(key)}`);
    }
    const bits = expected.bits === undefined ? undefined : checkBits(expected.bits, 'bits');
    const k = expected.maxDistance;
    if (k !== undefined) {
      if (typeof k !== 'number') throw new TypeError(`maxDistance must be a number, got ${show(k)}`);
      if (!Number.isInteger(k) || k < 0 || k > 128)
        throw new RangeError(`maxDistance must be an integer from 0 to 128, got ${show(k)}`);
    }
    const spec = expected.spec === undefined ? undefined : checkSpec(expected.spec);
    const kind = expected.ids;
    if (kind !== undefined && kind !== 'number' && kind !== 'string')
      throw new (typeof kind === 'string' ? RangeError : TypeError)(
        `ids must be "number" or "string", got ${show(kind)}`,
      );
    if (expected.simhash !== undefined) hashingOf(expected.simhash, bits, spec); // bad options fail before decoding
    const decoded = decodeIndex(bytes, (data) => checksum(rt, data));
    if (spec !== undefined && decoded.spec !== spec) {
      throw new RangeError(`the index holds ${show(decoded.spec)} fingerprints, but ${show(spec)} ones were expected`);
    }
    if (bits !== undefined && decoded.bits !== bits) {
      throw new RangeError(`the index holds ${decoded.bits}-bit fingerprints, but ${bits}-bit ones were expected`);
    }
    if (k !== undefined && decoded.maxDistance !== k) {
      throw new RangeError(`the index was built for maxDistance ${decoded.maxDistance}, but ${k} was expected`);
    }
    if (kind !== undefined && decoded.ids.length > 0 && decoded.idKind !== kind) {
      throw new RangeError(`the index holds ${decoded.idKind} ids, but ${kind} ones were expected`);
    }
    const hashing =
      expected.simhash === undefined ? undefined : hashingOf(expected.simhash, decoded.bits, decoded.spec);
    return indexOf<Id>(decoded, hashing?.options);
  }

  /** Releases the index's WebAssembly memory for reuse; the index cannot be used afterwards. */
  free(): void {
    if (this.freed) return;
    unfreed.unregister(this);
    dropPoolCopies(this.copy);
    this.handover = undefined;
    for (const ptr of this.blocks.keys()) this.rt.heap.release(ptr);
    this.blocks.clear();
    this.pending.clear();
    this.strings.clear();
    this.freed = true;
  }

  // ---- internals ----

  private checkLive(): void {
    if (this.freed) throw freedError('FingerprintIndex');
  }

  private checkQueries(fingerprints: unknown): asserts fingerprints is BigUint64Array {
    if (!(fingerprints instanceof BigUint64Array))
      throw new TypeError(`fingerprints must be a BigUint64Array, got ${show(fingerprints)}`);
    checkAttached(fingerprints, 'fingerprints');
    if (fingerprints.length % this.words !== 0) {
      throw new RangeError(
        `fingerprints must hold 2 words per 128-bit fingerprint (this index is 128-bit), got length ${fingerprints.length}`,
      );
    }
    const narrow = this.bits === 128 ? firstNarrow(fingerprints) : -1;
    if (narrow >= 0) throw narrowError(fingerprints, narrow, `query ${narrow}`);
  }

  private checkIdKind(id: unknown, name: string): void {
    if (typeof id === 'number') {
      if (!Number.isInteger(id) || id < 0 || id > MAX_U32)
        throw new RangeError(`${name} must be a u32 integer or a string, got ${show(id)}`);
    } else if (typeof id !== 'string') {
      throw new TypeError(`${name} must be a u32 integer or a string, got ${show(id)}`);
    }
    const kind = typeof id as 'number' | 'string';
    if (this.idKind !== undefined && this.idKind !== kind) {
      throw new TypeError(`${name} is a ${kind} but this index holds ${this.idKind} ids, got ${show(id)}`);
    }
  }

  private checkFingerprint(fp: unknown, name: string): [bigint, bigint] {
    if (typeof fp !== 'bigint') throw new TypeError(`${name} must be a bigint, got ${show(fp)}`);
    if (fp < 0n) throw new RangeError(`${name} must be a ${this.bits}-bit unsigned fingerprint, got ${show(fp)}`);
    if (fp >> BigInt(this.bits) !== 0n) {
      throw new RangeError(
        `${name} must be a ${this.bits}-bit unsigned fingerprint (the index's width), got ${show(fp)}, which needs ${fp.toString(2).length} bits`,
      );
    }
    const hi = fp >> 64n;
    if (this.bits === 128 && hi === 0n && fp !== 0n) {
      // A real 128-bit SimHash has 64 zero upper bits with probability 2^-64 (unless it is 0): this is a
      // 64-bit fingerprint given to a 128-bit index.
      throw new RangeError(
        `${name} ${show(fp)} fits in 64 bits: a 64-bit fingerprint, but this index holds 128-bit fingerprints`,
      );
    }
    return [fp & M64, hi];
  }

  private checkK(k: unknown): number {
    if (k === undefined) return this.maxDistance;
    if (typeof k !== 'number') throw new TypeError(`k must be a number, got ${show(k)}`);
    if (!Number.isInteger(k) || k < 0 || k > this.maxDistance) {
      throw new RangeError(
        `k must be an integer from 0 to the index's maxDistance (${this.maxDistance}), got ${show(k)}`,
      );
    }
    return k;
  }

  /** The live slot of `id`, or -1. */
  private slotOf(id: FingerprintId): number {
    let key: number;
    if (typeof id === 'string') {
      const k = this.strings.get(id);
      if (k === undefined) return -1;
      key = k;
    } else key = id;
    const buffered = this.pending.get(key);
    if (buffered !== undefined) return buffered;
    const u32 = this.rt.heap.u32;
    let lo = 0;
    let hi = this.sorted;
    const base = this.keys / 4;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (u32[base + mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    if (lo < this.sorted && u32[base + lo] === key && !((u32[this.dead / 4 + (lo >>> 5)]! >>> (lo & 31)) & 1))
      return lo;
    return -1;
  }

  /**
   * Keys of a batch of string ids, sorted, with their batch positions. Each id enters the string store here
   * (`onInsert` counts them, so that the caller can take them out again if the call fails).
   */
  private stringBatch(txn: Txn, ids: ArrayLike<string>, onInsert: () => void): { keys: number; slots: number } {
    const n = ids.length;
    const ka = txn.temp(n * 4);
    const va = txn.temp(n * 4);
    const u32 = this.rt.heap.u32;
    for (let i = 0; i < n; i++) {
      const s = ids[i]!;
      const key = this.strings.insert(s);
      if (key < 0) {
        for (let j = 0; j < i; j++) {
          if (ids[j] === s) throw new RangeError(`ids[${i}] ${show(s)} appears twice in the batch`);
        }
        throw new RangeError(`ids[${i}] ${show(s)} is already in the index`);
      }
      u32[ka / 4 + i] = key;
      onInsert();
      u32[va / 4 + i] = i;
    }
    // A fresh store hands out keys in order (a load from a file): then the batch needs no sort.
    let ascending = true;
    for (let i = 1; i < n && ascending; i++) ascending = u32[ka / 4 + i]! > u32[ka / 4 + i - 1]!;
    if (ascending) {
      txn.drop(va);
      return { keys: ka, slots: 0 };
    }
    return this.sortBatch(txn, ka, va, n);
  }

  /** Keys of a batch of number ids, sorted, with their batch positions; throws on repeats and present ids. */
  private numberBatch(txn: Txn, ids: ArrayLike<number>): { keys: number; slots: number } {
    const n = ids.length;
    const heap = this.rt.heap;
    const k = kernelsOf(this.rt);
    const ka = txn.temp(n * 4);
    let u32 = heap.u32;
    if (ids instanceof Uint32Array) u32.set(ids, ka / 4);
    else for (let i = 0; i < n; i++) u32[ka / 4 + i] = ids[i]!;
    // Ids already ascending (a common bulk load) need neither the sort nor its scratch.
    let ascending = true;
    for (let i = 1; i < n && ascending; i++) ascending = u32[ka / 4 + i]! > u32[ka / 4 + i - 1]!;
    let sorted = { keys: ka, slots: 0 };
    if (!ascending) {
      const va = txn.temp(n * 4);
      u32 = heap.u32;
      for (let i = 0; i < n; i++) u32[va / 4 + i] = i;
      sorted = this.sortBatch(txn, ka, va, n);
    }
    u32 = heap.u32;
    const repeat = k.indexFirstRepeat(sorted.keys, n);
    if (repeat >= 0) throw new RangeError(`id ${u32[sorted.keys / 4 + repeat]} appears twice in the batch`);
    const common = k.indexFirstCommon(this.hdr, this.keys, sorted.keys, n);
    if (common >= 0) throw new RangeError(`id ${u32[sorted.keys / 4 + common]} is already in the index`);
    for (const key of this.pending.keys()) {
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (u32[sorted.keys / 4 + mid]! < key) lo = mid + 1;
        else hi = mid;
      }
      if (lo < n && u32[sorted.keys / 4 + lo] === key) throw new RangeError(`id ${key} is already in the index`);
    }
    return sorted;
  }

  /** Sorts (key, position) pairs by key; the unused pair of arrays is released. */
  private sortBatch(txn: Txn, ka: number, va: number, n: number): { keys: number; slots: number } {
    const kb = txn.temp(n * 4);
    const vb = txn.temp(n * 4);
    if (kernelsOf(this.rt).indexSortPairs(ka, va, n, kb, vb) === 1) {
      txn.drop(ka);
      txn.drop(va);
      return { keys: kb, slots: vb };
    }
    txn.drop(kb);
    txn.drop(vb);
    return { keys: ka, slots: va };
  }

  /** The live buffered entries as (key, slot) pairs sorted by key. */
  private sortedBuffer(txn: Txn): { keys: number; slots: number; n: number } {
    const n = this.pending.size;
    if (n === 0) return { keys: 0, slots: 0, n };
    const ka = txn.temp(n * 4);
    const va = txn.temp(n * 4);
    const u32 = this.rt.heap.u32;
    let i = 0;
    for (const [key, slot] of this.pending) {
      u32[ka / 4 + i] = key;
      u32[va / 4 + i] = slot;
      i++;
    }
    return { ...this.sortBatch(txn, ka, va, n), n };
  }

  /**
   * Builds, in fresh blocks of `txn`, the index holding the live sorted part, the live buffer and `batch`: master
   * and keys in key order, a fresh header, and the tables planned for the new size. Reads the index, never
   * writes it.
   */
  private rebuild(txn: Txn, batch: Batch | undefined): Staged {
    const heap = this.rt.heap;
    const kern = kernelsOf(this.rt);
    const w = this.words;
    const nc = batch?.n ?? 0;
    const live = this.live + nc;
    let master: number;
    let keys: number;
    let capacity: number;
    if (batch && this.slots === 0 && batch.slots === 0) {
      // An empty index and a batch in key order: the batch's blocks become the index's as they are.
      master = batch.fps;
      keys = batch.keys;
      txn.keep(keys, nc * 4);
      capacity = nc;
    } else {
      const buffer = this.sortedBuffer(txn);
      capacity = Math.max(64, live + (batch ? 0 : bufferLimit(live)));
      master = txn.alloc(capacity * 8 * w);
      keys = txn.alloc(capacity * 4);
      if (live > 0) {
        const written = kern.indexMerge(
          this.hdr,
          this.keys,
          buffer.keys,
          buffer.slots,
          buffer.n,
          batch?.keys ?? 0,
          batch?.slots ?? 0,
          nc,
          batch?.fps ?? 0,
          master,
          keys,
        );
        if (written !== live) throw new Error(`internal: merge wrote ${written} fingerprints, expected ${live}`);
      }
      // What the merge read is not needed for the tables: give it back before they are allocated.
      txn.drop(buffer.keys);
      txn.drop(buffer.slots);
      if (batch) {
        txn.drop(batch.fps);
        txn.drop(batch.keys);
        txn.drop(batch.slots);
      }
    }
    const deadBytes = Math.ceil(capacity / 32) * 4;
    const dead = txn.alloc(deadBytes);
    const hdr = txn.alloc(HEADER_BYTES);
    heap.u8.fill(0, dead, dead + deadBytes);
    heap.u8.fill(0, hdr, hdr + HEADER_BYTES);
    const plan = this.planFor(live);
    const header = (field: number, value: number): void => {
      heap.u32[hdr / 4 + field] = value;
    };
    header(H_WORDS, w);
    header(H_MASTER, master);
    header(H_DEAD, dead);
    header(H_SORTED, live);
    header(H_SLOTS, live);
    header(H_DIR_BITS, plan.directoryBits);
    header(H_TAIL_BITS, plan.tailBits);
    const tables = plan.tables.length;
    const tableBlocks: number[] = [];
    let desc = 0;
    if (tables > 0) {
      desc = txn.alloc(tables * DESCRIPTOR_BYTES);
      header(H_DESCRIPTORS, desc);
      const dirBytes = 4 * (2 ** plan.directoryBits + 1);
      // Scratch for the two-pass scatter: a u64 key and a u32 slot per entry.
      const tmp = plan.directoryBits > 10 ? txn.temp(live * 12 + 16) : 0;
      for (let t = 0; t < tables; t++) {
        const dir = txn.alloc(dirBytes);
        const ids = txn.alloc(Math.max(16, live * 4));
        const tails = txn.alloc(Math.max(16, live * (plan.tailBits / 8)));
        tableBlocks.push(dir, ids, tails);
        const table = plan.tables[t]!;
        if (table.segments.length > MAX_SEGMENTS) throw new Error(`internal: ${table.segments.length} segments`);
        const base = desc + t * DESCRIPTOR_BYTES;
        const u32 = heap.u32;
        u32.fill(0, base / 4, (base + DESCRIPTOR_BYTES) / 4);
        u32[(base + D_SEGMENT_COUNT) / 4] = table.segments.length;
        table.segments.forEach(([start, len], i) => (u32[(base + D_SEGMENTS) / 4 + i] = (start << 8) | len));
        heap.u64[(base + D_MASK_LOW) / 8] = BigInt('0x' + table.mask[0]);
        heap.u64[(base + D_MASK_HIGH) / 8] = BigInt('0x' + table.mask[1]);
        u32[(base + D_TAIL_PREFIX_MASK) / 4] = table.tailPrefixMask;
        u32[(base + D_DIRECTORY) / 4] = dir;
        u32[(base + D_IDS) / 4] = ids;
        u32[(base + D_TAILS) / 4] = tails;
        kern.indexBuildTable(hdr, t, tmp);
      }
      txn.drop(tmp);
      header(H_TABLES, tables);
    }
    return { hdr, master, keys, dead, capacity, desc, tableBlocks, plan, live };
  }

  /** Makes `staged` the index's storage and releases the old; nothing here can fail. */
  private commit(txn: Txn, staged: Staged): void {
    for (const ptr of [this.hdr, this.master, this.keys, this.dead, this.desc, ...this.tableBlocks]) {
      this.release(ptr);
    }
    for (const [ptr, bytes] of txn.finish()) this.blocks.set(ptr, bytes);
    this.hdr = staged.hdr;
    this.master = staged.master;
    this.keys = staged.keys;
    this.dead = staged.dead;
    this.capacity = staged.capacity;
    this.desc = staged.desc;
    this.tableBlocks = staged.tableBlocks;
    this.plan = staged.plan;
    this.sorted = this.slots = this.live = staged.live;
    this.deadCount = 0;
    this.pending.clear();
  }

  /**
   * Moves master/keys/dead to blocks of at least `slots`; all-or-nothing. Doubling, but never past the largest
   * buffer (16384) above the sorted part: a merge comes first, so more would only strand memory in big indexes.
   */
  private grow(slots: number): void {
    const heap = this.rt.heap;
    transaction(heap, (txn) => {
      const cap = Math.max(64, slots, Math.min(this.capacity * 2, this.sorted + bufferLimit(MAX_U32)));
      const w = this.words;
      const master = txn.alloc(cap * 8 * w);
      const keys = txn.alloc(cap * 4);
      const deadBytes = Math.ceil(cap / 32) * 4;
      const dead = txn.alloc(deadBytes);
      const u8 = heap.u8;
      u8.fill(0, dead, dead + deadBytes);
      u8.copyWithin(master, this.master, this.master + this.slots * 8 * w);
      u8.copyWithin(keys, this.keys, this.keys + this.slots * 4);
      u8.copyWithin(dead, this.dead, this.dead + Math.ceil(this.slots / 32) * 4);
      this.release(this.master);
      this.release(this.keys);
      this.release(this.dead);
      for (const [ptr, bytes] of txn.finish()) this.blocks.set(ptr, bytes);
      this.master = master;
      this.keys = keys;
      this.dead = dead;
      this.capacity = cap;
      this.setHeader(H_MASTER, master);
      this.setHeader(H_DEAD, dead);
    });
  }

  private release(ptr: number): void {
    if (ptr === 0 || !this.blocks.has(ptr)) return;
    this.blocks.delete(ptr);
    this.rt.heap.release(ptr);
  }

  private setHeader(field: number, value: number): void {
    this.rt.heap.u32[this.hdr / 4 + field] = value;
  }

  private planFor(size: number): IndexPlan {
    return planIndex({
      bits: this.bits,
      maxDistance: this.maxDistance,
      size,
      layout: this.layoutOption,
      bytesPerFingerprint: this.budget,
    });
  }

  private radius(k: number): number {
    if (this.plan.tables.length === 0) return 0;
    const m = this.plan.blocks.length;
    const s = this.plan.leading;
    return s * Math.floor(k / m) + Math.max(0, s - m + (k % m));
  }

  /** Runs nq queries from `q`, growing the output until everything fits; maps slots to ids and sorts. */
  private run(q: number, nq: number, k: number): Neighbors<Id[]>[] {
    const heap = this.rt.heap;
    const kern = kernelsOf(this.rt);
    const sc = scratch(heap);
    const radius = this.radius(k);
    const results: Neighbors<Id[]>[] = [];
    const strings = this.idKind === 'string';
    let done = 0;
    let cap = Math.max(1024, nq * 4);
    while (done < nq) {
      const countsBytes = (nq - done) * 4;
      const out = sc.out.reserve(cap * 8 + countsBytes + 16);
      const counts = out + cap * 8;
      const stride = this.words * 8;
      const completed = kern.indexQuery(this.hdr, q + done * stride, nq - done, k, radius, out, cap, counts);
      const u32 = heap.u32;
      let at = out / 4;
      for (let i = 0; i < completed; i++) {
        const c = u32[counts / 4 + i]!;
        const list: Neighbor[] = new Array(c);
        for (let j = 0; j < c; j++) {
          const slot = u32[at + 2 * j]!;
          const key = u32[this.keys / 4 + slot]!;
          list[j] = { id: strings ? this.strings.name(key) : key, distance: u32[at + 2 * j + 1]! };
        }
        at += 2 * c;
        list.sort(strings ? byDistanceThenString : byDistanceThenNumber);
        const id = new Array<Id>(c);
        const distance = new Uint8Array(c);
        for (let j = 0; j < c; j++) {
          id[j] = list[j]!.id as Id;
          distance[j] = list[j]!.distance;
        }
        results.push({ id, distance });
      }
      done += completed;
      if (done < nq) {
        if (completed === 0) cap *= 4; // the next query alone did not fit
      }
    }
    return results;
  }
}

/**
 * Entries per Map in the string id store of indexes created from now on. A test hook (see string-ids.ts): tests
 * lower it to exercise the store's Map chains without 2^23 ids.
 */
export let stringMapCapacity: number | undefined;
export function setStringMapCapacity(capacity: number | undefined): void {
  stringMapCapacity = capacity;
}

/** The index that decoded format.ts bytes describe (deserialize, and a worker's copy from queryManyAsync). */
function indexOf<Id extends FingerprintId = FingerprintId>(
  decoded: IndexData,
  simhash?: SimHashOptions,
): FingerprintIndex<Id> {
  let index: FingerprintIndex<Id>;
  try {
    index = new FingerprintIndex<Id>({
      spec: decoded.spec,
      bits: decoded.bits,
      maxDistance: decoded.maxDistance,
      ...(decoded.layout !== undefined ? { layout: decoded.layout } : {}),
      ...(decoded.bytesPerFingerprint !== undefined ? { bytesPerFingerprint: decoded.bytesPerFingerprint } : {}),
      ...(simhash !== undefined ? { simhash } : {}),
    });
  } catch (error) {
    throw new RangeError(`invalid index bytes: ${(error as Error).message}`);
  }
  try {
    restoring = true;
    if (decoded.ids.length > 0) index.addMany(decoded.ids as unknown as ArrayLike<Id>, decoded.fingerprints);
  } catch (error) {
    index.free();
    if (/cannot allocate/.test((error as Error).message)) throw error;
    throw new RangeError(`invalid index bytes: ${(error as Error).message}`);
  } finally {
    restoring = false;
  }
  return index;
}

function checkText(text: unknown, name: string): asserts text is string | Uint8Array {
  if (typeof text !== 'string' && !(text instanceof Uint8Array))
    throw new TypeError(`${name} must be a string or a Uint8Array, got ${show(text)}`);
  if (text instanceof Uint8Array) checkAttached(text, name);
}

function checkBits(bits: unknown, name: string): IndexBits {
  if (bits !== 64 && bits !== 128) {
    throw new (typeof bits === 'number' ? RangeError : TypeError)(`${name} must be 64 or 128, got ${show(bits)}`);
  }
  return bits;
}

/** Bytes of a serialized index per checksum call: a multiple of XXH64's 32-byte stripe. */
const CHECKSUM_CHUNK = 1 << 20;

/**
 * XXH64 (seed 0) of `bytes`, the format's checksum, streamed through one block of `chunk` bytes (a multiple of
 * 32) released right after: WebAssembly memory stays small whatever the index's size.
 */
export function checksum(rt: Runtime, bytes: Uint8Array, chunk = CHECKSUM_CHUNK): bigint {
  const k = kernelsOf(rt);
  const whole = bytes.length - (bytes.length % 32);
  const ptr = rt.heap.alloc(Math.max(32, Math.min(chunk, whole)));
  try {
    k.xxh64Begin(0n);
    for (let at = 0; at < whole; at += chunk) {
      const end = Math.min(whole, at + chunk);
      rt.heap.u8.set(bytes.subarray(at, end), ptr);
      k.xxh64Stripes(ptr, end - at);
    }
    rt.heap.u8.set(bytes.subarray(whole), ptr);
    return BigInt.asUintN(64, k.xxh64End(ptr, bytes.length - whole, BigInt(bytes.length)));
  } finally {
    rt.heap.release(ptr);
  }
}

/** One neighbour while a query's answer is sorted. */
interface Neighbor {
  readonly id: FingerprintId;
  readonly distance: number;
}

function byDistanceThenNumber(a: Neighbor, b: Neighbor): number {
  return a.distance - b.distance || (a.id as number) - (b.id as number);
}

function byDistanceThenString(a: Neighbor, b: Neighbor): number {
  return a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
