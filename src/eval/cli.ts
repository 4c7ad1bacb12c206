// `npm run eval -- <corpus.jsonl>... [--quick] [--focus shingles/3/64] [--plot docs/quality.svg] [--json out.json] [--salts N]`
// Prints markdown: ground truth, the tokenizer/width/bits grid with each configuration's F1-best k, SimHash plus
// verification, and short documents; optionally writes the precision/recall-vs-k plot of the focus configuration.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { init } from '../runtime/wasm.js';
import type { Bits, TokenizerName } from '../fingerprint/options.js';
import type { CurvePoint } from './metrics.js';
import { createVerifier } from '../dedup/shingle-jaccard.js';
import { lineChart, type Series } from './plot.js';
import {
  configLabel,
  curveWithPolicy,
  defaultGrid,
  evaluateConfig,
  evaluateVerified,
  groundTruth,
  verifierLabel,
  shortDocumentBuckets,
  type Corpus,
  type EvalConfig,
  type Evaluated,
} from './runner.js';

export function readCorpus(path: string): Corpus {
  const ids: string[] = [];
  const texts: string[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let doc: unknown;
      try {
        doc = JSON.parse(line);
      } catch {
        throw new SyntaxError(`${path}:${i + 1}: not JSON`);
      }
      const d = doc as { id?: unknown; text?: unknown };
      if (typeof d.text !== 'string') throw new TypeError(`${path}:${i + 1}: "text" must be a string`);
      ids.push(d.id === undefined ? String(i) : String(d.id));
      texts.push(d.text);
    });
  return { name: `${basename(dirname(path))}/${basename(path).replace(/\.jsonl$/, '')}`, ids, texts };
}

export function parseConfig(spec: string): EvalConfig {
  const [tokenizer, width, bits, extra] = spec.split('/');
  const config: EvalConfig = { tokenizer: tokenizer as TokenizerName, bits: Number(bits ?? 64) as Bits };
  if (width) config.width = Number(width);
  if (extra === 'binary' || extra === 'log') config.weighting = extra;
  else if (extra) config.normalize = extra as 'NFKC';
  return config;
}

const p3 = (v: number): string => v.toFixed(3);

function table(head: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

interface CorpusReport {
  corpus: string;
  results: Evaluated[];
  /** Per configuration: the curve with exact verification at 0.5. */
  verified: CurvePoint[][];
}

const range = (from: number, to: number, step = 1): number[] =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

interface FocusCurves {
  corpus: string;
  points: CurvePoint[];
  verified: CurvePoint[];
}

function evaluateCorpus(
  corpus: Corpus,
  grid: EvalConfig[],
  focus: EvalConfig,
  salts: number,
): { report: CorpusReport; markdown: string; focus: FocusCurves } {
  const md: string[] = [];
  const gt = groundTruth(corpus);
  const n = corpus.texts.length;
  md.push(`## ${corpus.name}`, '');
  md.push(
    `${n} documents; ${gt.pairs.length} pairs with word 3-shingle Jaccard >= 0.5, ${gt.truth.relevant} of them >= 0.8. ` +
      `The join verified ${gt.candidates} candidate pairs of ${(n * (n - 1)) / 2} (${gt.seconds.toFixed(2)} s).`,
    '',
  );
  const exact = createVerifier(corpus.texts);
  const results = grid.map((c) => evaluateConfig(corpus, gt.truth, c));
  const verified = results.map((r) => evaluateVerified(r, gt.truth, exact, 0.5));
  md.push(
    table(
      ['tokenizer', 'bits', 'best k', 'precision', 'recall', 'F1', 'verified: k for recall 0.9', 'pairs verified'],
      results.map((r, i) => {
        const v = verified[i]!;
        return [
          r.label,
          r.config.bits,
          r.best.k,
          p3(r.best.precision),
          p3(r.best.recall),
          p3(r.best.f1),
          v.k90?.k ?? '-',
          v.verified,
        ];
      }),
    ),
    '',
  );
  const focusIndex = results.findIndex((r) => r.label === configLabel(focus) && r.config.bits === focus.bits);
  const focusResult = results[focusIndex] ?? evaluateConfig(corpus, gt.truth, focus);
  const label = `${configLabel(focus)} ${focus.bits}`;
  const b = focusResult.best;

  md.push(`### Plain SimHash and SimHash + exact verification (Jaccard >= 0.5) by k (${label})`, '');
  const focusVerified = focusIndex >= 0 ? verified[focusIndex]! : evaluateVerified(focusResult, gt.truth, exact, 0.5);
  const maxK = focusResult.points.length - 1;
  md.push(
    table(
      ['k', 'precision', 'recall', 'F1', 'verified precision', 'verified recall', 'verified F1', 'pairs verified'],
      range(0, maxK, maxK > 16 ? 2 : 1).map((k) => {
        const p = focusResult.points[k]!;
        const v = focusVerified.points[k]!;
        return [k, p3(p.precision), p3(p.recall), p3(p.f1), p3(v.precision), p3(v.recall), p3(v.f1), p.reported];
      }),
    ),
    '',
  );

  md.push(`### Verifiers compared (${label})`, '');
  const verifiedRows: Array<Array<string | number>> = [];
  verifiedRows.push([
    'none',
    '-',
    b.k,
    p3(b.precision),
    p3(b.recall),
    p3(b.f1),
    focusResult.points.find((p) => p.recall >= 0.9)?.k ?? '-',
  ]);
  for (const [options, thresholds] of [
    [{ method: 'exact' as const }, [0.5, 0.6, 0.7]],
    [{ method: 'sketch' as const, sketchSize: 128 }, [0.5, 0.6, 0.7]],
    [{ method: 'sketch' as const, sketchSize: 64 }, [0.5, 0.6]],
  ] as const) {
    const verifier = options.method === 'exact' ? exact : createVerifier(corpus.texts, options);
    for (const t of thresholds) {
      const v = evaluateVerified(focusResult, gt.truth, verifier, t, verifierLabel(options));
      verifiedRows.push([
        v.label,
        t,
        v.best.k,
        p3(v.best.precision),
        p3(v.best.recall),
        p3(v.best.f1),
        v.k90?.k ?? '-',
      ]);
    }
  }
  md.push(
    table(['verifier', 'threshold', 'best k', 'precision', 'recall', 'F1', 'k for recall 0.9'], verifiedRows),
    '',
  );

  md.push(`### Short documents (${label}, k = ${b.k})`, '');
  const buckets = shortDocumentBuckets(focusResult, gt.truth, b.k);
  md.push(
    table(
      ['fewer features of the pair', 'reported pairs', 'precision'],
      buckets
        .filter((x) => x.reported > 0)
        .map((x) => [
          x.max === Infinity ? `>= ${x.min}` : x.max - x.min === 1 ? `${x.min}` : `${x.min}-${x.max - 1}`,
          x.reported,
          p3(x.precision),
        ]),
    ),
    '',
  );
  const policyRows: Array<Array<string | number>> = [];
  for (const minFeatures of [0, 1, 2, 4, 8, 16]) {
    const points = curveWithPolicy(corpus, gt.truth, focusResult, minFeatures);
    const at = points[b.k]!;
    const best = points.reduce((x, y) => (y.f1 > x.f1 ? y : x));
    const short = Array.from(focusResult.fingerprinted.featureCounts).filter((c) => c < minFeatures).length;
    policyRows.push([
      minFeatures,
      short,
      p3(at.precision),
      p3(at.recall),
      p3(at.f1),
      `${best.k}: ${p3(best.precision)} / ${p3(best.recall)} / ${p3(best.f1)}`,
    ]);
  }
  md.push(
    table(
      [
        'exact treatment below N features',
        'documents below N',
        `precision @k=${b.k}`,
        'recall',
        'F1',
        'best k: P / R / F1',
      ],
      policyRows,
    ),
    '',
  );

  if (salts > 0) {
    md.push(`### How much is the hash? ${salts} salts (JavaScript shingles as features)`, '');
    const rows: Array<Array<string | number>> = [];
    for (const bits of [64, 128] as const) {
      for (const weighting of ['tf', 'binary', 'log'] as const) {
        const runs = range(1, salts).map((salt) =>
          evaluateConfig(corpus, gt.truth, { tokenizer: 'shingles', width: focus.width ?? 3, bits, weighting, salt }),
        );
        const stat = (xs: number[]): string => {
          const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
          const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, xs.length - 1));
          return `${p3(mean)} ± ${p3(sd)}`;
        };
        rows.push([
          `shingles/${focus.width ?? 3} ${weighting}`,
          bits,
          stat(runs.map((r) => r.best.f1)),
          runs.map((r) => r.best.k).join(' '),
          stat(runs.map((r) => r.best.precision)),
          stat(runs.map((r) => r.best.recall)),
        ]);
      }
    }
    md.push(table(['features', 'bits', 'best F1 (mean ± sd)', 'best k per salt', 'precision', 'recall'], rows), '');
  }
  return {
    report: { corpus: corpus.name, results, verified: verified.map((v) => v.points) },
    markdown: md.join('\n'),
    focus: { corpus: corpus.name, points: focusResult.points, verified: focusVerified.points },
  };
}

/** One k per configuration for all corpora: the k with the best mean F1 (what a default must be). */
function summary(reports: CorpusReport[]): string {
  const first = reports[0];
  if (!first) return '';
  const rows: Array<Array<string | number>> = [];
  first.results.forEach((r, i) => {
    const curves = reports.map((rep) => rep.results[i]!.points);
    let bestK = 0;
    let bestMean = -1;
    for (let k = 0; k < r.points.length; k++) {
      const mean = curves.reduce((s, c) => s + c[k]!.f1, 0) / curves.length;
      if (mean > bestMean) {
        bestMean = mean;
        bestK = k;
      }
    }
    const at = curves.map((c) => c[bestK]!);
    rows.push([r.label, r.config.bits, bestK, ...at.map((p) => `${p3(p.precision)} / ${p3(p.recall)}`), p3(bestMean)]);
  });
  // With verification precision stays ~1, so the question is the smallest k where every corpus reaches recall 0.9.
  const verifiedRows: Array<Array<string | number>> = first.results.map((r, i) => {
    const curves = reports.map((rep) => rep.verified[i]!);
    const k = r.points.findIndex((_, k) => curves.every((c) => c[k]!.recall >= 0.9));
    const at = k < 0 ? r.points.length - 1 : k;
    return [
      r.label,
      r.config.bits,
      k < 0 ? '-' : k,
      ...curves.map((c) => `${p3(c[at]!.precision)} / ${p3(c[at]!.recall)}`),
    ];
  });
  return [
    '## One k for all corpora (best mean F1)',
    '',
    table(['tokenizer', 'bits', 'k', ...reports.map((r) => `${r.corpus} P / R`), 'mean F1'], rows),
    '',
    '## SimHash + exact verification (Jaccard >= 0.5): smallest k with recall >= 0.9 on every corpus',
    '',
    table(['tokenizer', 'bits', 'k', ...reports.map((r) => `${r.corpus} P / R`)], verifiedRows),
    '',
  ].join('\n');
}

function plot(focus: EvalConfig, results: FocusCurves[]): string {
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];
  const series: Series[] = [];
  results.forEach((r, i) => {
    const color = colors[i % colors.length]!;
    series.push({ name: `${r.corpus} precision`, color, points: r.points.map((p) => [p.k, p.precision] as const) });
    series.push({
      name: `${r.corpus} recall`,
      color,
      dashed: true,
      points: r.points.map((p) => [p.k, p.recall] as const),
    });
  });
  const ks = results[0]?.points.map((p) => p.k) ?? [];
  series.push({
    name: 'precision, verified (min)',
    color: '#333333',
    dotted: true,
    points: ks.map((k) => [k, Math.min(...results.map((r) => r.verified[k]!.precision))] as const),
  });
  // The plain default: the k with the best mean F1; with verification: the smallest k with recall >= 0.9 everywhere.
  const meanF1 = ks.map((k) => results.reduce((s, r) => s + r.points[k]!.f1, 0) / results.length);
  const plainK = meanF1.indexOf(Math.max(...meanF1));
  const verifiedK = ks.find((k) => results.every((r) => r.verified[k]!.recall >= 0.9));
  const markers = [{ x: plainK, label: `best F1 k=${plainK}` }];
  if (verifiedK !== undefined && verifiedK !== plainK) markers.push({ x: verifiedK, label: `verified k=${verifiedK}` });
  return lineChart(series, {
    title: `SimHash ${configLabel(focus)}, ${focus.bits} bits: precision (J >= 0.5) and recall (J >= 0.8) vs k`,
    xLabel: 'k (largest Hamming distance reported)',
    yLabel: 'precision / recall',
    markers,
  });
}

export async function main(argv: string[]): Promise<void> {
  const files: string[] = [];
  let quick = false;
  let focus = parseConfig('shingles/3/64');
  let plotPath: string | undefined;
  let jsonPath: string | undefined;
  let salts = 0;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') quick = true;
    else if (a === '--focus') focus = parseConfig(argv[++i] ?? '');
    else if (a === '--plot') plotPath = argv[++i];
    else if (a === '--json') jsonPath = argv[++i];
    else if (a === '--salts') salts = Number(argv[++i]);
    else if (a.startsWith('--')) throw new RangeError(`unknown option ${a}`);
    else files.push(a);
  }
  if (files.length === 0) {
    console.error(
      'usage: npm run eval -- <corpus.jsonl>... [--quick] [--focus tokenizer/width/bits[/binary|NFKC]] [--plot out.svg] [--json out.json] [--salts N]',
    );
    process.exitCode = 2;
    return;
  }
  await init();
  const grid = quick ? [focus] : defaultGrid();
  const reports: CorpusReport[] = [];
  const focusCurves: FocusCurves[] = [];
  for (const file of files) {
    const { report, markdown, focus: curves } = evaluateCorpus(readCorpus(file), grid, focus, salts);
    console.log(markdown);
    reports.push(report);
    focusCurves.push(curves);
  }
  if (reports.length > 1) console.log(summary(reports));
  if (plotPath) {
    writeFileSync(plotPath, plot(focus, focusCurves));
    console.log(`plot written to ${plotPath}`);
  }
  if (jsonPath) {
    const data = reports.map((r) => ({
      corpus: r.corpus,
      results: r.results.map((x) => ({ label: x.label, bits: x.config.bits, best: x.best, points: x.points })),
    }));
    writeFileSync(jsonPath, JSON.stringify(data, null, 1));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exitCode = 1;
  });
}
