/**
 * The per-epoch progress bar. Rendering is a pure function (tested); the reporter only
 * decides where it goes: redrawn in place on a terminal, left out of piped output (logs and
 * CI keep the per-epoch summary lines only).
 */
export interface BarState {
  epoch: number;
  epochs: number;
  step: number;
  steps: number;
  stepsPerSec: number;
  /** The last loss read back; undefined before the first read. */
  loss: number | undefined;
}

export function renderBar(s: BarState, width = 24): string {
  const frac = s.steps > 0 ? Math.min(1, s.step / s.steps) : 0;
  const filled = Math.round(frac * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const ew = String(s.epochs).length;
  const sw = String(s.steps).length;
  const loss = s.loss === undefined ? '   -  ' : s.loss.toFixed(4);
  return `epoch ${String(s.epoch).padStart(ew)}/${s.epochs} ${bar} ${String(s.step).padStart(sw)}/${s.steps}  ${s.stepsPerSec.toFixed(1).padStart(6)} steps/s  loss ${loss}`;
}

export interface Out {
  write(s: string): unknown;
  isTTY?: boolean;
}

export class ProgressBar {
  private drawn = false;
  private lastDraw = 0;

  constructor(private readonly out: Out) {}

  update(s: BarState): void {
    if (!this.out.isTTY) return;
    const now = Date.now();
    // Redrawing every step would cost more than a small step on the GPU.
    if (s.step < s.steps && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.out.write(`\r${renderBar(s)}\x1b[K`);
    this.drawn = true;
  }

  /** Prints a full line, replacing the bar if one is drawn. */
  line(text: string): void {
    if (this.drawn) this.out.write('\r\x1b[K');
    this.drawn = false;
    this.out.write(`${text}\n`);
  }
}
