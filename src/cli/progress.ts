// A progress bar on stderr, drawn only when stderr is a terminal.

export class Progress {
  private readonly enabled = process.stderr.isTTY === true;
  private last = 0;
  update(label: string, done: number, total: number): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 100 && done < total) return;
    this.last = now;
    const width = 30;
    const filled = total > 0 ? Math.round((done / total) * width) : width;
    const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(pct).padStart(3)}% ${label} ${done}/${total}\x1b[K`,
    );
  }
  done(): void {
    if (this.enabled) process.stderr.write('\r\x1b[K');
  }
}
