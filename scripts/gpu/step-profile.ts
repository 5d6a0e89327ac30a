// Where a training step's time goes on WebGPU (issue 12): for the bench's two MLP steps,
// eager (the documented tidy loop) and jit, it measures
//   record   the jit's first calls (eager run + recording), each synchronised;
//   host     JS time inside the step call (autograd or replay, encoding, submits), no waits;
//   wall     time per step over a run that synchronises once at the end;
//   GPU      the passes' own time from timestamp queries (a second backend with timestamps on,
//            so the resolves do not disturb host and wall);
// and dispatches / submits / bind groups created per step; then what one native WebGPU call of
// each kind a replay makes costs on the host (the floor under a replay's host time). Prints
// the tables, writes --json.
// Run on the GPU host: bash scripts/gpu/lab-build.sh step-profile, then
//   source .gpu-host/unpack.sh; node .bench/step-profile.mjs --json $OUT/step.json
import { writeFileSync } from 'node:fs';
import { createWebGPUBackend, WebGPUBackend } from '@surf/webgpu';
import { Tensor, jit, randint, randn, setBackend, tidy } from '@surf/nn';
import { MLP_CASES, MlpCase, mlpStep } from './mlp-cases';

const STEPS = Number(process.env.STEPS ?? 500);

function makeStep(c: MlpCase, mode: 'eager' | 'jit'): { step: (x: Tensor, y: Tensor) => Tensor; x: Tensor; y: Tensor } {
  const { body } = mlpStep(c);
  const step = mode === 'jit' ? jit(body) : (xb: Tensor, yb: Tensor) => tidy(() => body(xb, yb));
  return { step, x: randn([c.batch, c.sizes[0]]), y: randint(0, c.sizes[c.sizes.length - 1], [c.batch]) };
}

interface Row {
  case: string;
  mode: string;
  recordMs: number[];
  hostMs: number;
  wallMs: number;
  gpuMs: number;
  dispatches: number;
  submits: number;
  bindGroups: number;
}

async function measure(c: MlpCase, mode: 'eager' | 'jit', plain: WebGPUBackend, timed: WebGPUBackend): Promise<Row> {
  setBackend(plain);
  const { step, x, y } = makeStep(c, mode);
  const recordMs: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    step(x, y).dispose();
    await plain.sync();
    recordMs.push(performance.now() - t0);
  }
  for (let i = 0; i < 20; i++) step(x, y).dispose();
  await plain.sync();
  const s0 = plain.stats();
  let host = 0;
  const w0 = performance.now();
  for (let i = 0; i < STEPS; i++) {
    const h0 = performance.now();
    const l = step(x, y);
    host += performance.now() - h0;
    l.dispose();
  }
  await plain.sync();
  const wall = (performance.now() - w0) / STEPS;
  const s1 = plain.stats();

  setBackend(timed);
  const g = makeStep(c, mode);
  for (let i = 0; i < 24; i++) g.step(g.x, g.y).dispose();
  await timed.sync();
  const t0 = timed.stats().gpuTimeMs!;
  for (let i = 0; i < STEPS; i++) g.step(g.x, g.y).dispose();
  await timed.sync();
  const gpu = (timed.stats().gpuTimeMs! - t0) / STEPS;
  return {
    case: c.name,
    mode,
    recordMs,
    hostMs: host / STEPS,
    wallMs: wall,
    gpuMs: gpu,
    dispatches: (s1.dispatches - s0.dispatches) / STEPS,
    submits: (s1.submits - s0.submits) / STEPS,
    bindGroups: (s1.bindGroupsCreated - s0.bindGroupsCreated) / STEPS,
  };
}

/** Host µs per native call, each timed over `n` calls (median of 5 rounds after a warm-up). */
async function nativeCosts(device: GPUDevice): Promise<Record<string, number>> {
  const n = 2000;
  const buf = (size: number, usage: number) => device.createBuffer({ size, usage });
  const a = buf(4096, 0x80 | 0x04 | 0x08);
  const b = buf(4096, 0x80 | 0x04 | 0x08);
  const u = buf(256 * 4, 0x40 | 0x08);
  const module = device.createShaderModule({
    code: '@group(0) @binding(0) var<uniform> p: vec4u; @group(0) @binding(1) var<storage, read_write> o: array<u32>; @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < 4u) { o[g.x] = p.x; } }',
  });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bg = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: u, size: 16 } },
      { binding: 1, resource: { buffer: a } },
    ],
  });
  const words = new Uint32Array(64);
  const time = async (body: () => void): Promise<number> => {
    const r: number[] = [];
    for (let round = 0; round < 6; round++) {
      const t0 = performance.now();
      body();
      const dt = performance.now() - t0;
      await device.queue.onSubmittedWorkDone();
      if (round) r.push((dt * 1000) / n);
    }
    return r.sort((x, y) => x - y)[2];
  };
  const out: Record<string, number> = {};
  out['setBindGroup+dispatch'] = await time(() => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    for (let i = 0; i < n; i++) {
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(1);
    }
    pass.end();
    device.queue.submit([enc.finish()]);
  });
  out.copyBufferToBuffer = await time(() => {
    const enc = device.createCommandEncoder();
    for (let i = 0; i < n; i++) enc.copyBufferToBuffer(i & 1 ? a : b, 0, i & 1 ? b : a, 0, 256);
    device.queue.submit([enc.finish()]);
  });
  out.writeBuffer = await time(() => {
    for (let i = 0; i < n; i++) device.queue.writeBuffer(u, 0, words);
  });
  out['encoder+pass+finish+submit'] = await time(() => {
    for (let i = 0; i < n; i++) {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(1);
      pass.end();
      device.queue.submit([enc.finish()]);
    }
  });
  out.createBindGroup = await time(() => {
    for (let i = 0; i < n; i++)
      device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: u, size: 16 } },
          { binding: 1, resource: { buffer: i & 1 ? a : b } },
        ],
      });
  });
  for (const x of [a, b, u]) x.destroy();
  return out;
}

async function main(): Promise<void> {
  const jsonAt = process.argv.indexOf('--json');
  const plain = await createWebGPUBackend();
  const timed = await createWebGPUBackend({ timestamps: true });
  const rows: Row[] = [];
  // CASES=n keeps the first n cases (CASES=0: only the native call costs; SwiftShader checks).
  for (const c of MLP_CASES.slice(0, Number(process.env.CASES ?? MLP_CASES.length)))
    for (const mode of ['eager', 'jit'] as const) rows.push(await measure(c, mode, plain, timed));
  const f = (v: number, d = 3) => v.toFixed(d);
  const lines = [
    `adapter: ${plain.description}; ${STEPS} steps per figure`,
    '| step | mode | first calls (ms, synced) | host ms/step | wall ms/step | GPU ms/step | steps/s | dispatches | submits | bind groups created |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.case} | ${r.mode} | ${r.recordMs.map((v) => f(v, 1)).join(', ')} | ${f(r.hostMs)} | ${f(r.wallMs)} | ${f(r.gpuMs)} | ${(1000 / r.wallMs).toFixed(0)} | ${f(r.dispatches, 1)} | ${f(r.submits, 2)} | ${f(r.bindGroups, 2)} |`,
    ),
  ];
  const native = await nativeCosts(plain.device);
  lines.push(
    '',
    '| native call (host µs each, median of 5 x 2000) | µs |',
    '|---|---:|',
    ...Object.entries(native).map(([k, v]) => `| ${k} | ${f(v, 2)} |`),
  );
  console.log(lines.join('\n'));
  if (jsonAt > 0)
    writeFileSync(
      process.argv[jsonAt + 1],
      JSON.stringify({ adapter: plain.description, steps: STEPS, rows, native }, null, 1),
    );
  plain.destroy();
  timed.destroy();
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
