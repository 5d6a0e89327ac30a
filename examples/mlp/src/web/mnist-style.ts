import { PIXELS, SIDE } from '../data/digits';

/**
 * Turns a drawing (grey levels in [0, 1], ink = 1) into an MNIST-like 28x28 digit the way
 * MNIST itself was made: crop to the ink, scale the longer side to 20 pixels with area
 * averaging (which anti-aliases the strokes), then place it so its centre of mass sits at
 * the centre of the 28x28 field. Without this, a digit drawn small or off-centre on the pad
 * looks nothing like the training data and is misread.
 */
const BOX = 20;
const INK = 0.05;

export function toMnistDigit(src: Float32Array, width: number, height: number): Float32Array {
  let x0 = width,
    y0 = height,
    x1 = -1,
    y1 = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (src[y * width + x] > INK) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  const out = new Float32Array(PIXELS);
  if (x1 < 0) return out;
  const bw = x1 - x0 + 1,
    bh = y1 - y0 + 1;
  const scale = BOX / Math.max(bw, bh);
  const tw = Math.max(1, Math.round(bw * scale)),
    th = Math.max(1, Math.round(bh * scale));
  const small = resampleArea(src, width, x0, y0, bw, bh, tw, th);

  let mass = 0,
    mx = 0,
    my = 0;
  for (let y = 0; y < th; y++) {
    for (let x = 0; x < tw; x++) {
      const v = small[y * tw + x];
      mass += v;
      mx += v * x;
      my += v * y;
    }
  }
  // Pixel-index centre of mass at index 14, the convention MNIST's own digits follow.
  const cx = mass > 0 ? mx / mass : tw / 2,
    cy = mass > 0 ? my / mass : th / 2;
  const ox = clamp(Math.round(SIDE / 2 - cx), 0, SIDE - tw);
  const oy = clamp(Math.round(SIDE / 2 - cy), 0, SIDE - th);
  for (let y = 0; y < th; y++)
    for (let x = 0; x < tw; x++) out[(y + oy) * SIDE + x + ox] = Math.min(1, small[y * tw + x]);
  return out;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}

/** Per-axis weights: how much of source cell i falls in target cell t (area averaging). */
function coverage(n: number, m: number): { from: number; w: number[] }[] {
  const step = n / m;
  const rows: { from: number; w: number[] }[] = [];
  for (let t = 0; t < m; t++) {
    const a = t * step,
      b = (t + 1) * step;
    const from = Math.floor(a);
    const w: number[] = [];
    for (let i = from; i < Math.min(n, Math.ceil(b)); i++) w.push((Math.min(b, i + 1) - Math.max(a, i)) / step);
    rows.push({ from, w });
  }
  return rows;
}

/** Resamples the box (x0, y0, bw, bh) of a width-wide image to tw x th by area averaging. */
export function resampleArea(
  src: Float32Array,
  width: number,
  x0: number,
  y0: number,
  bw: number,
  bh: number,
  tw: number,
  th: number,
): Float32Array {
  const cx = coverage(bw, tw),
    cy = coverage(bh, th);
  const out = new Float32Array(tw * th);
  for (let ty = 0; ty < th; ty++) {
    const ry = cy[ty];
    for (let tx = 0; tx < tw; tx++) {
      const rx = cx[tx];
      let s = 0;
      for (let j = 0; j < ry.w.length; j++) {
        const row = (y0 + ry.from + j) * width + x0 + rx.from;
        let r = 0;
        for (let i = 0; i < rx.w.length; i++) r += src[row + i] * rx.w[i];
        s += r * ry.w[j];
      }
      out[ty * tw + tx] = s;
    }
  }
  return out;
}
