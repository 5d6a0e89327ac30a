// Where the eager loops of issue 12's missed rows spend their time: the bench's MLP steps (8
// cycled batches, as bench/src/surf.ts runs them) in four loops,
//   tidy-end      tidy, synchronised once at the end (the bar the others are held to);
//   tidy-read     tidy, the loss read every step (target: 2x PyTorch eager);
//   tidy-read10   tidy, the loss read every 10 steps;
//   notidy-read10 no tidy, nothing disposed, the loss read every 10 steps (target: 0.85x tidy);
// and per step: wall, host (inside the step call), wait (inside item()), the map's own latency
// (mapAsync call to resolution), bind groups, submits, buffers created. VARIANTS (a JSON list
// of backend options, e.g. '[{},{"opsPerSubmit":16}]'; an "env" entry is set in process.env
// while that variant runs, e.g. {"env":{"SURF_GROUPED_STEP":"0"}}) runs each loop on a backend
// per entry; ROUNDS interleaves them; LOOPS=tidy-read,... picks loops. --json writes the rows.
// Run on the GPU host: bash scripts/gpu/lab-build.sh loop-profile, then
//   source .gpu-host/unpack.sh; node .bench/loop-profile.mjs --json $OUT/loops.json
import { writeFileSync } from 'node:fs';
import { createWebGPUBackend, WebGPUBackend } from '@surf/webgpu';
import { Tensor, randint, randn, setBackend, tidy } from '@surf/nn';
import { MLP_CASES, MlpCase, mlpStep } from './mlp-cases';

const ALL_LOOPS = ['tidy-end', 'tidy-read', 'tidy-read10', 'notidy-read10'] as const;
type Loop = (typeof ALL_LOOPS)[number];
const LOOPS = (process.env.LOOPS ? process.env.LOOPS.split(',') : ALL_LOOPS) as Loop[];
const STEPS = Number(process.env.STEPS ?? 600);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const VARIANTS = JSON.parse(process.env.VARIANTS ?? '[{}]') as (Record<string, number> & {
  env?: Record<string, string>;
})[];

// The map's own latency (every mapAsync, call to resolution), and the host time spent in
// encoder.finish() and queue.submit() (where Dawn turns the recorded commands into Vulkan's).
const mapTimes: number[] = [];
const native = { finishMs: 0, submitMs: 0 };
type Proto = { prototype: Record<string, (...a: unknown[]) => unknown> };
function patch(): void {
  const g = globalThis as unknown as Record<string, Proto | undefined>;
  const buf = g.GPUBuffer?.prototype;
  if (buf) {
    const orig = buf.mapAsync;
    buf.mapAsync = function (this: unknown, ...a: unknown[]) {
      const t0 = performance.now();
      return (orig.apply(this, a) as Promise<void>).then((v) => {
        mapTimes.push(performance.now() - t0);
        return v;
      });
    };
  }
  const timed = (
    proto: Record<string, (...a: unknown[]) => unknown> | undefined,
    name: string,
    key: keyof typeof native,
  ) => {
    if (!proto) return;
    const orig = proto[name];
    proto[name] = function (this: unknown, ...a: unknown[]) {
      const t0 = performance.now();
      const r = orig.apply(this, a);
      native[key] += performance.now() - t0;
      return r;
    };
  };
  timed(g.GPUCommandEncoder?.prototype, 'finish', 'finishMs');
  timed(g.GPUQueue?.prototype, 'submit', 'submitMs');
}

function setup(c: MlpCase): { step: (b: number, loop: Loop) => Tensor; dispose: () => void } {
  const { model, body } = mlpStep(c);
  const xs = Array.from({ length: 8 }, () => randn([c.batch, c.sizes[0]]));
  const ys = Array.from({ length: 8 }, () => randint(0, c.sizes[c.sizes.length - 1], [c.batch]));
  return {
    step: (b, loop) =>
      loop === 'notidy-read10' ? body(xs[b % 8], ys[b % 8]) : tidy(() => body(xs[b % 8], ys[b % 8]).detach()),
    dispose: () => {
      for (const t of [...xs, ...ys, ...model.parameters()]) t.dispose();
    },
  };
}

interface Row {
  case: string;
  loop: Loop;
  variant: string;
  round: number;
  stepsPerS: number;
  wallUs: number;
  hostUs: number;
  waitUs: number;
  mapUs: number;
  finishUs: number;
  submitUs: number;
  submitInWaitUs: number;
  bindGroups: number;
  dispatches: number;
  submits: number;
  buffers: number;
}

/** One variant: its label, its backend, and what it sets in process.env while it runs. */
interface Variant {
  label: string;
  be: WebGPUBackend;
  env: Record<string, string>;
}

async function measure({ label, be, env }: Variant, c: MlpCase, loop: Loop, round: number): Promise<Row> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await measureIn(be, c, loop, label, round);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function measureIn(be: WebGPUBackend, c: MlpCase, loop: Loop, variant: string, round: number): Promise<Row> {
  setBackend(be);
  const s = setup(c);
  const run = async (n: number, acc: { host: number; wait: number; submitInWait: number }) => {
    for (let i = 0; i < n; i++) {
      const h0 = performance.now();
      const l = s.step(i, loop);
      const h1 = performance.now();
      acc.host += h1 - h0;
      const read = loop === 'tidy-read' || ((loop === 'tidy-read10' || loop === 'notidy-read10') && i % 10 === 9);
      if (read) {
        const sub = native.submitMs + native.finishMs;
        await l.item();
        acc.wait += performance.now() - h1;
        acc.submitInWait += native.submitMs + native.finishMs - sub;
      }
      if (loop !== 'notidy-read10') l.dispose();
    }
    await be.sync();
  };
  await run(100, { host: 0, wait: 0, submitInWait: 0 });
  const s0 = be.stats();
  const b0 = be.memory().buffers;
  mapTimes.length = 0;
  const n0 = { ...native };
  const acc = { host: 0, wait: 0, submitInWait: 0 };
  const w0 = performance.now();
  await run(STEPS, acc);
  const wall = performance.now() - w0;
  const s1 = be.stats();
  const maps = [...mapTimes].sort((a, b) => a - b);
  const row: Row = {
    case: c.name,
    loop,
    variant,
    round,
    stepsPerS: (STEPS * 1000) / wall,
    wallUs: (wall * 1000) / STEPS,
    hostUs: (acc.host * 1000) / STEPS,
    waitUs: (acc.wait * 1000) / STEPS,
    mapUs: maps.length ? maps[maps.length >> 1] * 1000 : 0,
    finishUs: ((native.finishMs - n0.finishMs) * 1000) / STEPS,
    submitUs: ((native.submitMs - n0.submitMs) * 1000) / STEPS,
    submitInWaitUs: (acc.submitInWait * 1000) / STEPS,
    bindGroups: (s1.bindGroupsCreated - s0.bindGroupsCreated) / STEPS,
    dispatches: (s1.dispatches - s0.dispatches) / STEPS,
    submits: (s1.submits - s0.submits) / STEPS,
    buffers: (be.memory().buffers - b0) / STEPS,
  };
  s.dispose();
  return row;
}

/**
 * MICRO=1: what one submit costs on the host by the queue's state: back to back (the GPU
 * busy), after the queue drained, after a readback's map, after the host spun a while; with
 * 1 or 20 dispatches. Host µs for recording the dispatches and for finish + submit, medians.
 */
async function micro(device: GPUDevice): Promise<string[]> {
  const a = device.createBuffer({ size: 1 << 20, usage: 0x80 | 0x04 | 0x08 });
  const st = device.createBuffer({ size: 256, usage: 0x01 | 0x08 });
  const module = device.createShaderModule({
    code: '@group(0) @binding(0) var<storage, read_write> o: array<f32>; @compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) { o[g.x] = o[g.x] * 0.5 + 1.0; }',
  });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bg = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: a } }],
  });
  const spin = (us: number) => {
    const t = performance.now() + us / 1000;
    while (performance.now() < t);
  };
  const one = (n: number): { rec: number; sub: number } => {
    const t0 = performance.now();
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    for (let i = 0; i < n; i++) {
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(16);
    }
    pass.end();
    const t1 = performance.now();
    device.queue.submit([enc.finish()]);
    return { rec: (t1 - t0) * 1000, sub: (performance.now() - t1) * 1000 };
  };
  const med = (xs: number[]) => xs.sort((x, y) => x - y)[xs.length >> 1];
  const out: string[] = ['| submit (host µs, median of 300) | record | finish+submit |', '|---|---:|---:|'];
  for (const n of [1, 20]) {
    const cases: Record<string, () => Promise<void> | void> = {
      'back to back': () => undefined,
      'after the queue drained': () => device.queue.onSubmittedWorkDone(),
      'drained, then 300 µs of host work': async () => {
        await device.queue.onSubmittedWorkDone();
        spin(300);
      },
      'after a readback (copy, submit, map, unmap)': async () => {
        const enc = device.createCommandEncoder();
        enc.copyBufferToBuffer(a, 0, st, 0, 256);
        device.queue.submit([enc.finish()]);
        await st.mapAsync(1);
        st.unmap();
      },
    };
    for (const [name, before] of Object.entries(cases)) {
      const rec: number[] = [];
      const sub: number[] = [];
      for (let i = 0; i < 330; i++) {
        await before();
        const r = one(n);
        if (i >= 30) {
          rec.push(r.rec);
          sub.push(r.sub);
        }
      }
      await device.queue.onSubmittedWorkDone();
      out.push(`| ${n} dispatch${n > 1 ? 'es' : ''}, ${name} | ${med(rec).toFixed(1)} | ${med(sub).toFixed(1)} |`);
    }
  }
  a.destroy();
  st.destroy();
  return out;
}

async function main(): Promise<void> {
  if (process.env.MICRO) {
    const be = await createWebGPUBackend();
    console.log(`adapter: ${be.description}`);
    console.log((await micro(be.device)).join('\n'));
    be.destroy();
    return;
  }
  const jsonAt = process.argv.indexOf('--json');
  const variants: Variant[] = [];
  for (const { env, ...opts } of VARIANTS)
    variants.push({
      label: JSON.stringify({ ...opts, ...(env ? { env } : {}) }),
      be: await createWebGPUBackend(opts),
      env: env ?? {},
    });
  patch();
  const rows: Row[] = [];
  const cases = MLP_CASES.slice(0, Number(process.env.CASES ?? MLP_CASES.length));
  for (let r = 0; r < ROUNDS; r++) {
    for (const c of cases) for (const loop of LOOPS) for (const v of variants) rows.push(await measure(v, c, loop, r));
  }
  const f = (v: number, d = 1) => v.toFixed(d);
  const first = variants[0].be;
  console.log(
    [
      `adapter: ${first.description}; ${STEPS} steps per figure, ${ROUNDS} rounds`,
      '| step | loop | options | round | steps/s | wall µs | host µs | wait µs | map µs (median) | finish+submit µs (in wait) | bind groups | dispatches | submits | buffers |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        (x) =>
          `| ${x.case} | ${x.loop} | ${x.variant} | ${x.round} | ${f(x.stepsPerS, 0)} | ${f(x.wallUs)} | ${f(x.hostUs)} | ${f(x.waitUs)} | ${f(x.mapUs)} | ${f(x.finishUs + x.submitUs)} (${f(x.submitInWaitUs)}) | ${f(x.bindGroups, 2)} | ${f(x.dispatches)} | ${f(x.submits, 2)} | ${f(x.buffers, 2)} |`,
      ),
    ].join('\n'),
  );
  if (jsonAt > 0)
    writeFileSync(
      process.argv[jsonAt + 1],
      JSON.stringify({ adapter: first.description, steps: STEPS, rows }, null, 1),
    );
  for (const v of variants) v.be.destroy();
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
