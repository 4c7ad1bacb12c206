// A plain parser of the Unicode Character Database text files, and what the default spec (docs/spec.md) says each
// code point's class and case folding are, derived from them. Independent of V8's regular expressions and case
// mapping, which scripts/gen-unicode.mjs uses to build the WebAssembly tables.
//
// The files are Unicode 15.0.0's as Debian's package unicode-data 15.0.0-1 installs them, kept gzipped in
// test/vectors/ucd/ (see SOURCES.md there) so that the tests need nothing installed; each is checked against its
// SHA-256 as published there. SIMHASH_UCD names a directory of plain .txt files to use instead (another version,
// say /usr/share/unicode).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

const UCD_DIR = process.env.SIMHASH_UCD || undefined;
const VENDORED = path.join(import.meta.dirname, 'vectors/ucd');
/** SHA-256 of the uncompressed files of unicode-data 15.0.0-1. */
const SHA256: Record<string, string> = {
  'UnicodeData.txt': '806e9aed65037197f1ec85e12be6e8cd870fc5608b4de0fffd990f689f376a73',
  'Scripts.txt': 'cca85d830f46aece2e7c1459ef1249993dca8f2e46d51e869255be140d7ea4b0',
  'CaseFolding.txt': 'cdd49e55eae3bbf1f0a3f6580c974a0263cb86a6a08daa10fbf705b4808a56f7',
  'DerivedCoreProperties.txt': 'd367290bc0867e6b484c68370530bdd1a08b6b32404601b8c7accaf83e05628d',
};
export const CODE_POINTS = 0x110000;

export const SEPARATOR = 0;
export const WORD = 1;
export const STANDALONE = 2;
export type CharClass = typeof SEPARATOR | typeof WORD | typeof STANDALONE;

/** The scripts whose characters are each a word by themselves (written without spaces). */
export const STANDALONE_SCRIPTS = ['Han', 'Hiragana', 'Katakana', 'Thai', 'Lao', 'Khmer', 'Myanmar'];

export interface Ucd {
  /** e.g. '15.0.0', from the header of Scripts.txt (UnicodeData.txt has none). */
  version: string;
  /** General category per code point ('Cn' where UnicodeData.txt lists nothing). */
  category(cp: number): string;
  /** Script property (not Script_Extensions) per code point ('Unknown' where Scripts.txt lists nothing). */
  script(cp: number): string;
  /** UnicodeData.txt's simple uppercase and lowercase mappings (the code point itself where there is none). */
  simpleUpper(cp: number): number;
  simpleLower(cp: number): number;
  /** CaseFolding.txt's simple case folding (statuses C and S); the code point itself where there is none. */
  simpleCaseFold(cp: number): number;
  /** Code points with a binary property of DerivedCoreProperties.txt. */
  derived(property: string): Set<number>;
}

function read(file: string): string {
  if (UCD_DIR !== undefined) {
    const full = path.join(UCD_DIR, file);
    if (!fs.existsSync(full)) throw new Error(`${full} is missing (SIMHASH_UCD=${UCD_DIR})`);
    return fs.readFileSync(full, 'utf8');
  }
  const bytes = gunzipSync(fs.readFileSync(path.join(VENDORED, `${file}.gz`)));
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== SHA256[file])
    throw new Error(`test/vectors/ucd/${file}.gz is not unicode-data 15.0.0-1's ${file} (${sha})`);
  return bytes.toString('utf8');
}

/** Data lines of a UCD file: comments stripped, fields split on ';' and trimmed. */
function rows(text: string): string[][] {
  const out: string[][] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line) out.push(line.split(';').map((f) => f.trim()));
  }
  return out;
}

/** "0041" or "0041..005A" as [first, last]. */
function range(field: string): [number, number] {
  const [a, b] = field.split('..');
  const first = Number.parseInt(a!, 16);
  return [first, b === undefined ? first : Number.parseInt(b, 16)];
}

function versionOf(text: string, file: string): string {
  const m = /^# \w+-(\d+\.\d+\.\d+)\.txt/.exec(text);
  if (!m) throw new Error(`${file}: no version line at the top`);
  return m[1]!;
}

export function loadUcd(): Ucd {
  const scriptsText = read('Scripts.txt');
  const version = versionOf(scriptsText, 'Scripts.txt');
  const derivedText = read('DerivedCoreProperties.txt');
  const caseFoldingText = read('CaseFolding.txt');
  for (const [text, file] of [
    [derivedText, 'DerivedCoreProperties.txt'],
    [caseFoldingText, 'CaseFolding.txt'],
  ] as const) {
    if (versionOf(text, file) !== version) throw new Error(`${file} is not from Unicode ${version}`);
  }

  const categoryNames = ['Cn'];
  const category = new Uint8Array(CODE_POINTS); // index into categoryNames; 0 = Cn
  const upper = new Int32Array(CODE_POINTS).fill(-1);
  const lower = new Int32Array(CODE_POINTS).fill(-1);
  const categoryIndex = (name: string) => {
    let i = categoryNames.indexOf(name);
    if (i < 0) i = categoryNames.push(name) - 1;
    return i;
  };
  let rangeStart = -1;
  for (const f of rows(read('UnicodeData.txt'))) {
    const cp = Number.parseInt(f[0]!, 16);
    const name = f[1]!;
    const gc = categoryIndex(f[2]!);
    // Large blocks are given as a pair of lines, "<..., First>" and "<..., Last>", with the same properties.
    if (name.endsWith(', First>')) {
      rangeStart = cp;
      continue;
    }
    if (name.endsWith(', Last>')) {
      category.fill(gc, rangeStart, cp + 1);
      rangeStart = -1;
      continue;
    }
    category[cp] = gc;
    if (f[12]) upper[cp] = Number.parseInt(f[12], 16);
    if (f[13]) lower[cp] = Number.parseInt(f[13], 16);
  }

  const scriptNames = ['Unknown'];
  const script = new Uint8Array(CODE_POINTS);
  for (const [field, name] of rows(scriptsText)) {
    let i = scriptNames.indexOf(name!);
    if (i < 0) i = scriptNames.push(name!) - 1;
    const [first, last] = range(field!);
    script.fill(i, first, last + 1);
  }

  const caseFold = new Int32Array(CODE_POINTS).fill(-1);
  for (const [code, status, mapping] of rows(caseFoldingText)) {
    if (status === 'C' || status === 'S') caseFold[Number.parseInt(code!, 16)] = Number.parseInt(mapping!, 16);
  }

  const derived = new Map<string, Set<number>>();
  for (const [field, property] of rows(derivedText)) {
    let set = derived.get(property!);
    if (!set) derived.set(property!, (set = new Set()));
    const [first, last] = range(field!);
    for (let cp = first; cp <= last; cp++) set.add(cp);
  }

  const orSelf = (table: Int32Array, cp: number) => (table[cp]! < 0 ? cp : table[cp]!);
  return {
    version,
    category: (cp) => categoryNames[category[cp]!]!,
    script: (cp) => scriptNames[script[cp]!]!,
    simpleUpper: (cp) => orSelf(upper, cp),
    simpleLower: (cp) => orSelf(lower, cp),
    simpleCaseFold: (cp) => orSelf(caseFold, cp),
    derived: (property) => {
      const set = derived.get(property);
      if (!set) throw new Error(`DerivedCoreProperties.txt has no property ${property}`);
      return set;
    },
  };
}

/** The spec's class: L, N and M are word characters; those of the STANDALONE_SCRIPTS are words by themselves. */
export function specClass(ucd: Ucd, cp: number): CharClass {
  const major = ucd.category(cp)[0];
  if (major !== 'L' && major !== 'N' && major !== 'M') return SEPARATOR;
  return STANDALONE_SCRIPTS.includes(ucd.script(cp)) ? STANDALONE : WORD;
}

/** The spec's case folding: lowercase(uppercase(c)) with UnicodeData.txt's simple (one code point) mappings. */
export function specFold(ucd: Ucd, cp: number): number {
  return ucd.simpleLower(ucd.simpleUpper(cp));
}
