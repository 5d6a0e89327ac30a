/** Training and validation loss against the step, with the bigram baseline as a dashed line. */
export interface Point {
  step: number;
  value: number;
}
export interface LossSeries {
  train: Point[];
  val: Point[];
  bigram: number | null;
}

export function drawLoss(canvas: HTMLCanvasElement, d: LossSeries): void {
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 600,
    h = canvas.clientHeight || 260;
  canvas.width = w * dpr;
  canvas.height = h * dpr;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const pad = { l: 40, r: 10, t: 10, b: 24 };
  const all = [...d.train, ...d.val];
  const maxStep = Math.max(1, ...all.map((p) => p.step));
  const maxY = Math.ceil(Math.max(1, ...all.map((p) => p.value), d.bigram ?? 0));
  const x = (s: number) => pad.l + ((w - pad.l - pad.r) * s) / maxStep;
  const y = (v: number) => h - pad.b - ((h - pad.t - pad.b) * v) / maxY;
  ctx.strokeStyle = '#ccc';
  ctx.fillStyle = '#666';
  ctx.font = '11px system-ui';
  for (let v = 0; v <= maxY; v++) {
    ctx.beginPath();
    ctx.moveTo(pad.l, y(v));
    ctx.lineTo(w - pad.r, y(v));
    ctx.stroke();
    ctx.fillText(String(v), 8, y(v) + 4);
  }
  ctx.fillText(`step ${maxStep}`, w - 70, h - 6);
  const line = (pts: Point[], color: string, dash: number[] = []) => {
    if (!pts.length) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.setLineDash(dash);
    ctx.beginPath();
    pts.forEach((p, i) => (i ? ctx.lineTo(x(p.step), y(p.value)) : ctx.moveTo(x(p.step), y(p.value))));
    ctx.stroke();
    ctx.setLineDash([]);
  };
  line(d.train, '#e4572e');
  line(d.val, '#2e86de');
  if (d.bigram !== null)
    line(
      [
        { step: 0, value: d.bigram },
        { step: maxStep, value: d.bigram },
      ],
      '#999',
      [5, 4],
    );
}
