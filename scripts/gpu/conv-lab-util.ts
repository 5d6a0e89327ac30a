// Shared by the conv labs (conv-lab.ts, wino-lab.ts): timing and a float64 reference.
import type { ConvParams } from '@surf/core';

export type Sync = { flush(): void; sync(): Promise<void> };
export async function timeIt(b: Sync, op: () => void, ms: number): Promise<number> {
  for (let w = 0; w < 3; w++) {
    op();
    b.flush();
    await b.sync();
  }
  let n = 1;
  for (;;) {
    const t0 = performance.now();
    for (let k = 0; k < n; k++) op();
    b.flush();
    await b.sync();
    const dt = performance.now() - t0;
    if (dt > ms || n >= 2000) break;
    n = Math.min(2000, Math.max(n * 2, Math.ceil((n * ms) / Math.max(dt, 0.01))));
  }
  const s: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let k = 0; k < n; k++) op();
    b.flush();
    await b.sync();
    s.push((performance.now() - t0) / n);
  }
  return s.sort((x, y) => x - y)[2];
}

/** float64 conv at sampled outputs, straight from the definition (core/src/conv.ts), x and w dense NCHW / OIHW. */
export function sampled(
  x: Float32Array,
  xs: readonly number[],
  w: Float32Array,
  ws: readonly number[],
  p: ConvParams,
  os: readonly number[],
  out: Float32Array,
  samples = 384,
): number {
  const [, C, H, W] = xs,
    [O, Cg, kH, kW] = ws;
  const og = O / p.groups;
  let num = 0,
    den = 0;
  const total = os.reduce((a, b) => a * b, 1);
  for (let t = 0; t < samples; t++) {
    const flat = Math.floor((((t * 2654435761) % 4294967296) / 4294967296) * total);
    let r = flat;
    const ox = r % os[3];
    r = Math.floor(r / os[3]);
    const oy = r % os[2];
    r = Math.floor(r / os[2]);
    const oc = r % os[1];
    const nb = Math.floor(r / os[1]);
    const g = Math.floor(oc / og);
    let s = 0;
    for (let ci = 0; ci < Cg; ci++)
      for (let i = 0; i < kH; i++)
        for (let j = 0; j < kW; j++) {
          const py = oy * p.stride[0] + i * p.dilation[0] - p.padding[0][0];
          const px = ox * p.stride[1] + j * p.dilation[1] - p.padding[1][0];
          if (py < 0 || px < 0 || py % p.lhsDilation[0] || px % p.lhsDilation[1]) continue;
          const iy = py / p.lhsDilation[0],
            ix = px / p.lhsDilation[1];
          if (iy >= H || ix >= W) continue;
          s += x[((nb * C + g * Cg + ci) * H + iy) * W + ix] * w[((oc * Cg + ci) * kH + i) * kW + j];
        }
    const d = out[flat] - s;
    num += Number.isFinite(out[flat]) ? d * d : Infinity;
    den += s * s;
  }
  return Math.sqrt(num / den);
}
