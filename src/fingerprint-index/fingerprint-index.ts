// FingerprintIndex: exact near-duplicate search over 64- or 128-bit fingerprints, stored in WebAssembly memory.
//
// Storage (all heap blocks owned by the index): `master` holds each slot's fingerprint, `keys` its id key (the
// number itself, or a dense number per string id), `dead` one tombstone bit per slot. Slots [0, sorted) are in
// ascending key order and in the tables planned by planner.ts; slots [sorted, slots) are the insert
// buffer, scanned linearly by every query. A merge (when the buffer fills, on addMany, serialize, or when many
// removals are pending) drops dead slots, merges the buffer in key order, re-plans for the new size and rebuilds
// the tables. Removed slots are tombstoned until then and filtered by every query, so results are never stale.
import { Region, type Heap } from '../runtime/heap.js';
import { show } from '../errors.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import { planIndex, validateLayout, type IndexBits, type IndexLayout, type IndexPlan } from './planner.js';
import { decodeIndex, encodeIndex } from './format.js';
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

export type FingerprintId = number | string;

export interface FingerprintIndexOptions {
  /** Fingerprint width: 64 (default) or 128. */
  bits?: IndexBits;
  /** Largest distance a query may ask for (default 3); the tables are planned for it. */
  maxDistance?: number;
  /** Force a table layout instead of the planner's choice (see explain()). */
  layout?: IndexLayout;
  /** Memory target for the planner, bytes per fingerprint (default 40 at 64 bits, 48 at 128). */
  bytesPerFingerprint?: number;
}

export interface Neighbor {
  readonly id: FingerprintId;
  readonly distance: number;
}

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
  indexMerge(h: number, keys: number, bk: number, bs: number, nb: number, outMaster: number, outKeys: number): number;
  indexChecksum(ptr: number, len: number): bigint;
}

const MAX_U32 = 0xffffffff;
const M64 = 0xffffffffffffffffn;

interface Scratch {
  readonly query: Region;
  readonly out: Region;
  readonly a: Region;
  readonly b: Region;
  readonly c: Region;
  readonly d: Region;
}
const scratchByHeap = new WeakMap<Heap, Scratch>();
function scratch(heap: Heap): Scratch {
  let s = scratchByHeap.get(heap);
  if (!s) {
    s = {
      query: new Region(heap),
      out: new Region(heap),
      a: new Region(heap),
      b: new Region(heap),
      c: new Region(heap),
      d: new Region(heap),
    };
    scratchByHeap.set(heap, s);
  }
  return s;
}

function kernelsOf(rt: Runtime): IndexKernels {
  return rt.kernels as unknown as IndexKernels;
}

/** Insert buffer size before a merge: large enough to amortise the O(N) rebuild, small enough to scan fast. */
function bufferLimit(live: number): number {
  return Math.max(256, Math.min(16384, live >>> 6));
}

// An index dropped without free() still returns its blocks once it is garbage collected.
const unfreed = new FinalizationRegistry<{ heap: Heap; blocks: Map<number, number> }>(({ heap, blocks }) => {
  for (const ptr of blocks.keys()) heap.release(ptr);
  blocks.clear();
});

export class FingerprintIndex {
  readonly bits: IndexBits;
  readonly maxDistance: number;
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
  private readonly pending = new Map<number, number>(); // key → buffered slot
  private idKind: 'number' | 'string' | undefined;
  private names: Array<string | undefined> = []; // string id by key
  private readonly nameKeys = new Map<string, number>();
  private freed = false;

  constructor(options: FingerprintIndexOptions = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`options must be an object, got ${show(options)}`);
    }
    for (const key of Object.keys(options)) {
      if (!['bits', 'maxDistance', 'layout', 'bytesPerFingerprint'].includes(key))
        throw new TypeError(`unknown option ${JSON.stringify(key)}`);
    }
    const bits = options.bits ?? 64;
    if (bits !== 64 && bits !== 128) {
      throw new (typeof bits === 'number' ? RangeError : TypeError)(`bits must be 64 or 128, got ${show(bits)}`);
    }
    const k = options.maxDistance ?? 3;
    if (typeof k !== 'number') throw new TypeError(`maxDistance must be a number, got ${show(k)}`);
    if (!Number.isInteger(k) || k < 0 || k > bits)
      throw new RangeError(`maxDistance must be an integer from 0 to ${bits}, got ${show(k)}`);
    const budget = options.bytesPerFingerprint;
    if (budget !== undefined && (typeof budget !== 'number' || !(budget > 0) || !Number.isFinite(budget))) {
      throw new RangeError(`bytesPerFingerprint must be a positive number, got ${show(budget)}`);
    }
    this.layoutOption = validateLayout(options.layout, bits);
    this.bits = bits;
    this.maxDistance = k;
    this.budget = budget;
    this.words = bits === 64 ? 1 : 2;
    this.rt = wasm();
    unfreed.register(this, { heap: this.rt.heap, blocks: this.blocks }, this);
    this.hdr = this.alloc(HEADER_BYTES);
    this.rt.heap.u8.fill(0, this.hdr, this.hdr + HEADER_BYTES);
    this.plan = this.planFor(0);
    this.setHeader(H_WORDS, this.words);
    this.ensureCapacity(0);
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
  add(id: FingerprintId, fingerprint: bigint): void {
    this.checkLive();
    this.checkIdKind(id, 'id');
    const [lo, hi] = this.checkFingerprint(fingerprint, 'fingerprint');
    if (this.slotOf(id) >= 0) throw new RangeError(`id ${show(id)} is already in the index`);
    this.idKind = typeof id as 'number' | 'string';
    const key = this.newKey(id);
    this.ensureCapacity(this.slots + 1);
    const slot = this.slots;
    const u64 = this.rt.heap.u64;
    u64[this.master / 8 + slot * this.words] = lo;
    if (this.words === 2) u64[this.master / 8 + slot * 2 + 1] = hi;
    this.rt.heap.u32[this.keys / 4 + slot] = key;
    this.pending.set(key, slot);
    this.slots++;
    this.live++;
    this.setHeader(H_SLOTS, this.slots);
    if (this.slots - this.sorted >= bufferLimit(this.live)) this.merge();
  }

  /**
   * Adds many fingerprints at once (the bulk build): `fingerprints` holds one word per id at 64 bits, two (low
   * word first) at 128. Validates everything first: a duplicate or already present id throws and adds nothing.
   */
  addMany(ids: ArrayLike<FingerprintId>, fingerprints: BigUint64Array): void {
    this.checkLive();
    if (ids === null || typeof ids !== 'object' || typeof (ids as ArrayLike<unknown>).length !== 'number') {
      throw new TypeError(`ids must be an array or Uint32Array, got ${show(ids)}`);
    }
    if (!(fingerprints instanceof BigUint64Array))
      throw new TypeError(`fingerprints must be a BigUint64Array, got ${show(fingerprints)}`);
    const n = ids.length;
    if (fingerprints.length !== n * this.words) {
      throw new RangeError(
        `fingerprints must hold ${this.words} word(s) per id (${n * this.words} for ${n} ids), got ${fingerprints.length}`,
      );
    }
    if (n === 0) return;
    if (this.slots > this.sorted) this.merge();
    const heap = this.rt.heap;
    const k = kernelsOf(this.rt);
    const sc = scratch(heap);
    let sortedKeys: number;
    let sortedSlots: number;
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
    if (kind === 'string') {
      // String keys are handed out in ascending order, so the new keys are sorted and above every present key.
      const seen = new Set<string>();
      for (let i = 0; i < n; i++) {
        const s = ids[i] as string;
        if (this.nameKeys.has(s)) throw new RangeError(`ids[${i}] ${show(s)} is already in the index`);
        if (seen.has(s)) throw new RangeError(`ids[${i}] ${show(s)} appears twice in the batch`);
        seen.add(s);
      }
      if (this.names.length + n > MAX_U32)
        throw new RangeError(`too many string ids for one index (${this.names.length + n})`);
      this.idKind = 'string';
      sortedKeys = sc.a.reserve(n * 4);
      sortedSlots = sc.b.reserve(n * 4);
      const u32 = heap.u32;
      for (let i = 0; i < n; i++) {
        const key = this.names.length;
        this.names.push(ids[i] as string);
        this.nameKeys.set(ids[i] as string, key);
        u32[sortedKeys / 4 + i] = key;
        u32[sortedSlots / 4 + i] = this.slots + i;
      }
    } else {
      const ka = sc.a.reserve(n * 4);
      const va = sc.b.reserve(n * 4);
      const u32 = heap.u32;
      if (ids instanceof Uint32Array) u32.set(ids, ka / 4);
      else for (let i = 0; i < n; i++) u32[ka / 4 + i] = ids[i] as number;
      for (let i = 0; i < n; i++) u32[va / 4 + i] = this.slots + i;
      // Ids already ascending (a common bulk load) need neither the sort nor its scratch.
      let ascending = true;
      for (let i = 1; i < n && ascending; i++) ascending = u32[ka / 4 + i]! > u32[ka / 4 + i - 1]!;
      let inScratch = false;
      let kb = 0;
      let vb = 0;
      if (!ascending) {
        kb = sc.c.reserve(n * 4);
        vb = sc.d.reserve(n * 4);
        inScratch = k.indexSortPairs(ka, va, n, kb, vb) === 1;
      }
      sortedKeys = inScratch ? kb : ka;
      sortedSlots = inScratch ? vb : va;
      const repeat = k.indexFirstRepeat(sortedKeys, n);
      if (repeat >= 0) throw new RangeError(`id ${heap.u32[sortedKeys / 4 + repeat]} appears twice in the batch`);
      const common = k.indexFirstCommon(this.hdr, this.keys, sortedKeys, n);
      if (common >= 0) throw new RangeError(`id ${heap.u32[sortedKeys / 4 + common]} is already in the index`);
      this.idKind = 'number';
    }
    this.ensureCapacity(this.slots + n, true);
    heap.u64.set(fingerprints, this.master / 8 + this.slots * this.words);
    // Keys per slot: the sorted pairs carry slot numbers, so write each key at its slot.
    const u32 = heap.u32;
    for (let i = 0; i < n; i++) u32[this.keys / 4 + u32[sortedSlots / 4 + i]!] = u32[sortedKeys / 4 + i]!;
    this.slots += n;
    this.live += n;
    this.setHeader(H_SLOTS, this.slots);
    this.merge({ keys: sortedKeys, slots: sortedSlots, n });
  }

  /**
   * Removes `id`; returns false (and changes nothing) when it is not in the index. Ids of the wrong kind
   * (not a u32 number or string) throw TypeError/RangeError.
   */
  remove(id: FingerprintId): boolean {
    this.checkLive();
    this.checkIdKind(id, 'id');
    const slot = this.slotOf(id);
    if (slot < 0) return false;
    const u32 = this.rt.heap.u32;
    u32[this.dead / 4 + (slot >>> 5)]! |= 1 << (slot & 31);
    const key = u32[this.keys / 4 + slot]!;
    this.pending.delete(key);
    if (typeof id === 'string') {
      this.nameKeys.delete(id);
      this.names[key] = undefined;
    }
    this.deadCount++;
    this.live--;
    this.setHeader(H_ANY_DEAD, 1);
    if (this.deadCount >= Math.max(1024, this.live >>> 2)) this.merge();
    return true;
  }

  /** Whether `id` is in the index. */
  has(id: FingerprintId): boolean {
    this.checkLive();
    this.checkIdKind(id, 'id');
    return this.slotOf(id) >= 0;
  }

  /** Every fingerprint within `k` (default maxDistance) of `fingerprint`, sorted by distance, then id. */
  query(fingerprint: bigint, k?: number): Neighbor[] {
    this.checkLive();
    const [lo, hi] = this.checkFingerprint(fingerprint, 'fingerprint');
    const kk = this.checkK(k);
    const q = scratch(this.rt.heap).query.reserve(16);
    const u64 = this.rt.heap.u64;
    u64[q / 8] = lo;
    u64[q / 8 + 1] = hi;
    return this.run(q, 1, kk)[0]!;
  }

  /** query() for each fingerprint of a batch (one word each at 64 bits, two at 128). */
  queryMany(fingerprints: BigUint64Array, k?: number): Neighbor[][] {
    this.checkLive();
    if (!(fingerprints instanceof BigUint64Array))
      throw new TypeError(`fingerprints must be a BigUint64Array, got ${show(fingerprints)}`);
    if (fingerprints.length % this.words !== 0) {
      throw new RangeError(`fingerprints must hold 2 words per 128-bit fingerprint, got length ${fingerprints.length}`);
    }
    const kk = this.checkK(k);
    const nq = fingerprints.length / this.words;
    const q = scratch(this.rt.heap).query.reserve(Math.max(16, fingerprints.length * 8));
    this.rt.heap.u64.set(fingerprints, q / 8);
    return this.run(q, nq, kk);
  }

  /** Merges the insert buffer and purges removed entries now (queries are fastest after this). */
  compact(): void {
    this.checkLive();
    if (this.slots > this.sorted || this.deadCount > 0) this.merge();
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

  /** The index in the binary format of format.ts (merges the buffer first). */
  serialize(): Uint8Array {
    this.checkLive();
    this.compact();
    const heap = this.rt.heap;
    const n = this.live;
    const fingerprints = heap.u64.slice(this.master / 8, this.master / 8 + n * this.words);
    const keys = heap.u32.slice(this.keys / 4, this.keys / 4 + n);
    const ids: FingerprintId[] | Uint32Array =
      this.idKind === 'string' ? Array.from(keys, (key) => this.names[key]!) : keys;
    return encodeIndex(
      {
        bits: this.bits,
        maxDistance: this.maxDistance,
        layout: this.layoutOption,
        bytesPerFingerprint: this.budget,
        idKind: this.idKind ?? 'number',
        ids,
        fingerprints,
      },
      (bytes) => this.checksum(bytes),
    );
  }

  /** Loads an index written by serialize(); throws RangeError on truncated, altered or foreign bytes. */
  static deserialize(bytes: Uint8Array): FingerprintIndex {
    const rt = wasm();
    const checksum = (data: Uint8Array): bigint => {
      const region = scratch(rt.heap).a;
      const ptr = region.reserve(Math.max(16, data.length));
      rt.heap.u8.set(data, ptr);
      return BigInt.asUintN(64, kernelsOf(rt).indexChecksum(ptr, data.length));
    };
    const decoded = decodeIndex(bytes, checksum);
    let index: FingerprintIndex;
    try {
      index = new FingerprintIndex({
        bits: decoded.bits,
        maxDistance: decoded.maxDistance,
        ...(decoded.layout !== undefined ? { layout: decoded.layout } : {}),
        ...(decoded.bytesPerFingerprint !== undefined ? { bytesPerFingerprint: decoded.bytesPerFingerprint } : {}),
      });
    } catch (error) {
      throw new RangeError(`invalid index bytes: ${(error as Error).message}`);
    }
    try {
      if (decoded.ids.length > 0) index.addMany(decoded.ids, decoded.fingerprints);
    } catch (error) {
      index.free();
      throw new RangeError(`invalid index bytes: ${(error as Error).message}`);
    }
    return index;
  }

  /** Releases the index's WebAssembly memory for reuse; the index cannot be used afterwards. */
  free(): void {
    if (this.freed) return;
    unfreed.unregister(this);
    for (const ptr of this.blocks.keys()) this.rt.heap.release(ptr);
    this.blocks.clear();
    this.pending.clear();
    this.nameKeys.clear();
    this.names = [];
    this.freed = true;
  }

  // ---- internals ----

  private checksum(bytes: Uint8Array): bigint {
    const region = scratch(this.rt.heap).a;
    const ptr = region.reserve(Math.max(16, bytes.length));
    this.rt.heap.u8.set(bytes, ptr);
    return BigInt.asUintN(64, kernelsOf(this.rt).indexChecksum(ptr, bytes.length));
  }

  private checkLive(): void {
    if (this.freed) throw new Error('this FingerprintIndex has been freed');
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
    if (fp < 0n || fp >> BigInt(this.bits) !== 0n) {
      throw new RangeError(`${name} must be a ${this.bits}-bit unsigned fingerprint, got ${show(fp)}`);
    }
    return [fp & M64, fp >> 64n];
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

  private newKey(id: FingerprintId): number {
    if (typeof id === 'number') return id;
    if (this.names.length > MAX_U32) throw new RangeError(`too many string ids for one index`);
    const key = this.names.length;
    this.names.push(id);
    this.nameKeys.set(id, key);
    return key;
  }

  /** The live slot of `id`, or -1. */
  private slotOf(id: FingerprintId): number {
    let key: number;
    if (typeof id === 'string') {
      const k = this.nameKeys.get(id);
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

  private alloc(bytes: number): number {
    const ptr = this.rt.heap.alloc(bytes);
    this.blocks.set(ptr, Math.max(16, Math.ceil(bytes / 16) * 16));
    return ptr;
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

  /** Grows master/keys/dead to hold `slots` (doubling, or exactly when `exact`). */
  private ensureCapacity(slots: number, exact = false): void {
    if (slots <= this.capacity && this.master !== 0) return;
    const cap = Math.max(64, exact ? slots : Math.max(slots, this.capacity * 2));
    const w = this.words;
    const master = this.alloc(cap * 8 * w);
    const keys = this.alloc(cap * 4);
    const deadBytes = Math.ceil(cap / 32) * 4;
    const dead = this.alloc(deadBytes);
    const heap = this.rt.heap;
    heap.u8.fill(0, dead, dead + deadBytes);
    if (this.master !== 0) {
      heap.u8.copyWithin(master, this.master, this.master + this.slots * 8 * w);
      heap.u8.copyWithin(keys, this.keys, this.keys + this.slots * 4);
      heap.u8.copyWithin(dead, this.dead, this.dead + Math.ceil(this.slots / 32) * 4);
      this.release(this.master);
      this.release(this.keys);
      this.release(this.dead);
    }
    this.master = master;
    this.keys = keys;
    this.dead = dead;
    this.capacity = cap;
    this.setHeader(H_MASTER, master);
    this.setHeader(H_DEAD, dead);
  }

  /**
   * Rebuilds: live sorted part + live buffer (sorted by key, or the given sorted pairs) → new master/keys in key
   * order, then tables re-planned for the new size.
   */
  private merge(given?: { keys: number; slots: number; n: number }): void {
    const heap = this.rt.heap;
    const k = kernelsOf(this.rt);
    const sc = scratch(heap);
    let bk: number;
    let bs: number;
    let nb: number;
    if (given) {
      ({ keys: bk, slots: bs, n: nb } = given);
    } else {
      nb = this.slots - this.sorted;
      const ka = sc.a.reserve(Math.max(16, nb * 4));
      const va = sc.b.reserve(Math.max(16, nb * 4));
      const kb = sc.c.reserve(Math.max(16, nb * 4));
      const vb = sc.d.reserve(Math.max(16, nb * 4));
      const u32 = heap.u32;
      u32.copyWithin(ka / 4, this.keys / 4 + this.sorted, this.keys / 4 + this.slots);
      for (let i = 0; i < nb; i++) u32[va / 4 + i] = this.sorted + i;
      const inScratch = k.indexSortPairs(ka, va, nb, kb, vb) === 1;
      bk = inScratch ? kb : ka;
      bs = inScratch ? vb : va;
    }
    const live = this.live;
    if (this.sorted === 0 && this.deadCount === 0 && nb === this.slots && inSlotOrder(heap.u32, bs, nb)) {
      // Everything is new and already in key order at its slot: the fingerprints stay where they are.
      this.sorted = this.slots;
      this.pending.clear();
      this.setHeader(H_SORTED, this.sorted);
      this.buildTables();
      return;
    }
    const cap = Math.max(64, live + (given ? 0 : bufferLimit(live)));
    const w = this.words;
    const master = this.alloc(cap * 8 * w);
    const keys = this.alloc(cap * 4);
    const deadBytes = Math.ceil(cap / 32) * 4;
    const dead = this.alloc(deadBytes);
    const written = k.indexMerge(this.hdr, this.keys, bk, bs, nb, master, keys);
    if (written !== live) throw new Error(`internal: merge wrote ${written} fingerprints, expected ${live}`);
    this.release(this.master);
    this.release(this.keys);
    this.release(this.dead);
    this.rt.heap.u8.fill(0, dead, dead + deadBytes);
    this.master = master;
    this.keys = keys;
    this.dead = dead;
    this.capacity = cap;
    this.sorted = this.slots = live;
    this.deadCount = 0;
    this.pending.clear();
    this.setHeader(H_MASTER, master);
    this.setHeader(H_DEAD, dead);
    this.setHeader(H_ANY_DEAD, 0);
    this.setHeader(H_SORTED, live);
    this.setHeader(H_SLOTS, live);
    this.buildTables();
  }

  private buildTables(): void {
    for (const ptr of this.tableBlocks) this.release(ptr);
    this.tableBlocks = [];
    this.release(this.desc);
    this.desc = 0;
    // Until every table is built the index answers by linear scan (table count 0), so a failed allocation
    // below leaves a slower but correct index.
    this.setHeader(H_TABLES, 0);
    this.setHeader(H_DESCRIPTORS, 0);
    const plan = this.planFor(this.live);
    this.plan = planIndex({ bits: this.bits, maxDistance: this.maxDistance, size: this.live, layout: 'linear' });
    const tables = plan.tables.length;
    this.setHeader(H_DIR_BITS, plan.directoryBits);
    this.setHeader(H_TAIL_BITS, plan.tailBits);
    if (tables === 0) {
      this.plan = plan;
      return;
    }
    const n = this.live;
    const dirBytes = 4 * (2 ** plan.directoryBits + 1);
    this.desc = this.alloc(tables * DESCRIPTOR_BYTES);
    this.setHeader(H_DESCRIPTORS, this.desc);
    for (let t = 0; t < tables; t++) {
      const dir = this.alloc(dirBytes);
      const ids = this.alloc(Math.max(16, n * 4));
      const tails = this.alloc(Math.max(16, n * (plan.tailBits / 8)));
      this.tableBlocks.push(dir, ids, tails);
      const table = plan.tables[t]!;
      if (table.segments.length > MAX_SEGMENTS) throw new Error(`internal: ${table.segments.length} segments`);
      const base = this.desc + t * DESCRIPTOR_BYTES;
      const heap = this.rt.heap;
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
      // Scratch for the two-pass scatter: a u64 key and a u32 slot per entry.
      const tmp = plan.directoryBits > 10 ? scratch(heap).a.reserve(n * 12 + 16) : 0;
      kernelsOf(this.rt).indexBuildTable(this.hdr, t, tmp);
    }
    this.setHeader(H_TABLES, tables);
    this.plan = plan;
  }

  private radius(k: number): number {
    if (this.plan.tables.length === 0) return 0;
    const m = this.plan.blocks.length;
    const s = this.plan.leading;
    return s * Math.floor(k / m) + Math.max(0, s - m + (k % m));
  }

  /** Runs nq queries from `q`, growing the output until everything fits; maps slots to ids and sorts. */
  private run(q: number, nq: number, k: number): Neighbor[][] {
    const heap = this.rt.heap;
    const kern = kernelsOf(this.rt);
    const sc = scratch(heap);
    const radius = this.radius(k);
    const results: Neighbor[][] = [];
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
          list[j] = { id: this.idKind === 'string' ? this.names[key]! : key, distance: u32[at + 2 * j + 1]! };
        }
        at += 2 * c;
        list.sort(this.idKind === 'string' ? byDistanceThenString : byDistanceThenNumber);
        results.push(list);
      }
      done += completed;
      if (done < nq) {
        if (completed === 0) cap *= 4; // the next query alone did not fit
      }
    }
    return results;
  }
}

function inSlotOrder(u32: Uint32Array, slots: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (u32[slots / 4 + i] !== i) return false;
  return true;
}

function byDistanceThenNumber(a: Neighbor, b: Neighbor): number {
  return a.distance - b.distance || (a.id as number) - (b.id as number);
}

function byDistanceThenString(a: Neighbor, b: Neighbor): number {
  return a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
