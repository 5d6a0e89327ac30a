/**
 * Draws a conv layer's filters (weight [O, C, kH, kW], first input channel) as a grid of
 * small heat maps: blue negative, red positive, white zero, one scale (the largest |w|) for
 * all, so filters that grow or fade while training are seen doing so.
 */
export function drawFilters(canvas: HTMLCanvasElement, w: Float32Array, shape: readonly number[]): void {
  const [o, c, kh, kw] = shape;
  const cols = Math.min(o, 8);
  const rows = Math.ceil(o / cols);
  const cell = 12,
    gap = 6;
  const fw = kw * cell,
    fh = kh * cell;
  canvas.width = cols * (fw + gap) - gap;
  canvas.height = rows * (fh + gap) - gap;
  const ctx = canvas.getContext('2d')!;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  let scale = 0;
  for (const v of w) scale = Math.max(scale, Math.abs(v));
  scale = scale || 1;
  for (let f = 0; f < o; f++) {
    const x0 = (f % cols) * (fw + gap),
      y0 = Math.floor(f / cols) * (fh + gap);
    for (let i = 0; i < kh; i++) {
      for (let j = 0; j < kw; j++) {
        const t = w[(f * c * kh + i) * kw + j] / scale; // in [-1, 1]
        const fade = Math.round(255 * (1 - Math.abs(t)));
        ctx.fillStyle = t >= 0 ? `rgb(255,${fade},${fade})` : `rgb(${fade},${fade},255)`;
        ctx.fillRect(x0 + j * cell, y0 + i * cell, cell, cell);
      }
    }
  }
}
