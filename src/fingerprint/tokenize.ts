// Tokenizers that run in JavaScript: Intl.Segmenter words and user functions. Their features go to WebAssembly
// in one batch with the document's other features; the built-in tokenizers run inside WebAssembly instead.
import type { Feature, Plan } from './options.js';
import { show } from '../errors.js';

const segmenters = new Map<string, Intl.Segmenter>();

function segmenter(locale: string | undefined): Intl.Segmenter {
  const key = locale ?? '';
  let s = segmenters.get(key);
  if (!s) {
    s = new Intl.Segmenter(locale, { granularity: 'word' });
    segmenters.set(key, s);
  }
  return s;
}

// V8's Intl.Segmenter slows down quadratically with the length of the string (100 KB of English: 9 s in one
// piece, 45 ms in 1 KB pieces), so text is segmented in pieces that end after whitespace or CJK punctuation,
// where UAX #29 always puts a word boundary (ASCII punctuation may sit inside a word: "can't", "3.14").
const CHUNK = 1024;
const BREAK = /[\s\u3001-\u3003\u3008-\u3011\uff01-\uff0f\uff1a-\uff20]/u;

function chunkEnd(text: string, start: number): number {
  const end = start + CHUNK;
  if (end >= text.length) return text.length;
  for (let i = end; i > end - 512; i--) {
    if (BREAK.test(text[i - 1]!)) return i;
  }
  // 512 characters without a space or CJK punctuation: cut anyway, away from a surrogate pair.
  const c = text.charCodeAt(end - 1);
  return c >= 0xd800 && c <= 0xdbff ? end + 1 : end;
}

/** Word-like segments, lowercased: for text without spaces between words (Chinese, Japanese, Thai, ...). */
export function* segmenterWords(text: string, locale?: string): Generator<string> {
  const s = segmenter(locale);
  for (let start = 0; start < text.length; ) {
    const end = chunkEnd(text, start);
    for (const part of s.segment(text.slice(start, end))) {
      if (part.isWordLike) yield part.segment.toLowerCase();
    }
    start = end;
  }
}

/** Features of `text` from a tokenizer that runs in JavaScript. */
export function jsFeatures(text: string, plan: Plan): Iterable<Feature> {
  if (plan.tokenizer === 'segmenter') return segmenterWords(text, plan.locale);
  if (typeof plan.tokenizer !== 'function') throw new Error(`internal: ${show(plan.tokenizer)} runs in WebAssembly`);
  const features = plan.tokenizer(text);
  if (
    features === null ||
    typeof features !== 'object' ||
    typeof (features as Iterable<Feature>)[Symbol.iterator] !== 'function'
  ) {
    throw new TypeError(`the tokenizer function must return an iterable of features, got ${show(features)}`);
  }
  return features;
}
