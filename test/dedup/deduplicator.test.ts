// Incremental dedup: of each batch, a Deduplicator keeps exactly the documents that one dedup() over everything up
// to the end of that batch keeps (keep 'first'; a later document can connect an earlier one to a still earlier
// cluster, and what a batch kept stays kept), on seeded corpora of the shapes real ones have (edited copies spread over the
// corpus, exact copies, chains, texts without words, copies far apart across batches), for every split, both
// widths, with and without verification; and so does one that is saved and loaded between batches. A state made
// with other options, damaged or truncated is refused with a clear error, and the Deduplicator stays usable. A
// directory state (open, saveTo) appends a segment per run and decides the same; a small batch after many documents
// takes the probing join (probe-join.ts) and decides as the join over everything; damaged segments are refused.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dedup } from '../../src/dedup/dedup.js';
import { Deduplicator } from '../../src/dedup/deduplicator.js';
import { probeBlocks } from '../../src/dedup/probe-join.js';
import { TRAILER, checksum, pad8 } from '../../src/dedup/state-dir.js';
import { rng } from '../reference.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-deduplicator-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => path.join(tmp, `state-${dirs++}`);

/** A new directory holding the state of corpus(seed, groups) (returned too), its lock released. */
async function savedState(seed: number, groups: number): Promise<{ dir: string; docs: string[] }> {
  const dir = newDir();
  const docs = corpus(seed, groups);
  const d = new Deduplicator();
  d.add(docs);
  await d.saveTo(dir);
  d.close(); // its lock, which saveTo() took
  return { dir, docs };
}

function corpus(seed: number, groups: number): string[] {
  const next = rng(seed);
  const vocabulary = Array.from({ length: 3000 }, (_, i) => `t${i.toString(36)}a`);
  const word = () => vocabulary[Math.floor(next() * vocabulary.length)]!;
  const docs: string[] = [];
  for (let g = 0; g < groups; g++) {
    const base = Array.from({ length: 20 + Math.floor(next() * 40) }, word);
    let previous = base;
    for (let c = 0, m = 1 + Math.floor(next() * 6); c < m; c++) {
      // Chains: each copy edits the one before it.
      const copy = previous.slice();
      for (let e = Math.floor(next() * 3); e > 0; e--) copy[Math.floor(next() * copy.length)] = word();
      docs.push(copy.join(' '));
      if (next() < 0.1) docs.push(copy.join(' ')); // an exact copy
      previous = copy;
    }
    if (next() < 0.05) docs.push(next() < 0.5 ? '  ' : '!!! ???'); // texts without words
  }
  for (let i = docs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}

/** What dedup() keeps of docs[from..to) when it runs over docs[0..to). */
function keptByDedup(docs: string[], from: number, to: number, options: object): number[] {
  const r = dedup(docs.slice(0, to), options);
  const out: number[] = [];
  for (let i = from; i < to; i++) if (r.duplicateOf[i] === -1) out.push(i);
  return out;
}

/**
 * Feeds the corpus in batches cut at `cuts` (saving and loading between them with `reload`), checking each batch's
 * kept documents against dedup() over the prefix; returns how many documents were kept in all.
 */
function checkBatches(docs: string[], cuts: number[], options: object, reload: boolean): number {
  let d = new Deduplicator(options);
  const bounds = [0, ...cuts, docs.length];
  let total = 0;
  for (let b = 0; b + 1 < bounds.length; b++) {
    const r = d.add(docs.slice(bounds[b], bounds[b + 1]));
    expect(r.first).toBe(bounds[b]);
    const kept: number[] = [];
    r.duplicateOf.forEach((dup, q) => {
      if (dup === -1) kept.push(r.first + q);
      else expect(dup).toBeLessThan(r.first + q); // the document kept in its place comes first
    });
    expect(kept, `batch ${b}: ${bounds[b]}..${bounds[b + 1]}`).toEqual(
      keptByDedup(docs, bounds[b]!, bounds[b + 1]!, options),
    );
    total += kept.length;
    if (reload) d = Deduplicator.load(d.save(), options);
  }
  return total;
}

describe('Deduplicator', () => {
  const configs: Array<[string, object]> = [
    ['64 bits, verified', {}],
    ['128 bits, verified', { bits: 128 }],
    ['64 bits, unverified', { verify: false }],
  ];
  for (const [name, options] of configs) {
    it(`batches keep what one dedup() keeps (${name}; splits seeded, some saved and loaded)`, () => {
      for (let seed = 1; seed <= 6; seed++) {
        const docs = corpus(seed, 40 + seed * 20);
        const next = rng(seed * 7);
        const cuts = Array.from({ length: 1 + Math.floor(next() * 4) }, () => Math.floor(next() * docs.length)).sort(
          (x, y) => x - y,
        );
        const kept = checkBatches(docs, cuts, options, seed % 2 === 0);
        expect(kept).toBeLessThan(docs.length * 0.8); // the corpus has duplicates to find
        expect(kept).toBeGreaterThan(0);
      }
    });
  }

  it('a batch of one document at a time, and empty batches', () => {
    const docs = corpus(11, 30);
    const d = new Deduplicator();
    expect(d.add([]).duplicateOf).toHaveLength(0);
    docs.forEach((doc, i) => {
      const kept = d.add([doc]).duplicateOf[0] === -1;
      expect(kept, `document ${i}`).toBe(keptByDedup(docs, i, i + 1, {}).length === 1);
    });
    expect(d.count).toBe(docs.length);
  });

  it('A then B keeps of B what one run over A + B keeps, and the whole corpus in one batch is dedup()', () => {
    const docs = corpus(13, 150);
    const d = new Deduplicator();
    const all = d.add(docs);
    expect(Array.from(all.duplicateOf).map((x) => x === -1)).toEqual(
      Array.from(dedup(docs).duplicateOf).map((x) => x === -1),
    );
    for (const cut of [1, 50, docs.length >> 1, docs.length - 1]) checkBatches(docs, [cut], {}, true);
  });

  it('refuses a state made with other options, naming the difference; refuses damaged and truncated states', () => {
    const d = new Deduplicator();
    d.add(corpus(12, 10));
    const bytes = d.save();
    expect(() => Deduplicator.load(bytes, { k: 5 })).toThrow(/made with k = 12, not 5/);
    expect(() => Deduplicator.load(bytes, { verify: { threshold: 0.8 } })).toThrow(/threshold = 0.6, not 0.8/);
    expect(() => Deduplicator.load(bytes, { tokenizer: 'words' })).toThrow(/tokenizer = "shingles", not "words"/);
    const damaged = bytes.slice();
    damaged[damaged.length - 20]! ^= 1;
    expect(() => Deduplicator.load(damaged)).toThrow(/checksum does not match/);
    expect(() => Deduplicator.load(bytes.subarray(0, bytes.length - 9))).toThrow(/truncated or damaged/);
    expect(() => Deduplicator.load(new Uint8Array(3))).toThrow(RangeError);
    // The state itself still loads and goes on.
    const again = Deduplicator.load(bytes);
    expect(again.count).toBe(d.count);
    expect(again.add(['something entirely new and different from all of it']).duplicateOf[0]).toBe(-1);
  });

  it('addStream on two worker threads decides as add(); a stream that fails half-way changes nothing', async () => {
    const docs = corpus(14, 120);
    const half = docs.length >> 1;
    const a = new Deduplicator();
    a.add(docs.slice(0, half));
    const want = a.add(docs.slice(half));
    const b = new Deduplicator();
    await b.addStream(docs.slice(0, half), { threads: 2, batchBytes: 2000, label: (i) => `doc ${i}` });
    async function* failing(): AsyncGenerator<string> {
      yield docs[half]!;
      throw new Error('the source broke');
    }
    await expect(b.addStream(failing(), { batchBytes: 1 })).rejects.toThrow('the source broke');
    expect(b.count).toBe(half);
    const got = await b.addStream(docs.slice(half), { threads: 2, batchBytes: 2000 });
    expect(Array.from(got.duplicateOf)).toEqual(Array.from(want.duplicateOf));
    expect(b.labelOf(3)).toBe('doc 3');
    expect(Deduplicator.load(b.save()).labelOf(half)).toBe('');
  });

  it('refuses options it cannot honour, and bad batches, before changing anything', () => {
    expect(() => new Deduplicator({ keep: 'longest' })).toThrow(/keeps the first document/);
    expect(() => new Deduplicator({ mode: 'centre' })).toThrow(/connected clusters/);
    const d = new Deduplicator();
    d.add(['one two three four five']);
    expect(() => d.add([42 as unknown as string])).toThrow(/texts\[0\] must be a string or a Uint8Array, got 42/);
    expect(d.count).toBe(1);
    expect(d.add(['one two three four five']).duplicateOf[0]).toBe(0);
  });

  it('a directory state, opened and saved between batches, keeps what one dedup() keeps (small last batches probe)', async () => {
    for (const [options, seed] of [
      [{}, 31],
      [{ k: 3 }, 32],
      [{ k: 30 }, 33],
      [{ bits: 128 }, 34],
      [{ verify: false }, 35],
    ] as const) {
      const docs = corpus(seed, 200);
      const cuts = [Math.floor(docs.length * 0.5), Math.floor(docs.length * 0.9), docs.length - 3];
      const bounds = [0, ...cuts, docs.length];
      const dir = newDir();
      for (let b = 0; b + 1 < bounds.length; b++) {
        const d = await Deduplicator.open(dir, options);
        expect(d.count).toBe(bounds[b]);
        const texts = docs.slice(bounds[b], bounds[b + 1]);
        const r = d.add(
          texts,
          texts.map((_, q) => `doc ${bounds[b]! + q}`),
        );
        const kept: number[] = [];
        r.duplicateOf.forEach((dup, q) => {
          if (dup === -1) kept.push(r.first + q);
          else expect(d.labelOf(dup)).toBe(`doc ${dup}`); // earlier labels read back from the segments
        });
        expect(kept, `${JSON.stringify(options)} batch ${b}`).toEqual(
          keptByDedup(docs, bounds[b]!, bounds[b + 1]!, options),
        );
        await d.saveTo(dir);
        d.close();
      }
      // One segment per run and a manifest; save() of an opened state reads every set back.
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('segment-'))).toHaveLength(bounds.length - 1);
      const opened = await Deduplicator.open(dir, options);
      const loaded = Deduplicator.load(opened.save(), options);
      opened.close();
      expect(loaded.count).toBe(docs.length);
      expect(loaded.labelOf(docs.length - 1)).toBe(`doc ${docs.length - 1}`);
    }
  });

  it('the probing join (a batch of a tenth) keeps what dedup() keeps, for k from 0 to past the blocks', async () => {
    // The plans: blocks for small k, every pair compared for large k.
    expect(probeBlocks(200_000, 10_000, 12).blocks).toHaveLength(5);
    expect(probeBlocks(200_000, 10_000, 40).blocks).toEqual([[0, 0, 0]]);
    for (const k of [0, 3, 12, 30]) {
      const docs = corpus(40 + k, 300);
      const last = docs.length - Math.floor(docs.length / 10);
      const d = new Deduplicator({ k });
      d.add(docs.slice(0, last));
      const r = d.add(docs.slice(last));
      const kept: number[] = [];
      r.duplicateOf.forEach((dup, q) => dup === -1 && kept.push(last + q));
      expect(kept, `k = ${k}`).toEqual(keptByDedup(docs, last, docs.length, { k }));
      if (k >= 3) expect(r.candidates).toBeGreaterThan(0);
      // addStream shares the probe among its workers, and decides the same.
      const streamed = new Deduplicator({ k });
      streamed.add(docs.slice(0, last));
      const s = await streamed.addStream(docs.slice(last), { threads: 2, batchBytes: 2000 });
      expect(Array.from(s.duplicateOf)).toEqual(Array.from(r.duplicateOf));
      expect(s.candidates).toBe(r.candidates);
    }
  });

  it('refuses a damaged directory state, naming the file; a damaged set when it is read', async () => {
    const { dir, docs } = await savedState(36, 60);
    const segment = path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('segment-'))!);
    const manifest = path.join(dir, 'manifest.bin');
    const good = fs.readFileSync(segment);
    const flip = (file: string, at: number) => {
      const bytes = fs.readFileSync(file);
      bytes[at]! ^= 0x10;
      fs.writeFileSync(file, bytes);
    };
    flip(segment, 600); // in the fingerprints
    await expect(Deduplicator.open(dir)).rejects.toThrow(/segment-.*checksum does not match \(damaged\)/);
    fs.writeFileSync(segment, good.subarray(0, good.length - 8));
    await expect(Deduplicator.open(dir)).rejects.toThrow(/truncated or damaged/);
    fs.writeFileSync(segment, good);
    const manifestBytes = fs.readFileSync(manifest);
    flip(manifest, manifestBytes.length - 30);
    await expect(Deduplicator.open(dir)).rejects.toThrow(/manifest.bin: its checksum does not match/);
    fs.writeFileSync(manifest, manifestBytes);
    await expect(Deduplicator.open(dir, { k: 6 })).rejects.toThrow(/made with k = 12, not 6/);
    await expect(new Deduplicator().saveTo(dir)).rejects.toThrow(/holds another state/);
    // The last document's set ends the file: damaged there, the state opens, and refuses once the set is read.
    flip(segment, good.length - 3);
    const opened = await Deduplicator.open(dir);
    expect(() => opened.add([`${docs[docs.length - 1]} and one more`])).toThrow(/does not match its checksum/);
    opened.close();
    fs.writeFileSync(segment, good);
    const again = await Deduplicator.open(dir);
    expect(again.add([`${docs[docs.length - 1]} and one more`]).duplicateOf[0]).not.toBe(-1);
    again.close();
  });

  it("opens a state.bin (save()'s bytes, as the command line once wrote them) and converts it when it saves", async () => {
    const docs = corpus(37, 80);
    const half = docs.length >> 1;
    const dir = newDir();
    fs.mkdirSync(dir);
    const old = new Deduplicator();
    old.add(docs.slice(0, half));
    fs.writeFileSync(path.join(dir, 'state.bin'), old.save());
    const d = await Deduplicator.open(dir);
    expect(d.count).toBe(half);
    const kept: number[] = [];
    const r = d.add(docs.slice(half));
    r.duplicateOf.forEach((dup, q) => dup === -1 && kept.push(half + q));
    expect(kept).toEqual(keptByDedup(docs, half, docs.length, {}));
    await d.saveTo(dir);
    d.close();
    expect(fs.readdirSync(dir).sort()).toEqual(['manifest.bin', expect.stringMatching(/^segment-/)]);
    const reopened = await Deduplicator.open(dir);
    expect(reopened.count).toBe(docs.length);
    reopened.close();
  });

  it('refuses a directory state of version 2 (8-byte shingle hashes), saying how to rebuild it', async () => {
    const { dir, docs } = await savedState(40, 10);
    const manifest = path.join(dir, 'manifest.bin');
    const bytes = fs.readFileSync(manifest);
    const text = bytes.toString('latin1');
    expect(text).toContain('"version":3');
    const old = Buffer.from(text.replace('"version":3', '"version":2'), 'latin1');
    old.writeUInt32LE(2, 4);
    fs.writeFileSync(manifest, old);
    await expect(Deduplicator.open(dir)).rejects.toThrow(
      /manifest\.bin is version 2, with 8-byte shingle hashes; this library reads version 3 .*remove the folder/,
    );
    // Left as it was, and loadable once restored.
    expect(fs.readFileSync(manifest).equals(old)).toBe(true);
    fs.writeFileSync(manifest, bytes);
    const again = await Deduplicator.open(dir);
    expect(again.count).toBe(docs.length);
    again.close();
  });

  it("loads save()'s version 1 bytes (8-byte shingle hashes), written here from the documented layout", () => {
    const docs = corpus(39, 80);
    const half = docs.length >> 1;
    const d = new Deduplicator();
    d.add(docs.slice(0, half));
    const v2 = d.save();
    const v1 = widenedState(v2);
    const fromV1 = Deduplicator.load(v1);
    // Each 8-byte hash's top half is the 4-byte one (two that share it, as one set holds here, count once): the
    // state saves again as version 2 byte for byte, and decides the rest as the version 2 state does.
    expect(Buffer.from(fromV1.save()).equals(Buffer.from(v2))).toBe(true);
    const rest = docs.slice(half);
    const decided = fromV1.add(rest).duplicateOf;
    expect(decided).toEqual(Deduplicator.load(v2).add(rest).duplicateOf);
    // And as dedup() over everything keeps them.
    const kept: number[] = [];
    decided.forEach((dup, q) => dup === -1 && kept.push(half + q));
    expect(kept).toEqual(keptByDedup(docs, half, docs.length, {}));
    const damaged = v1.slice();
    damaged[damaged.length - 40]! ^= 1;
    expect(() => Deduplicator.load(damaged)).toThrow(/checksum does not match/);
  });

  it('locks a directory state until close(): a second user fails naming the holder; a stale lock is taken over', async () => {
    const docs = corpus(38, 20);
    const dir = newDir();
    const d = new Deduplicator();
    d.add(docs);
    await d.saveTo(dir);
    const lock = path.join(dir, 'lock');
    expect(JSON.parse(fs.readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid, host: os.hostname() });
    await expect(Deduplicator.open(dir)).rejects.toThrow(
      new RegExp(`in use by process ${process.pid} \\(this one\\) \\(${literal(lock)}\\)`),
    );
    const other = new Deduplicator();
    other.add(docs.slice(0, 3));
    await expect(other.saveTo(dir)).rejects.toThrow(/in use by process/);
    d.close();
    expect(fs.existsSync(lock)).toBe(false);
    // Held by a live process of this host (the test runner's parent): refused; by another host: refused, named.
    const manifest = fs.readFileSync(path.join(dir, 'manifest.bin'));
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: os.hostname() }));
    await expect(Deduplicator.open(dir)).rejects.toThrow(new RegExp(`in use by process ${process.ppid} \\(`));
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: 'elsewhere.example' }));
    await expect(Deduplicator.open(dir)).rejects.toThrow(/in use by process \d+ on host elsewhere\.example/);
    expect(fs.readFileSync(path.join(dir, 'manifest.bin'))).toEqual(manifest);
    // Left by a process that is gone: taken over, and said so.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.writeFileSync(lock, JSON.stringify({ pid: gone, host: os.hostname() }));
    const opened = await Deduplicator.open(dir);
    expect(opened.tookOverLock).toEqual({ pid: gone, host: os.hostname() });
    expect(opened.count).toBe(docs.length);
    expect(JSON.parse(fs.readFileSync(lock, 'utf8')).pid).toBe(process.pid);
    opened.close();
    expect(fs.readdirSync(dir).sort()).toEqual(['manifest.bin', expect.stringMatching(/^segment-/)]);
  });

  it('a run killed while taking the lock leaves no lock or a whole one; its draft goes once its process is', async () => {
    const { dir } = await savedState(41, 10);
    // What a run killed between writing its draft and linking it leaves: the draft alone, no lock. Another run
    // locks at once. A draft of a process of this host that is gone is removed then; one naming another host
    // (whose processes cannot be asked) once it is a minute old.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const draft = (nonce: string, host: string) => {
      const f = path.join(dir, `.lock.${gone}.${nonce}.new`);
      fs.writeFileSync(f, JSON.stringify({ pid: gone, host }));
      return f;
    };
    const here = draft('0badc0de', os.hostname());
    const oldElsewhere = draft('0badf00d', 'elsewhere.example');
    const recentElsewhere = draft('0ddba11', 'elsewhere.example');
    const hourAgo = new Date(Date.now() - 3600_000);
    fs.utimesSync(oldElsewhere, hourAgo, hourAgo);
    const opened = await Deduplicator.open(dir);
    expect(opened.tookOverLock).toBeNull();
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'lock'), 'utf8')).pid).toBe(process.pid);
    expect([here, oldElsewhere, recentElsewhere].map((f) => fs.existsSync(f))).toEqual([false, false, true]);
    opened.close();
    fs.rmSync(recentElsewhere);
    expect(fs.readdirSync(dir).sort()).toEqual(['manifest.bin', expect.stringMatching(/^segment-/)]);
  });

  it('names the most fundamental difference of a state made with other options', async () => {
    const dir = newDir();
    const d = new Deduplicator({ tokenizer: 'segmenter', locale: 'en' });
    d.add(corpus(39, 5));
    await d.saveTo(dir);
    d.close();
    const refused = (options: object) => Deduplicator.open(dir, options);
    await expect(refused({ tokenizer: 'segmenter', locale: 'en', bits: 128 })).rejects.toThrow(
      /the state was made with 64-bit fingerprints, not 128:/,
    );
    await expect(refused({ tokenizer: 'segmenter', locale: 'en', verify: false })).rejects.toThrow(
      /the state was made with verification \(threshold 0\.6\), not without it \(--no-verify\):/,
    );
    await expect(refused({ tokenizer: 'segmenter', locale: 'en', bits: 128, k: 3 })).rejects.toThrow(/64-bit/);
    await expect(refused({ tokenizer: 'segmenter' })).rejects.toThrow(
      /the state was made with locale = "en", not the default \(none\):/,
    );
    await expect(refused({ tokenizer: 'segmenter', locale: 'en', threshold: 0.8, k: 3 })).rejects.toThrow(
      /made with threshold = 0\.6, not 0\.8:/,
    );
    const plain = newDir();
    const v = new Deduplicator({ verify: false });
    v.add(corpus(40, 5));
    await v.saveTo(plain);
    v.close();
    await expect(Deduplicator.open(plain)).rejects.toThrow(
      /the state was made without verification \(--no-verify\), not with it \(threshold 0\.6\):/,
    );
    expect(fs.existsSync(path.join(plain, 'lock'))).toBe(false); // released by the open that failed
  });
});

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * save()'s bytes of version 2 as version 1 wrote them (the layout of Deduplicator.save: a header of u32 length, u32
 * version and JSON; fingerprints, keys, wordless flags, roots, set sizes, sets, labels, each padded to 8 bytes; a
 * 16-byte checksum and "SHAS"): each 4-byte hash h as the 8-byte h·2^32 + low, lows ascending within a set; the
 * first set of 2 or more also gets a second hash of its first hash's top half, as two shingles sharing it would.
 */
function widenedState(v2: Uint8Array): Uint8Array {
  const view = new DataView(v2.buffer, v2.byteOffset, v2.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(v2.subarray(8, 8 + headerLength)));
  const n = header.count as number;
  const words = 1;
  let at = pad8(8 + headerLength);
  const fixed = n * words * 8 + n * 32 + pad8(n) + pad8(n * 4);
  const sizesAt = at + fixed;
  const sizes = new Uint32Array(v2.slice(sizesAt, sizesAt + n * 4).buffer);
  const setsAt = sizesAt + pad8(n * 4);
  const narrow = new Uint32Array(v2.slice(setsAt, setsAt + header.setWords * 4).buffer);
  const labels = v2.subarray(setsAt + header.setWords * 4, v2.length - TRAILER);
  const wide: bigint[] = [];
  const wideSizes = sizes.slice();
  let from = 0;
  let doubled = false;
  for (let q = 0; q < n; q++) {
    for (let i = from; i < from + sizes[q]!; i++) {
      wide.push((BigInt(narrow[i]!) << 32n) | BigInt(i * 7));
      if (!doubled && i === from && sizes[q]! >= 2) {
        wide.push((BigInt(narrow[i]!) << 32n) | BigInt(i * 7 + 1));
        wideSizes[q]! += 1;
        doubled = true;
      }
    }
    from += sizes[q]!;
  }
  expect(doubled).toBe(true);
  const head = new TextEncoder().encode(JSON.stringify({ ...header, version: 1, setWords: wide.length }));
  const headBytes = pad8(8 + head.length);
  const setBytes = new Uint8Array(BigUint64Array.from(wide).buffer);
  const out = new Uint8Array(headBytes + fixed + pad8(n * 4) + setBytes.length + labels.length + TRAILER);
  const outView = new DataView(out.buffer);
  outView.setUint32(0, head.length, true);
  outView.setUint32(4, 1, true);
  out.set(head, 8);
  at = headBytes;
  out.set(v2.subarray(pad8(8 + headerLength), sizesAt), at);
  at += fixed;
  out.set(new Uint8Array(wideSizes.buffer), at);
  at += pad8(n * 4);
  out.set(setBytes, at);
  at += setBytes.length;
  out.set(labels, at);
  at += labels.length;
  out.set(checksum(out.subarray(0, at)), at);
  outView.setUint32(at + 16, 0x53414853, true);
  return out;
}
