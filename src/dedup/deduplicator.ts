// Incremental dedup (the CLI's --state): a Deduplicator remembers every document it has seen (fingerprint, content
// keys, shingle set, cluster) but not its text, and decides for each new batch which documents duplicate earlier
// ones. The documents of a batch that it keeps are exactly those that one dedup() over everything seen so far, with
// keep 'first', keeps: a new document is dropped when its cluster holds an earlier document. What earlier batches
// kept cannot be taken back, so a new document that joins two earlier clusters is simply dropped (its duplicateOf
// names the first document of its cluster that it was found to reach).
//
// A batch costs its own hashing, one join over all fingerprints in which the pairs of two documents already joined
// to earlier batches are never emitted (one group for all of them, src/join/join.ts), and the verification of the
// pairs that involve new documents. save() and load() carry the state across processes (versioned, checksummed).
import { checkTextItems, show } from '../errors.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import { walkInChunks } from '../join/join.js';
import { planJoinFor } from '../join/join-estimate.js';
import { type DedupOptions, checkDedupOptions, type CheckedDedupOptions, featurelessByTrimmedText } from './dedup.js';
import { forestJoin, forestRoot } from './forest.js';
import { PairChecks, pairFlags } from './pair-checks.js';
import { SetStore, STORE_WINDOW_BYTES } from './set-store.js';
import { type HashResult, hashTexts } from './stream-tasks.js';
import { type StreamOptions, hashBatches } from './stream-hash.js';
import { contentHashes } from './exact-copies.js';

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
/** Where a document's content hash and its trimmed text's hash start among its four key words (hashTexts' keys). */
const CONTENT = 0;
const TRIMMED = 2;
const MAGIC = 'simhash-wasm/state';
const VERSION = 1;

/**
 * Incremental dedup: remembers every document it has seen (fingerprint, content keys, shingle set, cluster, but not
 * its text) and decides for each new batch which documents duplicate earlier ones or each other. A batch keeps
 * exactly the documents that one dedup() over everything seen so far would keep; what earlier batches kept stays
 * kept. Options are dedup()'s, except that clusters are always connected (`mode: 'connected'`), `keep` is always
 * 'first' and the tokenizer cannot be a function (otherwise a RangeError or TypeError). save() and load() carry the
 * state across processes.
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
  private readonly store: SetStore;
  private readonly byContent = new Map<string, number>();
  /** Each document's label (add's `labels`), saved with the state: the CLI keeps documents' names there. */
  private labels: string[] = [];
  private readonly byTrimmed = new Map<string, number>();
  /** Whether texts without features pair only through their trimmed texts (as in dedup()). */
  private readonly byTrimmedText: boolean;

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
    const keys = () => this.keys;
    this.store = new SetStore(Infinity, null, (i, j) => {
      const k = keys();
      return k[i * 4 + 2] === k[j * 4 + 2] && k[i * 4 + 3] === k[j * 4 + 3];
    });
  }

  /** Documents seen so far. */
  get count(): number {
    return this.n;
  }

  /** Document i's label, as given to add() (empty when none was). */
  labelOf(i: number): string {
    if (!Number.isInteger(i) || i < 0 || i >= this.n)
      throw new RangeError(`document must be an index below ${this.n}, got ${show(i)}`);
    return this.labels[i] ?? '';
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
    } catch (error) {
      this.truncate(first);
      throw error;
    }
    return this.settle(first);
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
      this.labels[d] = labels?.[q] ?? '';
    }
    if (sets && this.o.verify) this.store.append(docs, sets);
    this.n = first + m;
  }

  /**
   * Decides the documents from `first` on (appended since the last decision): exact copies, the join, verification.
   */
  private settle(first: number): DeduplicatorBatch {
    const { bits, k, verify } = this.o;
    const words = bits / 64;
    const m = this.n - first;
    // Exact copies (by their 128-bit content hash) and texts without words (by their trimmed text) join the first
    // document with the same key, as dedup() groups them.
    for (let d = first; d < this.n; d++) {
      this.joinFirst(this.byContent, this.keyOf(d, CONTENT), d);
      if (this.wordless[d] && this.byTrimmedText) this.joinFirst(this.byTrimmed, this.keyOf(d, TRIMMED), d);
    }
    const forest = this.parent.subarray(0, this.n);
    const checks = PairChecks.onForest(forest);
    let candidates = 0;
    const fps = this.fps.subarray(0, this.n * words);
    if (this.n >= 2 && m > 0) {
      const groups = new Uint32Array(this.n);
      const plan = planJoinFor(fps, this.n, k, bits);
      walkInChunks(
        fps,
        plan,
        (pairs) => {
          // Documents without words pair only through their trimmed texts (joined above), where dedup() says so.
          const a: number[] = [];
          const b: number[] = [];
          const apart = this.byTrimmedText;
          for (let p = 0; p < pairs.a.length; p++) {
            const x = pairs.a[p]!;
            const y = pairs.b[p]!;
            if ((apart && (this.wordless[x] || this.wordless[y])) || forestRoot(forest, x) === forestRoot(forest, y))
              continue;
            a.push(x);
            b.push(y);
          }
          candidates += a.length;
          if (a.length === 0) return;
          if (!verify) {
            for (let p = 0; p < a.length; p++) forestJoin(forest, a[p]!, b[p]!);
            return;
          }
          pairFlags(this.n, this.store, Uint32Array.from(a), Uint32Array.from(b), verify, checks, STORE_WINDOW_BYTES);
        },
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
   * The state as bytes: a header naming the options, then fingerprints, keys, clusters and shingle sets, and a
   * checksum of it all. load() refuses bytes made with other options, another version, or damaged.
   */
  save(): Uint8Array {
    const n = this.n;
    const words = this.o.bits / 64;
    const sizes = new Uint32Array(n);
    let setWords = 0;
    for (let d = 0; d < n; d++) {
      sizes[d] = this.o.verify ? this.store.setOf(d).length : 0;
      setWords += sizes[d]!;
    }
    const roots = new Uint32Array(n);
    for (let d = 0; d < n; d++) roots[d] = forestRoot(this.parent, d);
    const labels = new TextEncoder().encode(JSON.stringify(this.labels.slice(0, n)));
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
    const out = new Uint8Array(stateBytes(header.length, n, words, setWords, labels.length));
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
    for (let d = 0; d < n; d++) if (sizes[d]! > 0) put(asBytes(this.store.setOf(d)), sizes[d]! * 8);
    put(labels, pad8(labels.length));
    out.set(checksum(out.subarray(0, at)), at);
    view.setUint32(at + 16, END, true);
    return out;
  }

  /** A Deduplicator from save()'s bytes, with the options it was made with (checked against the state's). */
  static load(bytes: Uint8Array, options: DedupOptions = {}): Deduplicator {
    if (!(bytes instanceof Uint8Array)) throw new TypeError(`bytes must be a Uint8Array, got ${show(bytes)}`);
    const d = new Deduplicator(options);
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
    if (version !== VERSION || header.version !== VERSION)
      throw fail(`version ${String(header.version)}, this library reads version ${VERSION}`);
    const mine = d.signature;
    for (const key of Object.keys(mine)) {
      const theirs = header.options?.[key];
      if (JSON.stringify(theirs) !== JSON.stringify(mine[key]))
        throw new RangeError(
          `the state was made with ${key} = ${JSON.stringify(theirs)}, not ${JSON.stringify(mine[key])}: use the same options, or start a new state`,
        );
    }
    const n = Number(header.count);
    const setWords = Number(header.setWords);
    const labelBytes = Number(header.labelBytes);
    const words = d.o.bits / 64;
    const expected = stateBytes(headerLength, n, words, setWords, labelBytes);
    if (
      !Number.isInteger(n) ||
      !Number.isInteger(setWords) ||
      !Number.isInteger(labelBytes) ||
      expected !== bytes.length
    )
      throw fail(`${bytes.length} bytes where its header says ${expected} (truncated or damaged)`);
    const body = bytes.length - TRAILER;
    const sum = checksum(bytes.subarray(0, body));
    if (view.getUint32(body + 16, true) !== END || sum.some((b, i) => b !== bytes[body + i]))
      throw fail('its checksum does not match (damaged)');
    let at = pad8(8 + headerLength);
    const take = (length: number, padded = length) => {
      // A copy with its own buffer (a Node Buffer's slice would be a view of the whole file).
      const copy = Uint8Array.prototype.slice.call(bytes, at, at + length);
      at += padded;
      return copy;
    };
    d.reserve(n);
    d.fps.set(new BigUint64Array(take(n * words * 8).buffer), 0);
    d.keys.set(new BigUint64Array(take(n * 32).buffer), 0);
    d.wordless.set(take(n, pad8(n)), 0);
    const roots = new Uint32Array(take(n * 4, pad8(n * 4)).buffer);
    const sizes = new Uint32Array(take(n * 4, pad8(n * 4)).buffer);
    const data = new BigUint64Array(take(setWords * 8).buffer);
    const labels = JSON.parse(new TextDecoder().decode(take(labelBytes, pad8(labelBytes)))) as unknown;
    if (!Array.isArray(labels) || labels.length !== n) throw fail('its labels do not match its documents');
    d.labels = labels as string[];
    d.parent.set(roots, 0);
    d.n = n;
    if (d.o.verify) {
      const starts = new Uint32Array(n + 1);
      for (let q = 0; q < n; q++) starts[q + 1] = starts[q]! + sizes[q]!;
      d.store.append(
        Uint32Array.from({ length: n }, (_, q) => q),
        { starts, data },
      );
    }
    // Each key's first document, as add() found them.
    const first = (map: Map<string, number>, key: string, q: number): void => {
      if (!map.has(key)) map.set(key, q);
    };
    for (let q = 0; q < n; q++) {
      first(d.byContent, d.keyOf(q, CONTENT), q);
      if (d.wordless[q] && d.byTrimmedText) first(d.byTrimmed, d.keyOf(q, TRIMMED), q);
    }
    return d;
  }

  /**
   * Forgets the documents from `first` on (a stream that failed half-way): none of them was decided yet, so nothing
   * refers to them but their sets, which the next batch's overwrite (the store maps each document to its set).
   */
  private truncate(first: number): void {
    this.n = first;
    this.labels.length = first;
  }

  /** Document d's content key (CONTENT) or trimmed-text key (TRIMMED), two of its four key words, as a map key. */
  private keyOf(d: number, at: typeof CONTENT | typeof TRIMMED): string {
    return `${this.keys[d * 4 + at]}:${this.keys[d * 4 + at + 1]}`;
  }

  private joinFirst(map: Map<string, number>, key: string, d: number): void {
    const earlier = map.get(key);
    if (earlier === undefined) map.set(key, d);
    else forestJoin(this.parent, earlier, d);
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

const pad8 = (x: number) => (x + 7) & ~7;

/**
 * The bytes of a state: header, then fingerprints, keys (4 words), wordless flags, roots and set sizes (u32), sets,
 * labels (JSON), each section padded to 8 bytes, then the trailer.
 */
function stateBytes(headerLength: number, n: number, words: number, setWords: number, labelBytes: number): number {
  return (
    pad8(8 + headerLength) +
    n * words * 8 +
    n * 32 +
    pad8(n) +
    pad8(n * 4) +
    pad8(n * 4) +
    setWords * 8 +
    pad8(labelBytes) +
    TRAILER
  );
}

/** The state's trailer: a 128-bit checksum of everything before it, then END (8 bytes with padding). */
const TRAILER = 24;
const END = 0x53414853; // "SHAS"
/** Bytes hashed per piece: WebAssembly memory holds one window of pieces, never the whole state. */
const PIECE_BYTES = 8 << 20;

/**
 * A 128-bit checksum of the state (integrity, not authenticity): the content hash (exact-copies.ts, in
 * WebAssembly) of each 8 MiB piece, then of those hashes. A CRC-32 in JavaScript took seconds on a 1 GB state.
 */
function checksum(bytes: Uint8Array): Uint8Array {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += PIECE_BYTES) pieces.push(bytes.subarray(at, at + PIECE_BYTES));
  const each = contentHashes(pieces);
  const all = contentHashes([new Uint8Array(each.buffer, each.byteOffset, each.byteLength)]);
  return new Uint8Array(all.buffer, all.byteOffset, 16).slice();
}
