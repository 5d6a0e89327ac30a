// Dispatch lab (issue 12's dispatch row): host cost per eager op on WebGPU. Each row issues
// `--ops` small ops back to back at the NDArray level, as the bench's overhead row does, and
// reports host µs/op (the loop without the final sync; median and best) and wall µs/op (with
// it; median) over `--rounds` rounds after a warm-up round, and the process's CPU time per op
// (median; on a shared box with --ops-per-submit above --ops it is the least noisy number). Every row's result is checked first against the
// CPU backend on random data.
// Usage: node dispatch-lab.mjs [--ops 2000] [--rounds 7] [--rows add,matmul] [--ops-per-submit n] [--json f]
import { CpuBackend, E, NDArray, randomArray } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';
import { writeFileSync } from 'node:fs';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const ops = Number(arg('--ops') ?? 2000);
const rounds = Number(arg('--rounds') ?? 7);
const only = arg('--rows')?.split(',');
// --ops-per-submit above --ops keeps submits (and a software adapter's execution) out of the timed loop.
const opsPerSubmit = arg('--ops-per-submit');
const b = await createWebGPUBackend(opsPerSubmit ? { opsPerSubmit: Number(opsPerSubmit) } : {});
const cpu = new CpuBackend();

interface Row {
  label: string;
  /** Builds the row's state on a backend; step(i) issues one op (disposing what it replaces). */
  make(be: typeof b | CpuBackend, seed: number): { step(): void; result(): NDArray; dispose(): void };
}

const rnd = (be: typeof b | CpuBackend, shape: number[], seed: number) =>
  NDArray.fromData(
    be,
    randomArray(
      'uniform',
      shape.reduce((x, y) => x * y, 1),
      seed,
      -1,
      1,
    ),
    shape,
  );
const add = E.add(E.in(0), E.in(1));
const axpb = E.add(E.mul(E.in(0), E.f(0.5)), E.in(1));

const rows: Row[] = [
  {
    // The bench's overhead row: x = x + y, dependent, 1K elements.
    label: 'add 1K (x = x + y)',
    make(be, seed) {
      let x = rnd(be, [1024], seed);
      const y = rnd(be, [1024], seed + 1);
      return {
        step() {
          const n = x.map(add, y);
          x.dispose();
          x = n;
        },
        result: () => x,
        dispose() {
          x.dispose();
          y.dispose();
        },
      };
    },
  },
  {
    // A constant, a broadcast row vector and a 2-d shape: the plan has more to say.
    label: 'x*0.5 + bias[64] 16x64',
    make(be, seed) {
      let x = rnd(be, [16, 64], seed);
      const y = rnd(be, [64], seed + 1);
      return {
        step() {
          const n = x.map(axpb, y);
          x.dispose();
          x = n;
        },
        result: () => x,
        dispose() {
          x.dispose();
          y.dispose();
        },
      };
    },
  },
  {
    label: 'matmul 32x32 @ 32x32',
    make(be, seed) {
      const a = rnd(be, [32, 32], seed);
      const w = rnd(be, [32, 32], seed + 1);
      let y: NDArray | null = null;
      return {
        step() {
          const n = a.matmul(w);
          y?.dispose();
          y = n;
        },
        result: () => y ?? a.matmul(w),
        dispose() {
          a.dispose();
          w.dispose();
          y?.dispose();
        },
      };
    },
  },
  {
    label: 'sum 32x32 axis 1',
    make(be, seed) {
      const a = rnd(be, [32, 32], seed);
      let y: NDArray | null = null;
      return {
        step() {
          const n = a.sum(1);
          y?.dispose();
          y = n;
        },
        result: () => y ?? a.sum(1),
        dispose() {
          a.dispose();
          y?.dispose();
        },
      };
    },
  },
];

const table: { row: string; hostUs: number; bestUs: number; cpuUs: number; wallUs: number; relErr: number }[] = [];
for (const r of rows.filter((q) => !only || only.some((o) => q.label.startsWith(o)))) {
  // Correctness: a few steps on fresh random data, against the CPU backend.
  const seed = 1000 + Math.floor(Math.random() * 1e6);
  const g = r.make(b, seed);
  const c = r.make(cpu, seed);
  for (let i = 0; i < 5; i++) {
    g.step();
    c.step();
  }
  const got = (await g.result().data()) as Float32Array;
  const ref = (await c.result().data()) as Float32Array;
  let num = 0,
    den = 0;
  for (let i = 0; i < ref.length; i++) {
    num += (got[i] - ref[i]) ** 2;
    den += ref[i] ** 2;
  }
  const relErr = Math.sqrt(num / den);
  g.dispose();
  c.dispose();
  if (!(relErr < 1e-5)) throw new Error(`${r.label}: relative error ${relErr} against the CPU backend`);
  // Timing.
  const st = r.make(b, seed);
  const host: number[] = [],
    wall: number[] = [],
    cpuUs: number[] = [];
  for (let k = 0; k <= rounds; k++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < ops; i++) st.step();
    const t1 = performance.now();
    const c1 = process.cpuUsage(c0);
    if (k > 0) cpuUs.push((c1.user + c1.system) / ops);
    await b.sync();
    const t2 = performance.now();
    if (k > 0) {
      host.push((1000 * (t1 - t0)) / ops);
      wall.push((1000 * (t2 - t0)) / ops);
    }
  }
  st.dispose();
  const med = (v: number[]) => v.sort((x, y) => x - y)[v.length >> 1];
  table.push({
    row: r.label,
    hostUs: med(host),
    bestUs: Math.min(...host),
    cpuUs: med(cpuUs),
    wallUs: med(wall),
    relErr,
  });
  console.log(`${r.label}: host ${host.map((v) => v.toFixed(1)).join(' ')} us/op`);
}
console.log(`\n${b.description}, ${ops} ops per round, median of ${rounds}`);
console.log('row                          host us/op (median, best)  process CPU us/op  wall us/op  rel.err');
for (const t of table)
  console.log(
    `${t.row.padEnd(28)} ${t.hostUs.toFixed(2).padStart(10)} ${t.bestUs.toFixed(2).padStart(8)} ${t.cpuUs.toFixed(2).padStart(18)} ${' '.repeat(8)}${t.wallUs.toFixed(2).padStart(11)}  ${t.relErr.toExponential(1)}`,
  );
const out = arg('--json');
if (out) writeFileSync(out, JSON.stringify({ device: b.description, ops, rounds, table }, null, 1));
b.destroy();
