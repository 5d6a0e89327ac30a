/**
 * The per-epoch progress bar. Rendering is a pure function (tested); the reporter only
 * decides where it goes: redrawn in place on a terminal; in piped output (logs, CI) a plain
 * line at each quarter of the epoch, so a long epoch still shows it is moving.
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

/** Seconds as 42s, 3m05s or 1h02m. */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Time left in this epoch at the current rate. */
function eta(s: BarState): string {
  return s.stepsPerSec > 0 ? formatEta((s.steps - s.step) / s.stepsPerSec) : '--';
}

export function renderBar(s: BarState, width = 24): string {
  const frac = s.steps > 0 ? Math.min(1, s.step / s.steps) : 0;
  const filled = Math.round(frac * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const ew = String(s.epochs).length;
  const sw = String(s.steps).length;
  const loss = s.loss === undefined ? '   -  ' : s.loss.toFixed(4);
  return `epoch ${String(s.epoch).padStart(ew)}/${s.epochs} ${bar} ${String(s.step).padStart(sw)}/${s.steps}  ${s.stepsPerSec.toFixed(1).padStart(6)} steps/s  loss ${loss}  ETA ${eta(s)}`;
}

/** The plain (no bar, no escape codes) line piped output gets. */
export function renderLine(s: BarState): string {
  const loss = s.loss === undefined ? '-' : s.loss.toFixed(4);
  return `epoch ${s.epoch}/${s.epochs}  step ${s.step}/${s.steps}  ${s.stepsPerSec.toFixed(1)} steps/s  loss ${loss}  ETA ${eta(s)}`;
}

export interface Out {
  write(s: string): unknown;
  isTTY?: boolean;
}

export class ProgressBar {
  private drawn = false;
  private lastDraw = 0;
  /** Piped output: the last quarter of the epoch printed (epoch·4 + quarter). */
  private lastQuarter = -1;

  constructor(private readonly out: Out) {}

  update(s: BarState): void {
    if (!this.out.isTTY) {
      // A plain line at 25 %, 50 % and 75 % (the epoch summary line covers 100 %).
      const q = s.steps > 0 ? Math.floor((4 * s.step) / s.steps) : 0;
      const key = s.epoch * 4 + q;
      if (q >= 1 && q <= 3 && key > this.lastQuarter) {
        this.lastQuarter = key;
        this.out.write(`${renderLine(s)}\n`);
      }
      return;
    }
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
