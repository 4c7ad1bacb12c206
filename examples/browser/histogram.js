// Draws the histogram of pairwise Hamming distances on a canvas: one bar per distance 0..bits, the bars within
// the threshold k highlighted, optional log scale (near-duplicates are a handful of pairs beside millions).

/**
 * @param {HTMLCanvasElement} canvas
 * @param {{ counts: ArrayLike<number>, k: number, log: boolean, colors?: { bar: string, near: string, axis: string, text: string } }} data
 */
export function drawHistogram(canvas, { counts, k, log, colors = defaultColors(canvas) }) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || 640;
  const height = canvas.clientHeight || 240;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const g = canvas.getContext('2d');
  if (!g) return;
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, width, height);

  const pad = { left: 56, right: 12, top: 12, bottom: 34 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const bins = counts.length;
  const scale = (c) => (log ? Math.log10(1 + c) : c);
  let max = 0;
  for (let i = 0; i < bins; i++) max = Math.max(max, scale(counts[i]));
  if (max === 0) max = 1;

  g.font = '12px system-ui, sans-serif';
  g.fillStyle = colors.text;
  g.strokeStyle = colors.axis;
  g.lineWidth = 1;

  // y axis: grid lines at powers of ten (log scale) or at quarters of the largest count (linear)
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  const ticks = [];
  if (log) {
    for (let c = 1; scale(c) <= max * 1.0001; c *= 10) ticks.push(c);
  } else {
    for (let t = 1; t <= 4; t++) ticks.push((max * t) / 4);
  }
  for (const count of [0, ...ticks]) {
    const y = pad.top + plotH - (scale(count) / max) * plotH;
    g.globalAlpha = 0.3;
    g.beginPath();
    g.moveTo(pad.left, y + 0.5);
    g.lineTo(pad.left + plotW, y + 0.5);
    g.stroke();
    g.globalAlpha = 1;
    g.fillText(formatCount(count), pad.left - 6, y);
  }

  const barW = plotW / bins;
  for (let d = 0; d < bins; d++) {
    const h = (scale(counts[d]) / max) * plotH;
    if (h <= 0) continue;
    g.fillStyle = d <= k ? colors.near : colors.bar;
    g.fillRect(pad.left + d * barW + 0.5, pad.top + plotH - h, Math.max(1, barW - 1), h);
  }

  // threshold marker between k and k + 1
  const kx = pad.left + (k + 1) * barW;
  g.strokeStyle = colors.near;
  g.setLineDash([4, 3]);
  g.beginPath();
  g.moveTo(kx + 0.5, pad.top);
  g.lineTo(kx + 0.5, pad.top + plotH);
  g.stroke();
  g.setLineDash([]);
  g.fillStyle = colors.near;
  g.textAlign = 'left';
  g.textBaseline = 'top';
  g.fillText(`k = ${k}`, Math.min(kx + 4, pad.left + plotW - 40), pad.top);

  // x axis: distance labels every 8 (or 16 for 128 bits)
  g.fillStyle = colors.text;
  g.strokeStyle = colors.axis;
  g.beginPath();
  g.moveTo(pad.left, pad.top + plotH + 0.5);
  g.lineTo(pad.left + plotW, pad.top + plotH + 0.5);
  g.stroke();
  g.textAlign = 'center';
  g.textBaseline = 'top';
  const step = bins > 65 ? 16 : 8;
  for (let d = 0; d < bins; d += step) g.fillText(String(d), pad.left + (d + 0.5) * barW, pad.top + plotH + 4);
  g.fillText('Hamming distance', pad.left + plotW / 2, pad.top + plotH + 18);
}

/** Which distance bin is under an x position of the canvas (for the hover read-out), or -1. */
export function binAt(canvas, x, bins) {
  const plotW = (canvas.clientWidth || 640) - 56 - 12;
  const bin = Math.floor(((x - 56) / plotW) * bins);
  return bin >= 0 && bin < bins ? bin : -1;
}

function formatCount(n) {
  const trim = (x) => x.toFixed(1).replace(/\.0$/, '');
  if (n >= 1e6) return `${trim(n / 1e6)}M`;
  if (n >= 1e3) return `${trim(n / 1e3)}k`;
  return Number.isInteger(n) ? String(n) : trim(n);
}

function defaultColors(canvas) {
  const style = getComputedStyle(canvas);
  const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    bar: read('--bar', '#7a8699'),
    near: read('--accent', '#d9480f'),
    axis: read('--muted', '#888'),
    text: read('--fg', '#222'),
  };
}
