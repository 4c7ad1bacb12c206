// A progress bar on stderr, drawn only when stderr is a terminal (and not with --quiet). Bytes show as MB with the
// rate and the time left; other work as counts.

export class Progress {
  private readonly enabled: boolean;
  private last = 0;
  private started = 0;
  private label = '';

  constructor(quiet = false) {
    this.enabled = process.stderr.isTTY === true && !quiet;
  }

  update(label: string, done: number, total: number, unit: 'bytes' | 'items' = 'items'): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (label !== this.label) {
      this.label = label;
      this.started = now;
    }
    if (now - this.last < 100 && done < total) return;
    this.last = now;
    const width = 30;
    const filled = total > 0 ? Math.round((done / total) * width) : width;
    const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(pct).padStart(3)}% ${label} ${
        unit === 'bytes' ? rateText(done, total, (now - this.started) / 1000) : `${done}/${total}`
      }\x1b[K`,
    );
  }

  done(): void {
    if (this.enabled) process.stderr.write('\r\x1b[K');
  }
}

/** "12.3 / 119.8 MB, 45.1 MB/s, 2 s left" (the rate and time once a quarter second has passed). */
export function rateText(done: number, total: number, seconds: number): string {
  const mb = (x: number) => (x / 1e6).toFixed(1);
  const head = `${mb(done)} / ${mb(total)} MB`;
  if (seconds < 0.25 || done === 0) return head;
  const rate = done / seconds;
  const left = Math.max(0, (total - done) / rate);
  return `${head}, ${mb(rate)} MB/s, ${left < 60 ? `${Math.ceil(left)} s` : `${Math.ceil(left / 60)} min`} left`;
}
