/**
 * Progress for the long bench jobs (bench rows, tune problems, soak steps): the MLP example's
 * bar drawing and ETA format, counted in the job's own units. On a terminal it is redrawn in
 * place (at most every 100 ms) and other output goes above it through line(); in piped output
 * (logs, the GPU host) it prints a plain line at each quarter of the job instead.
 */
import { formatEta, type Out } from '@surf/example-mlp/progress';

export function renderJob(
  label: string,
  done: number,
  total: number,
  seconds: number,
  unit: string,
  width = 24,
): string {
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(frac * width);
  const rate = seconds > 0 ? done / seconds : 0;
  const eta = rate > 0 ? formatEta((total - done) / rate) : '--';
  return `${label} ${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${String(done).padStart(String(total).length)}/${total} ${unit}  ${rate.toFixed(rate < 10 ? 2 : 1)} ${unit}/s  elapsed ${formatEta(seconds)}  ETA ${eta}`;
}

export class JobProgress {
  private readonly t0 = performance.now();
  private drawn = false;
  private lastDraw = 0;
  private lastQuarter = 0;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly unit: string,
    private readonly out: Out = process.stdout,
  ) {}

  update(done: number): void {
    const seconds = (performance.now() - this.t0) / 1000;
    if (!this.out.isTTY) {
      const q = this.total > 0 ? Math.floor((4 * done) / this.total) : 0;
      if (q >= 1 && q <= 3 && q > this.lastQuarter) {
        this.lastQuarter = q;
        this.out.write(`${renderJob(this.label, done, this.total, seconds, this.unit, 0).replace(/ {2,}/g, '  ')}\n`);
      }
      return;
    }
    const now = performance.now();
    if (done < this.total && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.out.write(`\r${renderJob(this.label, done, this.total, seconds, this.unit)}\x1b[K`);
    this.drawn = true;
  }

  /** Prints a full line above the bar. */
  line(text: string): void {
    this.clear();
    this.out.write(`${text}\n`);
  }

  /** Removes the bar (call before the job's final output). */
  clear(): void {
    if (this.drawn) this.out.write('\r\x1b[K');
    this.drawn = false;
  }
}
