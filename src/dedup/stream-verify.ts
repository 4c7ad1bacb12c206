// Reading documents of a streamed corpus again, whose texts are no longer in memory: exact copies found by their
// content hash are confirmed byte for byte against their first copy, in batches of about `budget` bytes read
// through the caller's `reread` (given their locators, sorted by source and offset, so files are read front to
// back). Each copy is read once, with its first copy.
import { show } from '../errors.js';
import { sameText } from './exact-copies.js';

/** Where documents can be read again: one entry per document asked for. */
export interface Locators {
  /** The documents' indices in stream order. */
  index: Uint32Array;
  /** What each document's `source` was (default 0). */
  source: Uint32Array;
  /** Each document's `offset` (default: its index). */
  offset: Float64Array;
  /** Each document's `length` (default: its length in bytes). */
  length: Float64Array;
}

/** Reads documents again, in the order asked: their texts (or UTF-8 bytes), exactly as they were streamed. */
export type Reread = (
  documents: Locators,
) => ReadonlyArray<string | Uint8Array> | Promise<ReadonlyArray<string | Uint8Array>>;

export interface StoredLocators {
  source: Uint32Array;
  offset: Float64Array;
  length: Float64Array;
}

/** What reading documents again needs: where they are, the reader, and the bytes of a batch. */
export interface RereadContext {
  locators: StoredLocators;
  reread: Reread;
  budget: number;
}

/**
 * The texts of `members` (document indices) read again through `reread`, asked for sorted by source and offset (so
 * files are read front to back), and each member's position among them.
 */
async function readAgain(
  members: number[],
  ctx: Pick<RereadContext, 'locators' | 'reread'>,
): Promise<{ texts: ReadonlyArray<string | Uint8Array>; local: Map<number, number> }> {
  const { source, offset, length } = ctx.locators;
  members.sort((x, y) => source[x]! - source[y]! || offset[x]! - offset[y]! || x - y);
  const local = new Map<number, number>();
  const loc: Locators = {
    index: Uint32Array.from(members),
    source: new Uint32Array(members.length),
    offset: new Float64Array(members.length),
    length: new Float64Array(members.length),
  };
  members.forEach((d, i) => {
    local.set(d, i);
    loc.source[i] = source[d]!;
    loc.offset[i] = offset[d]!;
    loc.length[i] = length[d]!;
  });
  const texts = await ctx.reread(loc);
  if (!Array.isArray(texts) || texts.length !== members.length)
    throw new TypeError(`reread must return one text per document asked for (${members.length}), got ${show(texts)}`);
  return { texts, local };
}

/**
 * Confirms the exact copies that the content hash found: each copy (copyOf[i] !== i, its first copy copyOf[i]) is
 * read again with its first copy, a batch of about `budget` bytes at a time, and compared byte for byte. A copy
 * whose text differs (two texts with one 128-bit hash) becomes its own first copy, so the join and verification
 * decide about it like any other text. Returns how many were not copies.
 */
export async function confirmCopies(copyOf: Uint32Array, ctx: RereadContext): Promise<number> {
  const { length } = ctx.locators;
  let pending: number[] = [];
  let docs = new Set<number>();
  let bytes = 0;
  let differ = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const { texts, local } = await readAgain([...docs], ctx);
    for (const i of pending) {
      if (!sameText(texts[local.get(i)!]!, texts[local.get(copyOf[i]!)!]!)) {
        copyOf[i] = i;
        differ++;
      }
    }
    pending = [];
    docs = new Set();
    bytes = 0;
  };
  for (let i = 0; i < copyOf.length; i++) {
    const first = copyOf[i]!;
    if (first === i) continue;
    const add = (docs.has(i) ? 0 : length[i]!) + (docs.has(first) ? 0 : length[first]!);
    if (pending.length > 0 && bytes + add > ctx.budget) await flush();
    docs.add(i);
    docs.add(first);
    bytes += add;
    pending.push(i);
  }
  await flush();
  return differ;
}
