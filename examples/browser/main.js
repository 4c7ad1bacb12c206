// The page: collects documents, hands them to the worker (worker.js) and shows what comes back: clusters,
// a comparison of any two documents and the histogram of pairwise distances. The library also runs here on the
// main thread, for the comparison panel (hammingDistance, similarity, toHex work on single fingerprints).
import * as simhash from './lib/simhash-wasm.mjs';
import { splitPasted, readFiles, sampleDocuments, generatedDocuments } from './documents.js';
import { drawHistogram, binAt } from './histogram.js';

const { init, loadedBuild, hammingDistance, similarity, toHex, SPEC_ID } = simhash;

/** ?build=simd|scalar forces one WebAssembly build (the tests load the page both ways); default: auto. */
const requestedBuild = new URLSearchParams(location.search).get('build') ?? 'auto';
const MAX_CLUSTERS_SHOWN = 100;
const MAX_MEMBERS_SHOWN = 12;
const MAX_ROWS_SHOWN = 300;
/** Share of the progress bar given to each phase of the worker's job. */
const PHASES = { fingerprints: [0, 0.6], pairs: [0.6, 0.7], histogram: [0.7, 1] };

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

const state = {
  /** @type {import('./documents.js').Doc[]} documents from files, the sample or the generator */
  fileDocs: [],
  /** @type {import('./documents.js').Doc[]} the documents of the result on screen */
  docs: [],
  /** @type {any} the worker's last result */
  result: null,
  /** @type {number[]} up to two selected document indices */
  selected: [],
  /** @type {Worker | null} */
  worker: null,
  runId: 0,
  /** @type {{ reject: (e: Error) => void } | null} */
  pending: null,
};

// ---------------------------------------------------------------- library on the main thread
const ready = init({ build: requestedBuild === 'auto' ? 'auto' : /** @type {any} */ (requestedBuild) }).then(
  () => {
    const build = loadedBuild();
    $('engine').textContent = `${build === 'simd' ? 'WebAssembly SIMD' : 'WebAssembly (scalar)'} · ${SPEC_ID}`;
    return { build };
  },
  (error) => {
    $('engine').textContent = 'WebAssembly unavailable';
    setStatus('error', `Could not load simhash-wasm: ${error.message}`);
    throw error;
  },
);

// ---------------------------------------------------------------- documents
function currentDocuments() {
  return [...splitPasted(input('paste').value, /** @type {any} */ (input('split').value)), ...state.fileDocs];
}

function updateDocCount() {
  const pasted = splitPasted(input('paste').value, /** @type {any} */ (input('split').value)).length;
  const files = state.fileDocs.length;
  const total = pasted + files;
  $('doc-count').textContent =
    total === 0
      ? 'No documents yet.'
      : `${total.toLocaleString()} documents: ${pasted.toLocaleString()} pasted, ${files.toLocaleString()} from files or samples.`;
}

/** @param {Iterable<File>} files */
async function addFiles(files) {
  const { docs, failed } = await readFiles(files);
  state.fileDocs.push(...docs);
  updateDocCount();
  if (failed.length > 0) setStatus('error', `Could not read: ${failed.join(', ')}`);
}

// ---------------------------------------------------------------- running the worker
function readOptions() {
  const bits = Number(input('bits').value);
  const k = Number(input('k').value);
  if (!Number.isInteger(k) || k < 0 || k > bits)
    throw new RangeError(`k must be an integer from 0 to ${bits}, got ${input('k').value}`);
  const widthText = input('width').value.trim();
  const options = { k, bits, tokenizer: input('tokenizer').value };
  if (widthText !== '') {
    const width = Number(widthText);
    if (!Number.isInteger(width) || width < 1 || width > 64)
      throw new RangeError(`width must be an integer from 1 to 64, got ${widthText}`);
    options.width = width;
  }
  return options;
}

/** @param {'idle' | 'running' | 'done' | 'error'} kind @param {string} text */
function setStatus(kind, text) {
  const status = $('status');
  status.dataset.state = kind;
  status.textContent = text;
}

function setRunning(running) {
  /** @type {HTMLButtonElement} */ ($('run')).disabled = running;
  $('cancel').hidden = !running;
}

function cancel() {
  if (!state.worker) return;
  state.worker.terminate();
  state.worker = null;
  state.pending?.reject(new Error('cancelled'));
  state.pending = null;
  setRunning(false);
  setStatus('idle', 'Cancelled.');
  /** @type {HTMLProgressElement} */ ($('progress')).value = 0;
}

/**
 * Fingerprints and clusters the current documents in the worker. Resolves to a summary (used by the tests);
 * while it runs, a timer on this thread measures the longest stall, to show the page stayed responsive.
 */
function run() {
  let docs;
  let options;
  try {
    docs = currentDocuments();
    if (docs.length === 0) throw new RangeError('Add some documents first: paste text, drop files or load the sample.');
    options = readOptions();
  } catch (error) {
    setStatus('error', error.message);
    return Promise.reject(error);
  }
  if (state.pending) cancel();
  state.worker ??= new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const worker = state.worker;
  const id = ++state.runId;
  const progressBar = /** @type {HTMLProgressElement} */ ($('progress'));
  const progressLog = [];
  const started = performance.now();
  let lastTick = started;
  let maxStallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxStallMs = Math.max(maxStallMs, now - lastTick - 50);
    lastTick = now;
  }, 50);
  setRunning(true);
  setStatus('running', `Loading WebAssembly for ${docs.length.toLocaleString()} documents…`);
  progressBar.value = 0;

  return new Promise((resolve, reject) => {
    const finish = () => {
      clearInterval(ticker);
      state.pending = null;
      setRunning(false);
    };
    state.pending = {
      reject: (error) => {
        finish();
        reject(error);
      },
    };
    worker.onmessage = (event) => {
      const message = event.data;
      if (message.id !== id) return;
      if (message.type === 'ready') {
        setStatus(
          'running',
          `Worker ready (WebAssembly ${message.build}); fingerprinting ${docs.length.toLocaleString()} documents…`,
        );
      } else if (message.type === 'progress') {
        const [from, to] = PHASES[message.phase];
        const fraction = message.total === 0 ? 1 : message.done / message.total;
        progressBar.value = from + (to - from) * fraction;
        progressLog.push(progressBar.value);
        setStatus('running', `${message.phase}: ${message.done.toLocaleString()} / ${message.total.toLocaleString()}`);
      } else if (message.type === 'result') {
        finish();
        const workerMs = performance.now() - started;
        progressBar.value = 1;
        state.docs = docs;
        state.result = message;
        state.selected = [];
        const renderStart = performance.now();
        render();
        const renderMs = performance.now() - renderStart;
        setStatus(
          'done',
          `Done: ${docs.length.toLocaleString()} documents in ${workerMs.toFixed(0)} ms (worker, ${message.build}) + ${renderMs.toFixed(0)} ms to draw.`,
        );
        resolve(summary(message, docs, { progressLog, maxStallMs, workerMs }));
      } else if (message.type === 'error') {
        finish();
        setStatus('error', `Error: ${message.message}`);
        reject(new Error(message.message));
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      finish();
      state.worker = null;
      worker.terminate();
      setStatus('error', `Worker failed: ${event.message || 'could not start'}`);
      reject(new Error(event.message || 'worker failed'));
    };
    worker.postMessage({ type: 'run', id, texts: docs.map((d) => d.text), options, build: requestedBuild });
  });
}

function fingerprintOf(index) {
  const { fingerprints, bits } = state.result;
  return bits === 128 ? (fingerprints[2 * index + 1] << 64n) | fingerprints[2 * index] : fingerprints[index];
}

/** A plain-data view of a result, for tests and for anyone poking at the page from the console. */
function summary(result, docs, extra) {
  return {
    documents: docs.length,
    build: result.build,
    bits: result.bits,
    k: result.k,
    fingerprints: docs.map((_, i) => toHex(fingerprintOf(i), result.bits)),
    clusterOf: Array.from(result.clusterOf),
    clusterCount: result.clusterCount,
    pairs: result.pairs.a.length,
    histogram: Array.from(result.histogram),
    histogramPairs: result.histogramPairs,
    histogramSampled: result.histogramSampled,
    timings: result.timings,
    ...extra,
  };
}

// ---------------------------------------------------------------- rendering
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'data') Object.assign(node.dataset, value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

const snippet = (text) => text.replace(/\s+/g, ' ').slice(0, 140);

function docItem(index) {
  const doc = state.docs[index];
  return el(
    'li',
    { class: 'doc', data: { doc: String(index) }, title: snippet(doc.text) },
    el('span', { class: 'name' }, `#${index + 1} ${doc.name}`),
    el('span', { class: 'snippet' }, snippet(doc.text)),
    el('span', { class: 'fp mono' }, toHex(fingerprintOf(index), state.result.bits)),
  );
}

/**
 * The deduplicated corpus as the command line's --output writes it for JSON Lines: each cluster keeps its first
 * document (the lowest index, its representative), in input order; one {"name", "text"} record per line.
 */
function deduplicatedJsonl() {
  const { clusterOf } = state.result;
  const lines = [];
  state.docs.forEach((doc, i) => {
    if (clusterOf[i] === i) lines.push(`${JSON.stringify({ name: doc.name, text: doc.text })}\n`);
  });
  return lines.join('');
}

function download() {
  const url = URL.createObjectURL(new Blob([deduplicatedJsonl()], { type: 'application/x-ndjson' }));
  const a = el('a', { href: url, download: 'deduplicated.jsonl' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function render() {
  const result = state.result;
  const n = state.docs.length;
  $('results').hidden = false;

  const groups = new Map();
  for (let i = 0; i < n; i++) {
    const c = result.clusterOf[i];
    let members = groups.get(c);
    if (!members) groups.set(c, (members = []));
    members.push(i);
  }
  const multi = [...groups.values()].filter((m) => m.length > 1).sort((x, y) => y.length - x.length || x[0] - y[0]);
  const clustered = multi.reduce((sum, m) => sum + m.length, 0);

  const t = result.timings;
  $('summary').replaceChildren(
    el('span', {}, el('b', {}, n.toLocaleString()), ' documents'),
    el(
      'span',
      {},
      el('b', { id: 'pair-count' }, result.pairs.a.length.toLocaleString()),
      ` pairs within distance ${result.k}`,
    ),
    el(
      'span',
      {},
      el('b', { id: 'cluster-count' }, multi.length.toLocaleString()),
      ` clusters of near-duplicates (${clustered.toLocaleString()} documents)`,
    ),
    el(
      'span',
      { class: 'muted' },
      `${result.bits}-bit · ${result.build} · fingerprints ${t.fingerprintMs.toFixed(1)} ms, pairs ${t.pairsMs.toFixed(1)} ms, clusters ${t.clusterMs.toFixed(1)} ms, histogram ${t.histogramMs.toFixed(1)} ms`,
    ),
  );

  const list = $('clusters');
  list.replaceChildren();
  for (const [rank, members] of multi.slice(0, MAX_CLUSTERS_SHOWN).entries()) {
    const items = el('ul');
    for (const i of members.slice(0, MAX_MEMBERS_SHOWN)) items.append(docItem(i));
    if (members.length > MAX_MEMBERS_SHOWN)
      items.append(el('li', { class: 'muted' }, `… and ${members.length - MAX_MEMBERS_SHOWN} more`));
    list.append(
      el(
        'li',
        { class: 'cluster', data: { cluster: String(result.clusterOf[members[0]]) } },
        el('b', {}, `Cluster ${rank + 1}`),
        ` · ${members.length} documents`,
        items,
      ),
    );
  }
  if (multi.length === 0)
    list.append(el('li', { class: 'muted' }, `No two documents are within distance ${result.k}.`));
  if (multi.length > MAX_CLUSTERS_SHOWN)
    list.append(el('li', { class: 'muted' }, `… and ${multi.length - MAX_CLUSTERS_SHOWN} more clusters`));

  const body = /** @type {HTMLTableElement} */ ($('documents')).tBodies[0];
  body.replaceChildren();
  const sizes = new Map([...groups].map(([c, m]) => [c, m.length]));
  for (let i = 0; i < Math.min(n, MAX_ROWS_SHOWN); i++) {
    const c = result.clusterOf[i];
    body.append(
      el(
        'tr',
        { data: { doc: String(i), fp: toHex(fingerprintOf(i), result.bits), cluster: String(c) } },
        el('td', {}, String(i + 1)),
        el('td', {}, state.docs[i].name),
        el('td', { class: 'mono' }, toHex(fingerprintOf(i), result.bits)),
        el('td', {}, sizes.get(c) > 1 ? `${c} (${sizes.get(c)})` : '—'),
      ),
    );
  }
  $('documents-more').textContent =
    n > MAX_ROWS_SHOWN ? `Showing the first ${MAX_ROWS_SHOWN} of ${n.toLocaleString()} documents.` : '';

  input('pick-a').max = String(n);
  input('pick-b').max = String(n);
  const first = multi[0];
  select(first ? [first[0], first[1]] : n > 1 ? [0, 1] : [0]);
  renderHistogram();
}

function renderHistogram() {
  const result = state.result;
  if (!result) return;
  drawHistogram(/** @type {HTMLCanvasElement} */ ($('histogram')), {
    counts: result.histogram,
    k: result.k,
    log: input('log-scale').checked,
  });
  const canvas = $('histogram');
  canvas.dataset.pairs = String(result.histogramPairs);
  $('histogram-info').textContent = result.histogramSampled
    ? `${result.histogramPairs.toLocaleString()} randomly sampled pairs`
    : `all ${result.histogramPairs.toLocaleString()} pairs`;
}

/** @param {number[]} indices */
function select(indices) {
  state.selected = indices.slice(-2);
  for (const node of document.querySelectorAll('[data-doc]')) {
    node.classList.toggle('selected', state.selected.includes(Number(/** @type {HTMLElement} */ (node).dataset.doc)));
  }
  input('pick-a').value = state.selected[0] === undefined ? '' : String(state.selected[0] + 1);
  input('pick-b').value = state.selected[1] === undefined ? '' : String(state.selected[1] + 1);
  renderCompare();
}

function renderCompare() {
  const box = $('compare');
  const [a, b] = state.selected;
  if (a === undefined || b === undefined) {
    box.replaceChildren(el('p', { class: 'muted' }, 'Select two documents.'));
    delete box.dataset.distance;
    return;
  }
  const { bits, k, clusterOf } = state.result;
  const fa = fingerprintOf(a);
  const fb = fingerprintOf(b);
  const distance = hammingDistance(fa, fb);
  const near = distance <= k;
  box.dataset.distance = String(distance);
  box.replaceChildren(
    el(
      'dl',
      {},
      el('dt', {}, `#${a + 1}`),
      el('dd', {}, state.docs[a].name),
      el('dt', {}, `#${b + 1}`),
      el('dd', {}, state.docs[b].name),
      el('dt', {}, 'fingerprints'),
      el('dd', { class: 'mono' }, toHex(fa, bits), el('br'), toHex(fb, bits)),
      el('dt', {}, 'distance'),
      el(
        'dd',
        {},
        el('span', { class: `distance${near ? ' near' : ''}`, id: 'distance' }, String(distance)),
        ` of ${bits} bits · similarity ${(similarity(fa, fb, bits) * 100).toFixed(1)}%`,
      ),
      el('dt', {}, 'verdict'),
      el(
        'dd',
        {},
        near ? `near-duplicates (≤ ${k})` : `not near-duplicates (> ${k})`,
        clusterOf[a] === clusterOf[b] ? ' · same cluster' : '',
      ),
    ),
    bitStrip(fa ^ fb, bits),
  );
}

/** One cell per bit, the differing ones highlighted: where the two fingerprints disagree. */
function bitStrip(xor, bits) {
  const ns = 'http://www.w3.org/2000/svg';
  const perRow = 64;
  const rows = Math.ceil(bits / perRow);
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('class', 'bitstrip');
  svg.setAttribute('viewBox', `0 0 ${perRow * 8} ${rows * 12}`);
  svg.setAttribute('width', '100%');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'bits where the fingerprints differ');
  for (let i = 0; i < bits; i++) {
    const rect = document.createElementNS(ns, 'rect');
    const bit = bits - 1 - i; // most significant first, like the hex
    rect.setAttribute('x', String((i % perRow) * 8));
    rect.setAttribute('y', String(Math.floor(i / perRow) * 12));
    rect.setAttribute('width', '7');
    rect.setAttribute('height', '10');
    rect.setAttribute('class', (xor >> BigInt(bit)) & 1n ? 'diff' : 'same');
    svg.append(rect);
  }
  return svg;
}

// ---------------------------------------------------------------- events
function onPick() {
  const n = state.docs.length;
  const picks = [input('pick-a').value, input('pick-b').value]
    .map(Number)
    .filter((v) => Number.isInteger(v) && v >= 1 && v <= n);
  if (picks.length === 2) select(picks.map((v) => v - 1));
}

$('results').addEventListener('click', (event) => {
  const target = /** @type {HTMLElement} */ (event.target).closest('[data-doc]');
  if (!target) return;
  const index = Number(/** @type {HTMLElement} */ (target).dataset.doc);
  if (state.selected.includes(index)) return;
  select([...state.selected, index]);
});
$('download').addEventListener('click', download);
input('pick-a').addEventListener('change', onPick);
input('pick-b').addEventListener('change', onPick);
input('log-scale').addEventListener('change', renderHistogram);
window.addEventListener('resize', renderHistogram);
$('histogram').addEventListener('mousemove', (event) => {
  const result = state.result;
  if (!result) return;
  const bin = binAt(/** @type {HTMLCanvasElement} */ (event.currentTarget), event.offsetX, result.histogram.length);
  $('histogram-hover').textContent =
    bin < 0 ? '\u00a0' : `distance ${bin}: ${result.histogram[bin].toLocaleString()} pairs`;
});

input('paste').addEventListener('input', updateDocCount);
input('split').addEventListener('change', updateDocCount);
input('files').addEventListener('change', async (event) => {
  const picker = /** @type {HTMLInputElement} */ (event.target);
  await addFiles(picker.files ?? []);
  picker.value = '';
});
const zone = $('dropzone');
zone.addEventListener('dragover', (event) => {
  event.preventDefault();
  zone.classList.add('over');
});
zone.addEventListener('dragleave', () => zone.classList.remove('over'));
zone.addEventListener('drop', (event) => {
  event.preventDefault();
  zone.classList.remove('over');
  if (event.dataTransfer?.files.length) addFiles(event.dataTransfer.files);
});
// A file dropped next to the box must not navigate away from the page.
window.addEventListener('dragover', (event) => event.preventDefault());
window.addEventListener('drop', (event) => event.preventDefault());

$('sample').addEventListener('click', () => {
  state.fileDocs = sampleDocuments();
  updateDocCount();
});
$('generate').addEventListener('click', () => {
  state.fileDocs = generatedDocuments(5000);
  updateDocCount();
});
$('clear').addEventListener('click', () => {
  input('paste').value = '';
  state.fileDocs = [];
  updateDocCount();
});
$('run').addEventListener('click', () => run().catch(() => {}));
$('cancel').addEventListener('click', cancel);

// For tests and the console: the library itself and the page's entry points.
Object.assign(window, {
  simhashDemo: {
    ready,
    lib: simhash,
    run,
    documents: currentDocuments,
    setDocuments(docs) {
      state.fileDocs = docs.map(({ name, text }) => ({ name, text }));
      input('paste').value = '';
      updateDocCount();
    },
    select,
    generatedDocuments,
    sampleDocuments,
  },
});
updateDocCount();
