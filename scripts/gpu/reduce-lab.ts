// Reduction and elementwise lab for the GPU host: the bench's reduce and a*b+c rows, timed as
// the bench times them (inputs rotated past 128 MiB, back-to-back iterations, one sync per
// repeat, median), for several reduction plans side by side, each checked against float64.
// Usage: node reduce-lab.mjs [--variants '<json array of Partial<ReduceTuning> & { wg? }>'] [--ms 150]
import { E, NDArray, randomArray } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const variants: Record<string, unknown>[] = JSON.parse(arg('--variants') ?? '[{"oneDispatch":false},{}]');
const ms = Number(arg('--ms') ?? 150);
const skipEw = process.argv.includes('--no-ew');

async function timeIt(b: { flush(): void; sync(): Promise<void> }, op: (i: number) => void): Promise<number> {
  let i = 0;
  for (let w = 0; w < 5; w++) {
    op(i++);
    b.flush();
    await b.sync();
  }
  let n = 1;
  for (;;) {
    const t0 = performance.now();
    for (let k = 0; k < n; k++) op(i++);
    b.flush();
    await b.sync();
    const dt = performance.now() - t0;
    if (dt > ms || n >= 4000) break;
    n = Math.min(4000, Math.max(n * 2, Math.ceil((n * ms) / Math.max(dt, 0.01))));
  }
  const s: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let k = 0; k < n; k++) op(i++);
    b.flush();
    await b.sync();
    s.push((performance.now() - t0) / n);
  }
  return s.sort((x, y) => x - y)[2];
}

const rows: { label: string; rows: number; cols: number; axis: number | null }[] = [
  { label: 'sum 1M', rows: 1024, cols: 1024, axis: null },
  { label: 'sum 4M', rows: 4096, cols: 1024, axis: null },
  { label: 'sum 16M', rows: 16384, cols: 1024, axis: null },
  { label: 'sum 64M', rows: 65536, cols: 1024, axis: null },
  { label: 'sum 4096x4096 axis1', rows: 4096, cols: 4096, axis: 1 },
  { label: 'sum 4096x4096 axis0', rows: 4096, cols: 4096, axis: 0 },
  { label: 'sum 64x65536 axis1', rows: 64, cols: 65536, axis: 1 },
];

const only = arg('--rows');
for (const v of variants) {
  // `wg` in a variant is the backend's reduceWorkgroupSize, the rest a Partial<ReduceTuning>.
  const { wg, ...tune } = v as { wg?: number };
  const b = await createWebGPUBackend({ reduce: tune, ...(wg ? { reduceWorkgroupSize: wg } : {}) });
  const tag = JSON.stringify(v);
  for (const r of rows.filter((q) => !only || only.split(',').includes(q.label))) {
    const n = r.rows * r.cols;
    const data = randomArray('uniform', n, 7, -1, 1);
    const rot = Math.max(1, Math.min(16, Math.ceil((128 << 20) / (4 * n))));
    const sets = Array.from({ length: rot }, () => NDArray.fromData(b, data, [r.rows, r.cols]));
    let last: NDArray | null = null;
    const op = (i: number) => {
      const x = sets[i % rot];
      const y = r.axis === null ? x.sum() : x.sum(r.axis);
      last?.dispose();
      last = y;
    };
    const t = await timeIt(b, op);
    // Check: float64 reference of a few outputs.
    const y = r.axis === null ? sets[0].sum() : sets[0].sum(r.axis);
    const got = (await y.data()) as Float32Array;
    const outs = r.axis === null ? [0] : [0, got.length - 1];
    let err = 0;
    for (const o of outs) {
      let s = 0,
        sa = 0;
      if (r.axis === null)
        for (let i = 0; i < n; i++) {
          s += data[i];
          sa += Math.abs(data[i]);
        }
      else if (r.axis === 1)
        for (let j = 0; j < r.cols; j++) {
          const x = data[o * r.cols + j];
          s += x;
          sa += Math.abs(x);
        }
      else
        for (let i = 0; i < r.rows; i++) {
          const x = data[i * r.cols + o];
          s += x;
          sa += Math.abs(x);
        }
      err = Math.max(err, Math.abs(got[o] - s) / sa);
    }
    console.log(
      JSON.stringify({
        kind: 'reduce',
        variant: tag,
        label: r.label,
        us: +(t * 1000).toFixed(2),
        gbs: +((4 * n) / t / 1e6).toFixed(1),
        relErr: +err.toExponential(2),
      }),
    );
    for (const s of sets) s.dispose();
    y.dispose();
    (last as NDArray | null)?.dispose();
  }
  b.destroy();
}

for (const ewVec of skipEw ? [] : [true, false, true]) {
  const b = await createWebGPUBackend({ elementwiseFastPaths: ewVec });
  const side = 4096,
    n = side * side;
  const [a, bb, c] = [1, 2, 3].map((s) => randomArray('uniform', n, s, -1, 1));
  for (const permuted of [false, true]) {
    const A = NDArray.fromData(b, a, [side, side]);
    const av = permuted ? A.permute([1, 0]) : A;
    const B = NDArray.fromData(b, bb, [side, side]);
    const C = NDArray.fromData(b, c, [side, side]);
    const expr = E.add(E.mul(E.in(0), E.in(1)), E.in(2));
    let last: NDArray | null = null;
    const t = await timeIt(b, () => {
      const y = NDArray.elementwise([expr], [av, B, C])[0];
      last?.dispose();
      last = y;
    });
    console.log(
      JSON.stringify({
        kind: 'fma',
        vec4: ewVec,
        permuted,
        us: +(t * 1000).toFixed(2),
        gbs: +((16 * n) / t / 1e6).toFixed(1),
      }),
    );
    for (const x of [A, B, C]) x.dispose();
    (last as NDArray | null)?.dispose();
  }
  // Per-dispatch floor: a chain of 1K-element adds.
  let x = NDArray.full(b, [1024], 0);
  const one = NDArray.full(b, [1024], 1);
  const t = await timeIt(b, () => {
    const nx = x.map(E.add(E.in(0), E.in(1)), one);
    x.dispose();
    x = nx;
  });
  console.log(JSON.stringify({ kind: 'add-chain 1K', vec4: ewVec, us: +(t * 1000).toFixed(2) }));
  b.destroy();
}
process.exit(0);
