/**
 * A two-axis line chart on a canvas: training loss on the left axis, test accuracy (%) on the
 * right, both against the step. Small on purpose; the page redraws it whole on each point.
 */
export interface Point {
  step: number;
  value: number;
}

export interface ChartData {
  loss: Point[];
  accuracy: Point[];
}

const LOSS_COLOR = '#e4572e';
const ACC_COLOR = '#2e86de';

/** A round upper bound for an axis, so ticks land on readable numbers. */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function drawChart(canvas: HTMLCanvasElement, data: ChartData): void {
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const dpr = window.devicePixelRatio || 1;
  const cssW = canvas.clientWidth || 560,
    cssH = canvas.clientHeight || 260;
  if (canvas.width !== Math.round(cssW * dpr)) {
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(cssH * dpr);
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssW, cssH);
  const pad = { l: 48, r: 48, t: 24, b: 28 };
  const w = cssW - pad.l - pad.r,
    h = cssH - pad.t - pad.b;

  const lastStep = Math.max(1, ...data.loss.map((p) => p.step), ...data.accuracy.map((p) => p.step));
  const maxLoss = niceMax(Math.max(0, ...data.loss.map((p) => p.value)));
  const x = (step: number) => pad.l + (step / lastStep) * w;
  const yLoss = (v: number) => pad.t + h - (v / maxLoss) * h;
  const yAcc = (v: number) => pad.t + h - (v / 100) * h;

  ctx.font = '11px system-ui, sans-serif';
  ctx.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = pad.t + (h * i) / 4;
    ctx.strokeStyle = '#e6e6e6';
    ctx.beginPath();
    ctx.moveTo(pad.l, y);
    ctx.lineTo(pad.l + w, y);
    ctx.stroke();
    ctx.fillStyle = LOSS_COLOR;
    ctx.textAlign = 'right';
    ctx.fillText((maxLoss * (1 - i / 4)).toFixed(maxLoss < 2 ? 2 : 1), pad.l - 6, y + 4);
    ctx.fillStyle = ACC_COLOR;
    ctx.textAlign = 'left';
    ctx.fillText(`${100 - 25 * i}%`, pad.l + w + 6, y + 4);
  }
  ctx.fillStyle = '#555';
  ctx.textAlign = 'center';
  ctx.fillText(`step ${lastStep}`, pad.l + w - 20, pad.t + h + 18);
  ctx.fillText('0', pad.l, pad.t + h + 18);

  const line = (pts: Point[], y: (v: number) => number, color: string) => {
    if (pts.length === 0) return;
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    pts.forEach((p, i) => (i === 0 ? ctx.moveTo(x(p.step), y(p.value)) : ctx.lineTo(x(p.step), y(p.value))));
    ctx.stroke();
    for (const p of pts) ctx.fillRect(x(p.step) - 2, y(p.value) - 2, 4, 4);
  };
  line(data.loss, yLoss, LOSS_COLOR);
  line(data.accuracy, yAcc, ACC_COLOR);

  ctx.textAlign = 'left';
  ctx.fillStyle = LOSS_COLOR;
  ctx.fillText('■ train loss (moving average)', pad.l, 14);
  ctx.fillStyle = ACC_COLOR;
  ctx.fillText('■ test accuracy', pad.l + 180, 14);
}
