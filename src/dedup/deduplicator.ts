// Incremental dedup (the CLI's --state): a Deduplicator remembers every document it has seen (fingerprint, content
// keys, shingle set, cluster) but not its text, and decides for each new batch which documents duplicate earlier
// ones. The documents of a batch that it keeps are exactly those that one dedup() over everything seen so far, with
// keep 'first', keeps: a new document is dropped when its cluster holds an earlier document. What earlier batches
// kept cannot be taken back, so a new document that joins two earlier clusters is simply dropped (its duplicateOf
// names the first document of its cluster that it was found to reach).
//
// A batch costs its own hashing, one join over all fingerprints in which the pairs of two documents already joined
// to earlier batches are never emitted (one group for all of them, src/join/join.ts), and the verification of the
// pairs that involve new documents. save() and load() carry the state across processes as one block of bytes
// (versioned, checksummed); open() and saveTo() as a directory that each run appends a segment to (state-dir.ts),
// reading earlier documents' shingle sets only when they are in candidate pairs.
import { checkTextItems, show } from '../errors.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import { walkInChunks } from '../join/join.js';
import { planJoinFor } from '../join/join-estimate.js';
import { type DedupOptions, checkDedupOptions, type CheckedDedupOptions, featurelessByTrimmedText } from './dedup.js';
import { forestJoin, forestRoot } from './forest.js';
import { type ProbePairs, probeJoinByBlock, probeJoinThreads } from './probe-join.js';
import { PairChecks, pairFlags } from './pair-checks.js';
import { SetStore, STORE_WINDOW_BYTES } from './set-store.js';
import { SET_HASH_BYTES } from './shingle-sets.js';
import { type HashResult, hashTexts } from './stream-tasks.js';
import { type StreamOptions, hashBatches } from './stream-hash.js';
import { firstOfEqual } from './exact-copies.js';
import { checkDocumentSizes } from './document-size.js';
import {
  type StaleLock,
  LEGACY_STATE,
  LayeredSets,
  MANIFEST,
  type NodeFs,
  type SegmentEntry,
  type StateLock,
  TRAILER,
  checkSignature,
  checksum,
  lockState,
  openSegment,
  pad8,
  readManifest,
  sealed,
  writeManifest,
  writeSegment,
} from './state-dir.js';

/** What one add() or addStream() decided for its batch: typed-array columns by document of the batch. */
export interface DeduplicatorBatch {
  /** Index (among every document seen) of the batch's first document. */
  first: number;
  /** For each document of the batch, its cluster: the index of the cluster's first document (itself when kept). */
  clusterOf: Uint32Array;
  /**
   * For each document of the batch, the index (among every document seen) of the earlier document kept in its
   * place, or -1 when it is kept.
   */
  duplicateOf: Int32Array;
  /** Candidate pairs (within k, involving the batch) handed to verification. */
  candidates: number;
  /** Candidate pairs whose shingle sets were compared (0 without verification). */
  checks: number;
}

/** A group for every fingerprint already joined to an earlier batch: their pairs change no decision. */
const EARLIER = 0xfffffffe;
/**
 * A batch at most 1/PROBE_SHARE of the documents before it is joined by probes (probe-join.ts); a larger one by the
 * join over every fingerprint, which sorts them all per table but then costs no more than a run over them.
 */
const PROBE_SHARE = 4;
/** Where a document's content hash and its trimmed text's hash start among its four key words (hashTexts' keys). */
const CONTENT = 0;
const TRIMMED = 2;
const MAGIC = 'simhash-wasm/state';
/**
 * save()'s bytes (one block holding everything): version 2 keeps 4-byte shingle hashes (SET_HASH_BYTES); version 1,
 * with 8-byte ones, still loads (each hash's top half). A directory state (open, saveTo) has its own (state-dir.ts).
 */
const VERSION = 2;
/** The earlier version of save()'s bytes that load() still reads: its sets hold 8-byte hashes. */
const WIDE_VERSION = 1;

/**
 * Incremental dedup: remembers every document it has seen (fingerprint, content keys, shingle set, cluster, but not
 * its text) and decides for each new batch which documents duplicate earlier ones or each other. A batch keeps
 * exactly the documents that one dedup() over everything seen so far would keep; what earlier batches kept stays
 * kept. Options are dedup()'s, except that clusters are always connected (`mode: 'connected'`), `keep` is always
 * 'first' and the tokenizer cannot be a function (otherwise a RangeError or TypeError). save() and load() carry the
 * state across processes as bytes; open() and saveTo() as a directory that each run appends to (Node).
 *
 * @example
 * ```ts
 * import { Deduplicator, init } from 'simhash-wasm';
 *
 * await init();
 * const dedup = new Deduplicator({ k: 12 });
 * dedup.add(['The quick brown fox jumps over the lazy dog', 'An unrelated text']);
 * const batch = dedup.add(['The quick brown fox jumps over the lazy dog!']);
 * batch.duplicateOf[0]; // 0: the first document of the earlier batch is kept in its place
 * const state: Uint8Array = dedup.save();
 * const again = Deduplicator.load(state, { k: 12 }); // same options, or load throws
 * ```
 */
export class Deduplicator {
  private readonly o: CheckedDedupOptions;
  /** The options that decide fingerprints and pairs, as saved and compared on load. */
  private readonly signature: Record<string, unknown>;
  private n = 0;
  private fps = new BigUint64Array(0);
  /** Content hash (2 words) and, for documents without words, trimmed-text hash (2 words). */
  private keys = new BigUint64Array(0);
  private wordless = new Uint8Array(0);
  private parent = new Uint32Array(0);
  /** The sets of the documents added in this process (those opened from segments are read from their files). */
  private readonly store: SetStore;
  /** Every document's set: from the segments below `sets.from`, from the store above. */
  private sets: LayeredSets;
  /** The labels (add's `labels`) of the documents from `sets.from` on; the CLI keeps documents' names there. */
  private labels: string[] = [];
  /** The labels of the documents opened from segments, each segment's parsed when first asked for. */
  private segmentLabels: { first: number; starts: Uint32Array; bytes: Uint8Array }[] = [];
  /** Whether texts without features pair only through their trimmed texts (as in dedup()). */
  private readonly byTrimmedText: boolean;
  /** The directory state this one was opened from or last saved to, its segments, and the documents they hold. */
  private dir: string | null = null;
  private segments: SegmentEntry[] = [];
  private committed = 0;
  private fs: NodeFs | null = null;
  private fds: number[] = [];
  /** The lock of `dir` (DIR/lock), held until close(): one process at a time appends to a directory state. */
  private lock: StateLock | null = null;
  /** Segments of `dir` being written in the background (addStream's documents), not yet named by a manifest. */
  private pending: { from: number; to: number; entry: Promise<SegmentEntry> }[] = [];

  constructor(options: DedupOptions = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options))
      throw new TypeError(`options must be an object, got ${show(options)}`);
    this.o = checkDedupOptions(options);
    if (this.o.mode !== 'connected')
      throw new RangeError(`a Deduplicator forms connected clusters, got mode ${show(this.o.mode)}`);
    if (this.o.keep !== 'first')
      throw new RangeError(
        `a Deduplicator keeps the first document of each cluster (what earlier batches kept stays kept), got keep ${show(this.o.keep)}`,
      );
    const plan = createSimHasher({ ...this.o.hashOptions, bits: this.o.bits }).options;
    if (typeof plan.tokenizer === 'function')
      throw new TypeError('a Deduplicator cannot use a tokenizer function: its state names the tokenizer');
    this.byTrimmedText = featurelessByTrimmedText(plan, this.o.verify);
    this.signature = {
      k: this.o.k,
      bits: this.o.bits,
      threshold: this.o.verify ? this.o.verify.threshold : false,
      shingleWidth: this.o.verify ? this.o.verify.width : false,
      preset: plan.preset,
      tokenizer: plan.tokenizer,
      width: plan.width,
      normalize: plan.normalize,
      locale: plan.locale ?? null,
      spec: plan.spec,
    };
    this.store = new SetStore(Infinity, null, this.sameWordless);
    this.sets = new LayeredSets(null, [], [], [], 0, this.store, this.sameWordless);
  }

  /** Two documents without words: whether their trimmed texts are equal (by their hashes). */
  private readonly sameWordless = (i: number, j: number): boolean => {
    const k = this.keys;
    return k[i * 4 + 2] === k[j * 4 + 2] && k[i * 4 + 3] === k[j * 4 + 3];
  };

  /**
   * The process whose lock on the directory state open() or saveTo() took over (a lock left by a process of this
   * host that is gone), or null.
   */
  get tookOverLock(): StaleLock | null {
    return this.lock?.tookOver ?? null;
  }

  /** Documents seen so far. */
  get count(): number {
    return this.n;
  }

  /** Document i's label, as given to add() (empty when none was). */
  labelOf(i: number): string {
    if (!Number.isInteger(i) || i < 0 || i >= this.n)
      throw new RangeError(`document must be an index below ${this.n}, got ${show(i)}`);
    if (i >= this.sets.from) return this.labels[i - this.sets.from] ?? '';
    let lo = 0;
    let hi = this.segmentLabels.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.segmentLabels[mid]!.first <= i) lo = mid;
      else hi = mid - 1;
    }
    const s = this.segmentLabels[lo]!;
    const q = i - s.first;
    return new TextDecoder().decode(s.bytes.subarray(s.starts[q]!, s.starts[q + 1]!));
  }

  /**
   * Adds a batch of documents (with a label each, saved with the state, where given) and says which of them
   * duplicate earlier ones or each other.
   */
  add(texts: readonly (string | Uint8Array)[], labels?: readonly string[]): DeduplicatorBatch {
    if (!Array.isArray(texts)) throw new TypeError(`texts must be an array, got ${show(texts)}`);
    if (labels !== undefined) {
      if (!Array.isArray(labels) || labels.length !== texts.length)
        throw new TypeError(`labels must be an array of ${texts.length} strings, got ${show(labels)}`);
      for (let i = 0; i < labels.length; i++)
        if (typeof labels[i] !== 'string') throw new TypeError(`labels[${i}] must be a string, got ${show(labels[i])}`);
    }
    checkTextItems(texts);
    checkDocumentSizes(texts, this.o.verify);
    const { bits, verify } = this.o;
    const first = this.n;
    const hashed = hashTexts(texts, { ...this.o.hashOptions, bits }, true, verify ? verify.width : 0);
    // Everything that can fail has run: the state changes from here on.
    this.appendHashed(hashed, labels);
    return this.settle(first);
  }

  /**
   * add() for a stream of texts of any length, fingerprinted in batches on `threads` worker threads (Node) as
   * dedupStream does; the texts are not kept. `label(i)` names the stream's i-th text (saved with the state), asked
   * once its batch is hashed.
   */
  async addStream(
    texts: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
    options: StreamOptions & { label?: (i: number) => string } = {},
  ): Promise<DeduplicatorBatch> {
    const { label, ...stream } = options;
    if (label !== undefined && typeof label !== 'function')
      throw new TypeError(`options.label must be a function, got ${show(label)}`);
    const first = this.n;
    const { verify, bits } = this.o;
    try {
      for await (const hashed of hashBatches(
        texts,
        { ...this.o.hashOptions, bits, ...stream },
        true,
        verify ? verify.width : 0,
      )) {
        const labels = label ? Array.from(hashed.featureCounts, (_, q) => label(hashed.first + q)) : undefined;
        this.appendHashed(hashed, labels);
      }
      // The probe of the earlier fingerprints on the pool's workers, idle now that the stream is fingerprinted;
      // meanwhile this thread starts the segment, joins exact copies and probes the batch with itself.
      const threads = stream.threads ?? 1;
      if (threads > 1 && this.probes(first)) {
        const fps = this.fps.subarray(0, this.n);
        const fresh = fps.subarray(first);
        const probing = probeJoinThreads(fps.subarray(0, first), fresh, this.o.k, threads);
        probing.catch(() => undefined); // awaited below; this only keeps a failure meanwhile from counting as unhandled
        this.startSegment();
        this.joinCopies(first);
        const own = probeJoinByBlock(fresh, fresh, this.o.k);
        return this.settle(first, { earlier: await probing, own });
      }
      this.startSegment();
    } catch (error) {
      this.truncate(first);
      throw error;
    }
    return this.settle(first);
  }

  /** Whether the documents from `first` on are few beside those before: then they are joined by probes. */
  private probes(first: number): boolean {
    const m = this.n - first;
    return this.n >= 2 && m > 0 && this.o.bits === 64 && m * PROBE_SHARE <= first;
  }

  /**
   * Stores a hashed batch (hashTexts' or hashBatches' result, with copy keys and, under verification, sets) without
   * deciding anything yet.
   */
  private appendHashed(hashed: HashResult, labels?: readonly string[]): void {
    const words = this.o.bits / 64;
    const first = this.n;
    const m = hashed.featureCounts.length;
    if (!hashed.copyKeys || (this.o.verify && !hashed.sets))
      throw new Error('internal: a batch without its keys or sets');
    this.reserve(first + m);
    this.fps.set(hashed.fingerprints.subarray(0, m * words), first * words);
    this.keys.set(hashed.copyKeys.subarray(0, m * 4), first * 4);
    const docs = new Uint32Array(m);
    const sets = hashed.sets;
    for (let q = 0; q < m; q++) {
      const d = first + q;
      docs[q] = d;
      this.parent[d] = d;
      this.wordless[d] =
        hashed.featureCounts[q] === 0 || (sets !== undefined && sets.starts[q] === sets.starts[q + 1]) ? 1 : 0;
      this.labels[d - this.sets.from] = labels?.[q] ?? '';
    }
    if (sets && this.o.verify) this.store.append(docs, sets);
    this.n = first + m;
  }

  /**
   * Decides the documents from `first` on (appended since the last decision): exact copies, the join, verification.
   */
  private settle(first: number, probed?: { earlier: ProbePairs[]; own: ProbePairs[] }): DeduplicatorBatch {
    const { bits, k, verify } = this.o;
    const words = bits / 64;
    const m = this.n - first;
    const forest = this.parent.subarray(0, this.n);
    // Exact copies first (addStream joined them already when it probed on its workers).
    if (m > 0 && !probed) this.joinCopies(first);
    const checks = PairChecks.onForest(forest);
    let candidates = 0;
    const fps = this.fps.subarray(0, this.n * words);
    // Documents without words pair only through their trimmed texts (joined above), where dedup() says so; a pair
    // already connected changes nothing; nor does a pair of two documents in earlier clusters (an earlier document,
    // or a new one joined to an earlier cluster and so dropped whatever else it joins).
    const consume = (pa: ArrayLike<number>, pb: ArrayLike<number>): void => {
      const a: number[] = [];
      const b: number[] = [];
      const apart = this.byTrimmedText;
      for (let p = 0; p < pa.length; p++) {
        const x = pa[p]!;
        const y = pb[p]!;
        if (apart && (this.wordless[x] || this.wordless[y])) continue;
        const rx = forestRoot(forest, x);
        const ry = forestRoot(forest, y);
        if (rx === ry || (rx < first && ry < first)) continue;
        a.push(x);
        b.push(y);
      }
      candidates += a.length;
      if (a.length === 0) return;
      if (!verify) {
        for (let p = 0; p < a.length; p++) forestJoin(forest, a[p]!, b[p]!);
        return;
      }
      pairFlags(this.n, this.sets, Uint32Array.from(a), Uint32Array.from(b), verify, checks, STORE_WINDOW_BYTES);
    };
    if (this.probes(first)) {
      // A small batch beside many earlier documents: probe with the earlier fingerprints (unless addStream's workers
      // did; a list per block either way, so that the clusters do not depend on the threads), then with the batch's
      // own (each pair then comes twice, and each document with itself: kept once, as i < j).
      const earlier = (a: Uint32Array, b: Uint32Array): void => {
        for (let p = 0; p < b.length; p++) b[p]! += first;
        consume(a, b);
      };
      for (const { a, b } of probed?.earlier ?? probeJoinByBlock(fps.subarray(0, first), fps.subarray(first), k))
        earlier(a, b);
      const fresh = fps.subarray(first);
      for (const { a, b } of probed?.own ?? probeJoinByBlock(fresh, fresh, k)) {
        const x: number[] = [];
        const y: number[] = [];
        for (let p = 0; p < a.length; p++) {
          if (a[p]! >= b[p]!) continue;
          x.push(a[p]! + first);
          y.push(b[p]! + first);
        }
        consume(x, y);
      }
    } else if (this.n >= 2 && m > 0) {
      const groups = new Uint32Array(this.n);
      const plan = planJoinFor(fps, this.n, k, bits);
      walkInChunks(
        fps,
        plan,
        (pairs) => consume(pairs.a, pairs.b),
        () => {
          for (let d = 0; d < this.n; d++) {
            const r = forestRoot(forest, d);
            groups[d] = r < first ? EARLIER : r;
          }
          return groups;
        },
      );
    }
    const duplicateOf = new Int32Array(m);
    const clusterOf = new Uint32Array(m);
    for (let q = 0; q < m; q++) {
      const r = forestRoot(forest, first + q);
      clusterOf[q] = r;
      duplicateOf[q] = r === first + q ? -1 : r;
    }
    return { first, clusterOf, duplicateOf, candidates, checks: checks.checks };
  }

  /**
   * Exact copies (by their 128-bit content hash) and texts without words (by their trimmed text) of the documents
   * from `first` on join the first document with the same key, as dedup() groups them.
   */
  private joinCopies(first: number): void {
    this.joinFirstEqual(first, CONTENT, () => true);
    if (this.byTrimmedText) this.joinFirstEqual(first, TRIMMED, (d) => this.wordless[d] === 1);
  }

  /**
   * Joins each document from `first` on (of those `include` takes) to the first document with the same key (two key
   * words from `at`): the batch's own first occurrences through a hash table in WebAssembly, the earlier documents
   * by one scan of their keys against a table of the batch's. A table over every document's key cost 27 ms a run at
   * 219,119 documents, and grows with the state; a Map of the batch's keys as numbers, 0.2 s at 10^6.
   */
  private joinFirstEqual(first: number, at: typeof CONTENT | typeof TRIMMED, include: (d: number) => boolean): void {
    const n = this.n;
    const keys = new Uint32Array(this.keys.buffer, this.keys.byteOffset, n * 8);
    const fresh: number[] = [];
    for (let d = first; d < n; d++) if (include(d)) fresh.push(d);
    if (fresh.length === 0) return;
    const gathered = new Uint32Array(fresh.length * 4);
    fresh.forEach((d, q) => gathered.set(keys.subarray(d * 8 + at * 2, d * 8 + at * 2 + 4), q * 4));
    const firstNew = firstOfEqual(new BigUint64Array(gathered.buffer), 2);
    // The batch's distinct keys in an open-addressing table by their low word (the keys are hashes), each slot the
    // index of a representative; an earlier document's key is looked up there and confirmed on all 128 bits.
    const word = (d: number) => keys[d * 8 + at * 2]!;
    const same = (d: number, e: number) => {
      for (let w = 0; w < 4; w++) if (keys[d * 8 + at * 2 + w] !== keys[e * 8 + at * 2 + w]) return false;
      return true;
    };
    let size = 16;
    while (size < fresh.length * 2) size *= 2;
    const mask = size - 1;
    const table = new Int32Array(size).fill(-1);
    fresh.forEach((d, q) => {
      if (firstNew[q] !== q) return;
      let slot = word(d) & mask;
      while (table[slot] !== -1) slot = (slot + 1) & mask;
      table[slot] = q;
    });
    const earliest = new Int32Array(fresh.length).fill(-1);
    for (let d = 0; d < first; d++) {
      for (let slot = word(d) & mask, q = table[slot]!; q !== -1; slot = (slot + 1) & mask, q = table[slot]!) {
        if (earliest[q] === -1 && same(d, fresh[q]!) && include(d)) {
          earliest[q] = d;
          break;
        }
      }
    }
    fresh.forEach((d, q) => {
      const rep = firstNew[q]!;
      const target = earliest[rep]! >= 0 ? earliest[rep]! : fresh[rep]!;
      if (target !== d) forestJoin(this.parent, target, d);
    });
  }

  /**
   * The state as bytes: a header naming the options, then fingerprints, keys, clusters and shingle sets, and a
   * checksum of it all. load() refuses bytes made with other options, another version, or damaged. It holds every
   * set in memory: for states of many documents, saveTo() a directory instead.
   */
  save(): Uint8Array {
    const n = this.n;
    const words = this.o.bits / 64;
    const sizes = new Uint32Array(n);
    let setWords = 0;
    const sets: Uint32Array[] = [];
    for (let d = 0; d < n; d++) {
      const set = this.o.verify ? this.sets.setOf(d) : new Uint32Array(0);
      sets.push(set);
      sizes[d] = set.length;
      setWords += set.length;
    }
    const roots = new Uint32Array(n);
    for (let d = 0; d < n; d++) roots[d] = forestRoot(this.parent, d);
    const labels = new TextEncoder().encode(JSON.stringify(Array.from({ length: n }, (_, d) => this.labelOf(d))));
    const header = new TextEncoder().encode(
      JSON.stringify({
        magic: MAGIC,
        version: VERSION,
        count: n,
        setWords,
        labelBytes: labels.length,
        options: this.signature,
      }),
    );
    const headerBytes = pad8(8 + header.length);
    const out = new Uint8Array(stateBytes(header.length, n, words, setWords * SET_HASH_BYTES, labels.length));
    const view = new DataView(out.buffer);
    view.setUint32(0, header.length, true);
    view.setUint32(4, VERSION, true);
    out.set(header, 8);
    let at = headerBytes;
    const put = (bytes: Uint8Array, padded: number) => {
      out.set(bytes, at);
      at += padded;
    };
    const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    put(asBytes(this.fps.subarray(0, n * words)), n * words * 8);
    put(asBytes(this.keys.subarray(0, n * 4)), n * 32);
    put(this.wordless.subarray(0, n), pad8(n));
    put(asBytes(roots), pad8(n * 4));
    put(asBytes(sizes), pad8(n * 4));
    for (const set of sets) if (set.length > 0) put(asBytes(set), set.length * SET_HASH_BYTES);
    put(labels, pad8(labels.length));
    out.set(checksum(out.subarray(0, at)), at);
    view.setUint32(at + 16, END, true);
    return out;
  }

  /** A Deduplicator from save()'s bytes, with the options it was made with (checked against the state's). */
  static load(bytes: Uint8Array, options: DedupOptions = {}): Deduplicator {
    if (!(bytes instanceof Uint8Array)) throw new TypeError(`bytes must be a Uint8Array, got ${show(bytes)}`);
    const d = new Deduplicator(options);
    d.loadBytes(bytes);
    return d;
  }

  private loadBytes(bytes: Uint8Array): void {
    const fail = (why: string) => new RangeError(`not a usable Deduplicator state: ${why}`);
    if (bytes.length < 16) throw fail(`${bytes.length} bytes`);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const headerLength = view.getUint32(0, true);
    const version = view.getUint32(4, true);
    if (8 + headerLength > bytes.length) throw fail('truncated header');
    let header: {
      magic?: unknown;
      version?: unknown;
      count?: unknown;
      setWords?: unknown;
      labelBytes?: unknown;
      options?: Record<string, unknown>;
    };
    try {
      header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)));
    } catch {
      throw fail('its header is not JSON');
    }
    if (header.magic !== MAGIC) throw fail('not a simhash-wasm state');
    const wide = version === WIDE_VERSION && header.version === WIDE_VERSION;
    if (!wide && (version !== VERSION || header.version !== VERSION))
      throw fail(`version ${String(header.version)}, this library reads versions ${WIDE_VERSION} and ${VERSION}`);
    const hashBytes = wide ? 8 : SET_HASH_BYTES;
    checkSignature(header.options, this.signature);
    const n = Number(header.count);
    const setWords = Number(header.setWords);
    const labelBytes = Number(header.labelBytes);
    const words = this.o.bits / 64;
    const expected = stateBytes(headerLength, n, words, setWords * hashBytes, labelBytes);
    if (
      !Number.isInteger(n) ||
      !Number.isInteger(setWords) ||
      !Number.isInteger(labelBytes) ||
      expected !== bytes.length
    )
      throw fail(`${bytes.length} bytes where its header says ${expected} (truncated or damaged)`);
    if (!sealed(bytes)) throw fail('its checksum does not match (damaged)');
    let at = pad8(8 + headerLength);
    const take = (length: number, padded = length) => {
      // A copy with its own buffer (a Node Buffer's slice would be a view of the whole file).
      const copy = Uint8Array.prototype.slice.call(bytes, at, at + length);
      at += padded;
      return copy;
    };
    this.reserve(n);
    this.fps.set(new BigUint64Array(take(n * words * 8).buffer), 0);
    this.keys.set(new BigUint64Array(take(n * 32).buffer), 0);
    this.wordless.set(take(n, pad8(n)), 0);
    const roots = new Uint32Array(take(n * 4, pad8(n * 4)).buffer);
    const sizes = new Uint32Array(take(n * 4, pad8(n * 4)).buffer);
    const setBytes = take(setWords * hashBytes);
    const labels = JSON.parse(new TextDecoder().decode(take(labelBytes, pad8(labelBytes)))) as unknown;
    if (!Array.isArray(labels) || labels.length !== n) throw fail('its labels do not match its documents');
    this.labels = labels as string[];
    this.parent.set(roots, 0);
    this.n = n;
    if (this.o.verify) {
      this.store.append(
        Uint32Array.from({ length: n }, (_, q) => q),
        wide ? narrowedSets(sizes, setBytes) : { starts: startsOf(sizes), data: new Uint32Array(setBytes.buffer) },
      );
    }
  }

  /**
   * A Deduplicator from a directory state (Node), with the options it was made with (checked against the state's);
   * an empty one when `dir` holds no state yet. It reads the manifest and every segment's metadata (about 60 bytes
   * per document, checked), not the shingle sets: those of earlier documents are read, by offset, only when a later
   * batch finds them in candidate pairs, so the segments' files stay open until close(). A version 1 `state.bin` in
   * `dir` (save()'s bytes, as the command line wrote them before) is read whole and converted by the next saveTo().
   * Once a later addStream() has fingerprinted its stream, it starts writing the new documents' segment into `dir`
   * in the background (named by no manifest until saveTo() commits it). An existing `dir` is locked (DIR/lock,
   * created exclusively with this process's id and host) until close(), so that a second process, or a second
   * Deduplicator, fails at once rather than losing one's documents; a lock left by a process of this host that is
   * gone is taken over (see tookOverLock). Throws a RangeError naming the difference for a state made with other
   * options, another version, or damaged, or naming the process that holds the lock.
   */
  static async open(dir: string, options: DedupOptions = {}): Promise<Deduplicator> {
    if (typeof dir !== 'string' || dir === '') throw new TypeError(`dir must be a path, got ${show(dir)}`);
    const d = new Deduplicator(options);
    const fs = await nodeFs();
    d.fs = fs;
    d.dir = dir;
    // A directory not made yet has nothing to protect: saveTo() locks it when it makes it.
    if (fs.existsSync(dir)) d.lock = lockState(fs, dir, await nodeHost());
    try {
      return d.openLocked(fs, dir);
    } catch (error) {
      d.close();
      throw error;
    }
  }

  private openLocked(fs: NodeFs, dir: string): Deduplicator {
    const opened = readManifest(fs, dir, this.signature);
    if (!opened) {
      let legacy: Uint8Array | null = null;
      try {
        legacy = fs.readFileSync(`${dir}/${LEGACY_STATE}`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      if (legacy) this.loadBytes(legacy);
      return this;
    }
    const words = this.o.bits / 64;
    const metas = [];
    for (const entry of opened.segments) {
      const meta = openSegment(fs, dir, entry, words, this.signature);
      metas.push(meta);
      this.fds.push(meta.fd);
    }
    const n = opened.count;
    this.reserve(n + (n >> 3)); // room for a run's new documents without growing every array again

    const fps8 = new Uint8Array(this.fps.buffer);
    const keys8 = new Uint8Array(this.keys.buffer);
    metas.forEach((meta, s) => {
      const { first } = opened.segments[s]!;
      fps8.set(meta.fps, first * words * 8);
      keys8.set(meta.keys, first * 32);
      this.wordless.set(meta.wordless, first);
      this.segmentLabels.push({ first, starts: meta.labelStarts.slice(), bytes: meta.labels.slice() });
    });
    this.parent.set(opened.roots, 0);
    this.n = n;
    this.committed = n;
    this.segments = opened.segments;
    this.sets = new LayeredSets(
      fs,
      this.fds,
      opened.segments.map((s) => s.file),
      metas,
      n,
      this.store,
      this.sameWordless,
    );
    return this;
  }

  /**
   * Saves the state in directory `dir` (Node; created when missing). To the directory it was opened from or last
   * saved to, it appends only what changed: the documents added since, as one new segment, and a new manifest (the
   * clusters, 4 bytes per document); to another directory, which must hold no state, every document. Each file is
   * written to a temporary name, fsynced and renamed, the manifest last: a process killed at any moment leaves the
   * previous state as it was. Files of the directory that the new manifest does not name (left by killed runs, or a
   * converted version 1 state.bin) are removed. A directory other than the one this holds is locked as open() does
   * (refused when another process holds it), and held instead until close().
   */
  async saveTo(dir: string): Promise<void> {
    if (typeof dir !== 'string' || dir === '') throw new TypeError(`dir must be a path, got ${show(dir)}`);
    const fs = this.fs ?? (await nodeFs());
    this.fs = fs;
    const path = await import('node:path');
    const same = this.dir !== null && path.resolve(this.dir) === path.resolve(dir);
    fs.mkdirSync(dir, { recursive: true });
    const locked = same && this.lock !== null;
    const lock = locked ? this.lock! : lockState(fs, dir, await nodeHost());
    try {
      if (!same && fs.existsSync(`${dir}/${MANIFEST}`))
        throw new Error(`${dir} holds another state: open it with Deduplicator.open, or save to an empty directory`);
      await this.commit(fs, dir, same);
    } catch (error) {
      if (!locked) lock.release();
      throw error;
    }
    if (!locked) {
      this.lock?.release();
      this.lock = lock;
    }
  }

  private async commit(fs: NodeFs, dir: string, same: boolean): Promise<void> {
    const segments = same ? this.segments.slice() : [];
    let from = same ? this.committed : 0;
    // Segments addStream started writing: the first documents not yet in one of the directory's segments.
    const pending = same ? this.pending : [];
    this.pending = [];
    for (const p of pending) {
      if (p.from !== from) break;
      segments.push(await p.entry);
      from = p.to;
    }
    const n = this.n;
    if (n > from) segments.push(await this.writeSegment(fs, dir, from, n));
    const roots = new Uint32Array(n);
    for (let d = 0; d < n; d++) roots[d] = forestRoot(this.parent, d);
    await writeManifest(fs, dir, n, segments, roots, this.signature);
    this.dir = dir;
    this.segments = segments;
    this.committed = n;
  }

  /** Writes documents from..to-1 as a segment of `dir` (not yet named by any manifest). */
  private writeSegment(fs: NodeFs, dir: string, from: number, to: number): Promise<SegmentEntry> {
    const words = this.o.bits / 64;
    return writeSegment(
      fs,
      dir,
      {
        first: from,
        count: to - from,
        words,
        fps: this.fps.subarray(from * words, to * words),
        keys: this.keys.subarray(from * 4, to * 4),
        wordless: this.wordless.subarray(from, to),
        labels: Array.from({ length: to - from }, (_, q) => this.labelOf(from + q)),
        setOf: (d) => (this.o.verify ? this.sets.setOf(d) : new Uint32Array(0)),
      },
      this.signature,
    );
  }

  /**
   * Starts writing the documents added since the last segment as a segment of the directory this was opened from
   * (saveTo() waits for it and names it in the manifest): the disk works while the batch is joined and verified.
   * Nothing names the file until then; a process that never commits leaves it for the next commit to remove.
   */
  private startSegment(): void {
    const fs = this.fs;
    const dir = this.dir;
    if (!fs || dir === null || !fs.existsSync(dir)) return;
    const from = this.pending.length > 0 ? this.pending[this.pending.length - 1]!.to : this.committed;
    if (this.n <= from) return;
    const entry = this.writeSegment(fs, dir, from, this.n);
    entry.catch(() => undefined); // awaited in saveTo; this only keeps a failure there from counting as unhandled
    this.pending.push({ from, to: this.n, entry });
  }

  /**
   * Closes the segment files that open() left open for reading sets (the Deduplicator reads none after this) and
   * releases the directory's lock.
   */
  close(): void {
    for (const fd of this.fds) this.fs?.closeSync(fd);
    this.fds = [];
    this.lock?.release();
    this.lock = null;
  }

  /**
   * Forgets the documents from `first` on (a stream that failed half-way): none of them was decided yet, so nothing
   * refers to them but their sets, which the next batch's overwrite (the store maps each document to its set).
   */
  private truncate(first: number): void {
    this.n = first;
    this.labels.length = first - this.sets.from;
  }

  private reserve(n: number): void {
    if (n <= this.parent.length) return;
    const size = Math.max(n, this.parent.length * 2, 1024);
    const words = this.o.bits / 64;
    const grow = <T extends BigUint64Array | Uint8Array | Uint32Array>(
      a: T,
      make: (n: number) => T,
      per: number,
    ): T => {
      const next = make(size * per);
      next.set(a as never);
      return next;
    };
    this.fps = grow(this.fps, (x) => new BigUint64Array(x), words);
    this.keys = grow(this.keys, (x) => new BigUint64Array(x), 4);
    this.wordless = grow(this.wordless, (x) => new Uint8Array(x), 1);
    this.parent = grow(this.parent, (x) => new Uint32Array(x), 1);
  }
}

async function nodeFs(): Promise<NodeFs> {
  if (typeof process === 'undefined' || !process.versions?.node)
    throw new Error('a directory state needs Node (node:fs): use save() and load() elsewhere');
  return (await import('node:fs')) as NodeFs;
}

/** Offsets of sets of these sizes, back to back: sizes.length + 1 of them. */
function startsOf(sizes: Uint32Array): Uint32Array {
  const starts = new Uint32Array(sizes.length + 1);
  for (let q = 0; q < sizes.length; q++) starts[q + 1] = starts[q]! + sizes[q]!;
  return starts;
}

/**
 * Sets of 8-byte hashes (little-endian, back to back, of these sizes) as this version's: each hash's top 32 bits
 * (buildShingleSets' narrowing), still sorted, with the rare repeat of two hashes sharing a top half dropped.
 */
function narrowedSets(sizes: Uint32Array, bytes: Uint8Array): { starts: Uint32Array; data: Uint32Array } {
  const halves = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const data = new Uint32Array(halves.length / 2);
  const starts = new Uint32Array(sizes.length + 1);
  let from = 0;
  let at = 0;
  for (let q = 0; q < sizes.length; q++) {
    for (let i = from; i < from + sizes[q]!; i++) {
      const top = halves[2 * i + 1]!;
      if (i === from || top !== data[at - 1]) data[at++] = top;
    }
    from += sizes[q]!;
    starts[q + 1] = at;
  }
  return { starts, data: data.subarray(0, at) };
}

async function nodeHost(): Promise<string> {
  return (await import('node:os')).hostname();
}

/**
 * The bytes of a state: header, then fingerprints, keys (4 words), wordless flags, roots and set sizes (u32), sets,
 * labels (JSON), each section padded to 8 bytes, then the trailer.
 */
function stateBytes(headerLength: number, n: number, words: number, setBytes: number, labelBytes: number): number {
  return (
    pad8(8 + headerLength) +
    n * words * 8 +
    n * 32 +
    pad8(n) +
    pad8(n * 4) +
    pad8(n * 4) +
    setBytes +
    pad8(labelBytes) +
    TRAILER
  );
}

const END = 0x53414853; // "SHAS"
