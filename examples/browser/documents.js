// Where the page's documents come from: pasted text, dropped or chosen files, the built-in sample and a
// generated corpus large enough to show the worker and its progress bar.

/**
 * @typedef {{ name: string, text: string }} Doc
 */

/**
 * Splits pasted text into documents: at blank lines ('paragraphs') or at every line ('lines').
 * Empty pieces are dropped.
 * @param {string} text
 * @param {'paragraphs' | 'lines'} mode
 * @returns {Doc[]}
 */
export function splitPasted(text, mode) {
  const pieces = mode === 'lines' ? text.split(/\r?\n/) : text.split(/\r?\n\s*\r?\n/);
  const docs = [];
  for (const piece of pieces) {
    const trimmed = piece.trim();
    if (trimmed.length > 0) docs.push({ name: `pasted #${docs.length + 1}`, text: trimmed });
  }
  return docs;
}

/**
 * A file's text (UTF-8): gzip-compressed files, recognised by their first two bytes as the command line does, are
 * decompressed with the browser's own DecompressionStream.
 * @param {File} file
 * @returns {Promise<string>}
 */
async function fileText(file) {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  if (head[0] !== 0x1f || head[1] !== 0x8b) return file.text();
  return new Response(file.stream().pipeThrough(new DecompressionStream('gzip'))).text();
}

/** @param {Uint8Array} bytes */
const isPar1 = (bytes) => bytes.length === 4 && String.fromCharCode(...bytes) === 'PAR1';

/** Whether a file is a Parquet table: it starts and ends with PAR1, as the command line checks. */
async function isParquet(file) {
  if (file.size < 12) return false;
  const [head, tail] = await Promise.all([file.slice(0, 4).arrayBuffer(), file.slice(file.size - 4).arrayBuffer()]);
  return isPar1(new Uint8Array(head)) && isPar1(new Uint8Array(tail));
}

/**
 * A Zstandard page decoder for hyparquet: zstddec, whose decode returns the bytes the decoder reports, so a damaged
 * frame comes back short and is refused here.
 * @returns {Promise<(input: Uint8Array, outputLength: number) => Uint8Array>}
 */
async function zstdPages() {
  const { ZSTDDecoder } = await import('./lib/zstddec.mjs');
  const decoder = new ZSTDDecoder();
  await decoder.init();
  return (input, outputLength) => {
    const out = decoder.decode(input, outputLength);
    if (out.length !== outputLength)
      throw new Error(`a Zstandard page gave ${out.length} bytes where its header says ${outputLength}`);
    return out;
  };
}

/**
 * A Parquet table's rows as documents, read with hyparquet (the command line's Parquet reader; the page build copies
 * it into lib/hyparquet and it loads only when a table is dropped). The text is the column named "text", else the
 * first string column; "id", when there is one, names each row. hyparquet itself reads uncompressed and Snappy
 * tables (DuckDB's and Spark's default); Zstandard pages go through zstddec (lib/zstddec.mjs, loaded only for such a
 * table), as on the command line before Node 22.15; other codecs are reported as unreadable.
 * @param {File} file
 * @returns {Promise<Doc[]>}
 */
async function parquetDocs(file) {
  const { parquetMetadata, parquetSchema, parquetReadObjects } = await import('./lib/hyparquet/index.js');
  const buffer = await file.arrayBuffer();
  const metadata = parquetMetadata(buffer);
  const zstd = metadata.row_groups.some((g) => g.columns.some((c) => c.meta_data?.codec === 'ZSTD'));
  const columns = parquetSchema(metadata).children.map((c) => c.element);
  const isString = (e) => e.type === 'BYTE_ARRAY' && (e.converted_type === 'UTF8' || e.logical_type?.type === 'STRING');
  const text = columns.find((e) => e.name === 'text' && isString(e)) ?? columns.find(isString);
  if (!text) throw new TypeError(`${file.name}: no string column to read as text`);
  const id = columns.find((e) => e.name === 'id' && e.name !== text.name);
  const rows = await parquetReadObjects({
    file: buffer,
    metadata,
    columns: id ? [text.name, id.name] : [text.name],
    rowFormat: 'object',
    compressors: zstd ? { ZSTD: await zstdPages() } : undefined,
  });
  return rows.map((row, i) => ({
    name: `${file.name}: ${id && row[id.name] != null ? String(row[id.name]) : `row ${i + 1}`}`,
    text: row[text.name] == null ? '' : String(row[text.name]),
  }));
}

/**
 * Reads files as documents: a text file (UTF-8, gzip decompressed) is one document, a Parquet table one per row.
 * Files that fail to read are reported with the reason, not fatal.
 * @param {Iterable<File>} files
 * @returns {Promise<{ docs: Doc[], failed: string[] }>}
 */
export async function readFiles(files) {
  const docs = [];
  const failed = [];
  for (const file of files) {
    try {
      if (await isParquet(file)) docs.push(...(await parquetDocs(file)));
      else docs.push({ name: file.name, text: await fileText(file) });
    } catch (error) {
      failed.push(`${file.name} (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  return { docs, failed };
}

const SAMPLE_PARAGRAPHS = [
  [
    'lighthouse',
    'The old lighthouse keeper climbed the spiral stairs every evening at dusk, trimmed the wick, polished the great lens and watched the beam sweep across the rocks where so many ships had been lost before the light was built.',
  ],
  [
    'sourdough',
    'To make a sourdough loaf, feed the starter the night before, mix flour and water and let them rest, then add the starter and salt, fold the dough every half hour for two hours and leave it to rise slowly in a cool kitchen.',
  ],
  [
    'glacier',
    'Glaciers advance and retreat over centuries, carving valleys into a characteristic U shape, leaving moraines of rock and gravel behind them and feeding the rivers below with meltwater through the long dry summer.',
  ],
  [
    'compiler',
    'A compiler reads the source program, builds a syntax tree, checks the types, lowers the tree into an intermediate form, optimises that form with many small passes and finally emits machine code for the target processor.',
  ],
  [
    'orchestra',
    'Before the concert the oboe sounds a long A, the strings tune their open strings to it, the brass and woodwinds follow, and the conductor waits in the wings until the hall falls completely silent.',
  ],
  [
    'marathon',
    'Training for a first marathon takes months of patient running, most of it slow, with one long run each weekend that grows by a mile or two, plenty of sleep, and a taper in the final three weeks before the race.',
  ],
];

/**
 * A small corpus with known near-duplicates: light edits of some paragraphs (a changed word, an added
 * sentence, different punctuation and case) beside unrelated ones.
 * @returns {Doc[]}
 */
export function sampleDocuments() {
  /** @type {Doc[]} */
  const docs = SAMPLE_PARAGRAPHS.map(([name, text]) => ({ name: `${name}.txt`, text }));
  const [lighthouse, sourdough, glacier, compiler] = SAMPLE_PARAGRAPHS.map(([, text]) => text);
  docs.push({ name: 'lighthouse (one word changed).txt', text: lighthouse.replace('evening', 'night') });
  docs.push({ name: 'lighthouse (sentence added).txt', text: lighthouse + ' He kept a log of every storm.' });
  docs.push({ name: 'sourdough (shouted).txt', text: sourdough.toUpperCase().replace(/,/g, ';') });
  docs.push({
    name: 'glacier (two words changed).txt',
    text: glacier.replace('centuries', 'millennia').replace('summer', 'season'),
  });
  docs.push({ name: 'compiler (copy).txt', text: compiler });
  return docs;
}

/** A small seeded PRNG (mulberry32) so generated corpora are the same on every load. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` generated documents of 60–200 pseudo-words; every fifth one is a lightly edited copy of an earlier
 * document, so the corpus has clusters to find.
 * @param {number} count
 * @param {number} [seed]
 * @returns {Doc[]}
 */
export function generatedDocuments(count, seed = 1) {
  const next = random(seed);
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ren',
    'sa',
    'tu',
    'vel',
    'dor',
    'an',
    'is',
    'qua',
    'ber',
    'no',
    'zi',
    'pel',
    'gor',
  ];
  const vocabulary = [];
  for (let i = 0; i < 2000; i++) {
    const length = 1 + Math.floor(next() * 3);
    let word = '';
    for (let s = 0; s < length; s++) word += syllables[Math.floor(next() * syllables.length)];
    vocabulary.push(word);
  }
  const pick = () => vocabulary[Math.floor(next() * vocabulary.length)];
  /** @type {Doc[]} */
  const docs = [];
  for (let i = 0; i < count; i++) {
    if (i >= 5 && i % 5 === 0) {
      const source = Math.floor(next() * i);
      const words = docs[source].text.split(' ');
      const edits = 1 + Math.floor(next() * 3);
      for (let e = 0; e < edits; e++) words[Math.floor(next() * words.length)] = pick();
      docs.push({ name: `generated ${i} (edit of ${source})`, text: words.join(' ') });
    } else {
      const length = 60 + Math.floor(next() * 140);
      const words = [];
      for (let w = 0; w < length; w++) words.push(pick());
      docs.push({ name: `generated ${i}`, text: words.join(' ') });
    }
  }
  return docs;
}
