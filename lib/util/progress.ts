/**
 * A terminal progress bar for long work: `label [#####.....] 12/40 30% eta 1m05s | loss 0.42`.
 * Redraws in place on a TTY; elsewhere (CI logs, pipes) prints a line at most every `minIntervalMs`, and the
 * 100% line exactly once (from finish()). A low module with no project imports, so that training code can
 * report progress without depending on the command line.
 */

export interface ProgressOptions {
  total: number;
  label: string;
  stream?: NodeJS.WriteStream;
  minIntervalMs?: number;
  /** Print nothing (tests, notebooks that show their own progress). */
  silent?: boolean;
  /** Units already finished before this process started (a resumed run): the eta counts only the rest. */
  done?: number;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export class ProgressBar {
  private readonly start = Date.now();
  private lastDraw = 0;
  private current = 0;
  private lastStatus = '';
  private finished = false;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;

  constructor(private readonly opts: ProgressOptions) {
    this.stream = opts.stream ?? process.stderr;
    this.tty = Boolean(this.stream.isTTY);
  }

  /** Set the number of finished units and an optional status text; redraws when due. */
  update(current: number, status = ''): void {
    this.current = current;
    this.lastStatus = status;
    if (this.opts.silent || this.finished) return;
    // In a log the last line belongs to finish(): drawing it here too would print the 100% line twice.
    if (!this.tty && current >= this.opts.total) return;
    const now = Date.now();
    const interval = this.opts.minIntervalMs ?? (this.tty ? 100 : 10000);
    if (now - this.lastDraw < interval && current < this.opts.total) return;
    this.lastDraw = now;
    this.draw(status);
  }

  /** Final line, printed once (unless silent); without a status it keeps the last update's. */
  finish(status = ''): void {
    this.current = this.opts.total;
    if (this.opts.silent || this.finished) return;
    this.finished = true;
    this.draw(status || this.lastStatus);
    if (this.tty) this.stream.write('\n');
  }

  private draw(status: string): void {
    const { total, label } = this.opts;
    const frac = total > 0 ? Math.min(1, this.current / total) : 1;
    const width = 24;
    const filled = Math.round(frac * width);
    const elapsed = (Date.now() - this.start) / 1000;
    // The rate comes from the units this process did; units done before a resume took none of its time.
    const did = this.current - (this.opts.done ?? 0);
    const eta = did > 0 ? (elapsed / did) * Math.max(0, total - this.current) : NaN;
    const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.current}/${total} ` +
      `${Math.round(frac * 100)}% ${formatDuration(elapsed)} eta ${formatDuration(eta)}${status ? ' | ' + status : ''}`;
    if (this.tty) this.stream.write(`\r\x1b[2K${line}`);
    else this.stream.write(line + '\n');
  }
}
