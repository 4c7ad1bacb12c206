// The string ids of a FingerprintIndex: each live string gets a dense u32 key (what the index stores per slot).
//
// JavaScript caps one Map at 2^24 entries and one array at ~2^27 elements, so neither holds the store alone:
// string → key lives in SHARDS chains of Maps (a string's shard is a hash of its UTF-16 code units; a chain grows
// by another Map when every Map in it holds `mapCapacity` entries, so no Map ever reaches the engine's limit,
// whatever the strings), and key → string in pages of PAGE keys. The only bound left is the key space, checked
// up front (MAX_STRING_IDS). Removed keys go on a free list and are handed out again, and pages and Maps that
// empty are dropped, so memory follows the live ids, not the number ever added.

/** Most string ids one index holds at once: keys are u32. */
export const MAX_STRING_IDS = 0xffffffff;
/** Entries per Map: half of V8's 2^24, far from any engine limit. */
export const DEFAULT_MAP_CAPACITY = 2 ** 23;
const SHARDS = 16;
const PAGE_BITS = 16;
const PAGE = 1 << PAGE_BITS;

export class StringIdStore {
  private readonly shards: Array<Array<Map<string, number>>> = Array.from({ length: SHARDS }, () => [new Map()]);
  private pages: Array<Array<string | undefined> | undefined> = [];
  private pageLive: number[] = [];
  private free = new Uint32Array(0);
  private freeCount = 0;
  private next = 0; // every key ≥ next is unused
  private count = 0;

  constructor(private readonly mapCapacity = DEFAULT_MAP_CAPACITY) {}

  /** Live ids. */
  get size(): number {
    return this.count;
  }

  /** Key slots in use or on the free list (what the key → string pages span); for memory tests. */
  get slots(): number {
    return this.next;
  }

  /** Maps held (one per shard at least); for tests of the chain growth. */
  get maps(): number {
    let n = 0;
    for (const chain of this.shards) n += chain.length;
    return n;
  }

  /** The key of `id`, or undefined. */
  get(id: string): number | undefined {
    for (const map of this.shards[shardOf(id)]!) {
      const key = map.get(id);
      if (key !== undefined) return key;
    }
    return undefined;
  }

  /** The id of a live key. */
  name(key: number): string {
    const id = this.pages[key >>> PAGE_BITS]?.[key & (PAGE - 1)];
    if (id === undefined) throw new Error(`internal: string id key ${key} is not live`);
    return id;
  }

  /**
   * Adds `id` and returns its key (the last freed one, else the next unused), or -1 when `id` is present.
   * Throws RangeError when MAX_STRING_IDS are live.
   */
  insert(id: string): number {
    const chain = this.shards[shardOf(id)]!;
    let map: Map<string, number> | undefined;
    for (const m of chain) {
      if (m.has(id)) return -1;
      if (!map && m.size < this.mapCapacity) map = m;
    }
    if (this.count >= MAX_STRING_IDS) throw new RangeError(`an index holds at most ${MAX_STRING_IDS} string ids`);
    const key = this.freeCount > 0 ? this.free[--this.freeCount]! : this.next++;
    if (!map) {
      map = new Map();
      chain.push(map);
    }
    map.set(id, key);
    const p = key >>> PAGE_BITS;
    let page = this.pages[p];
    if (!page) {
      page = new Array<string | undefined>(PAGE);
      this.pages[p] = page;
      this.pageLive[p] = 0;
    }
    page[key & (PAGE - 1)] = id;
    this.pageLive[p]!++;
    this.count++;
    return key;
  }

  /**
   * Removes `id` and returns its key (undefined when absent). Undoes insert() exactly when called in reverse
   * order: the key goes back where insert() took it from.
   */
  delete(id: string): number | undefined {
    const chain = this.shards[shardOf(id)]!;
    const at = chain.findIndex((m) => m.has(id));
    if (at < 0) return undefined;
    const map = chain[at]!;
    const key = map.get(id)!;
    map.delete(id);
    if (map.size === 0 && chain.length > 1) chain.splice(at, 1);
    const p = key >>> PAGE_BITS;
    const page = this.pages[p]!;
    page[key & (PAGE - 1)] = undefined;
    if (--this.pageLive[p]! === 0) {
      this.pages[p] = undefined;
      this.pageLive[p] = 0;
    }
    this.count--;
    if (key === this.next - 1) this.next--;
    else {
      if (this.freeCount === this.free.length) {
        const grown = new Uint32Array(Math.max(64, this.free.length * 2));
        grown.set(this.free);
        this.free = grown;
      }
      this.free[this.freeCount++] = key;
    }
    if (this.count === 0) this.reset();
    return key;
  }

  /** Frees everything. */
  clear(): void {
    for (const chain of this.shards) chain.splice(0, chain.length, new Map());
    this.reset();
    this.count = 0;
  }

  private reset(): void {
    // Nothing is live: the free list and the pages start over, so a store emptied by removals holds nothing.
    this.pages = [];
    this.pageLive = [];
    this.free = new Uint32Array(0);
    this.freeCount = 0;
    this.next = 0;
  }
}

/** FNV-1a over the UTF-16 code units, folded to a shard. */
function shardOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 16)) & (SHARDS - 1);
}
