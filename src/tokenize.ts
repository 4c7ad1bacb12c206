// Tokenizers that run in JavaScript: Intl.Segmenter words and user functions. Their features go to WebAssembly
// in one batch with the document's other features; the built-in tokenizers run inside WebAssembly instead.
import { type Feature, type Plan, show } from './options.js';

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

/** Word-like segments, lowercased: for text without spaces between words (Chinese, Japanese, Thai, ...). */
export function* segmenterWords(text: string, locale?: string): Generator<string> {
  for (const part of segmenter(locale).segment(text)) {
    if (part.isWordLike) yield part.segment.toLowerCase();
  }
}

/** Features of `text` from a tokenizer that runs in JavaScript. */
export function jsFeatures(text: string, plan: Plan): Iterable<Feature> {
  if (plan.tokenizer === 'segmenter') return segmenterWords(text, plan.locale);
  if (typeof plan.tokenizer !== 'function') throw new Error(`internal: ${show(plan.tokenizer)} runs in WebAssembly`);
  const features = plan.tokenizer(text);
  if (features === null || typeof features !== 'object' || typeof (features as Iterable<Feature>)[Symbol.iterator] !== 'function') {
    throw new TypeError(`the tokenizer function must return an iterable of features, got ${show(features)}`);
  }
  return features;
}
