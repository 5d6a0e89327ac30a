// Lists the kernels of the jitted MLP training step's compiled replay on WebGPU (issue 12):
// name, workgroups and bound buffers of every dispatch the program issues per step, in order.
// With --time, also what each costs on the GPU: the dispatch alone, REPS times back to back
// in one pass on its captured buffers and parameters (so each waits for the one before, as in
// the step), wall time over an empty submit's, median of 5; then the whole list the same way.
// Usage: node scripts/run-ts.mjs scripts/jit/step-kernels.ts [sgd|sgdm|adam] [--time]
// (MLP=784,128,64 sets in,hidden,batch; SwiftShader here, the H100 through the GPU host.)
// MM_SPLIT=off turns the matmuls' k-split off; MM_SPLIT=<n> asks n k-chunks wherever the
// untuned choice splits (issue 12's split-k lab; docs/tuning-log.md "mlpmm").
import { bucketedMatmulConfig, createWebGPUBackend } from '@surf/webgpu';
import { Tensor, crossEntropy, jit, manualSeed, nn, optim, randint, randn, setBackend } from '@surf/nn';

const [IN, H, B] = (process.env.MLP ?? '784,128,64').split(',').map(Number);
const REPS = Number(process.env.REPS ?? 200);

interface K { name: string; pipeline: GPUComputePipeline; layout: GPUBindGroupLayout; paramBytes: number }
interface Buf { buffer: GPUBuffer }
interface Seen { k: K; bufs: Buf[]; params: Uint32Array<ArrayBuffer>; groups: number }

async function main(): Promise<void> {
  const kind = process.argv[2] ?? 'sgd';
  const be = await createWebGPUBackend();
  setBackend(be);
  const split = process.env.MM_SPLIT;
  if (split) {
    be.setMatmulConfig((m, n, k, batch) => {
      const c = bucketedMatmulConfig(m, n, k, batch);
      return c.splitK === undefined ? c : { ...c, splitK: split === 'off' ? undefined : Number(split) };
    });
  }
  // The runtime is private: watch its dispatches while the program is captured (compile time).
  const rt = (be as unknown as { rt: { capture: unknown; words: { u32: Uint32Array<ArrayBuffer> }; dispatch: (k: K, bufs: Buf[], w: number, g: number) => void } }).rt;
  const seen: Seen[] = [];
  const orig = rt.dispatch.bind(rt);
  rt.dispatch = (k, bufs, w, g) => {
    if (rt.capture) seen.push({ k, bufs: bufs.slice(), params: rt.words.u32.slice(w, w + k.paramBytes / 4), groups: g });
    orig(k, bufs, w, g);
  };
  manualSeed(0);
  const model = new nn.Sequential(new nn.Linear(IN, H), new nn.ReLU(), new nn.Linear(H, 10));
  const opt = kind === 'adam' ? new optim.Adam(model.parameters(), { lr: 1e-3 }) : new optim.SGD(model.parameters(), { lr: 0.1, momentum: kind === 'sgdm' ? 0.9 : 0 });
  const step = jit((x: Tensor, y: Tensor) => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  });
  const x = randn([B, IN]);
  const y = randint(0, 10, [B]);
  for (let i = 0; i < 6; i++) step(x, y).dispose();
  await be.sync();
  const s0 = be.stats();
  step(x, y).dispose();
  await be.sync();
  const perStep = be.stats().dispatches - s0.dispatches;
  // Two dry runs capture the program: the second repeats the first.
  const one = seen.slice(0, seen.length / 2);
  console.log(`${kind} ${IN}-${H}-10 b${B}: ${perStep} dispatches per replayed step`);
  const times = process.argv.includes('--time') ? await timeEach(be.device, one) : null;
  one.forEach((s, i) => console.log(`${String(i + 1).padStart(2)}. ${times ? `${times[i].toFixed(2).padStart(6)} µs  ` : ''}${s.k.name.slice(0, 110)}  groups=${s.groups} bufs=${s.bufs.length}`));
  if (times) console.log(`sum of the kernels alone: ${times.slice(0, one.length).reduce((a, b) => a + b, 0).toFixed(1)} µs; the whole list back to back: ${times[one.length].toFixed(1)} µs per step`);
  be.destroy();
}

/** µs per dispatch of each captured dispatch, then of the whole list (see the header). */
async function timeEach(device: GPUDevice, list: Seen[]): Promise<number[]> {
  const bound = list.map((s) => {
    const u = device.createBuffer({ size: Math.max(16, s.k.paramBytes), usage: 0x40 | 0x08 });
    device.queue.writeBuffer(u, 0, s.params);
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: u, offset: 0, size: s.k.paramBytes } }];
    s.bufs.forEach((b, i) => entries.push({ binding: i + 1, resource: { buffer: b.buffer } }));
    return { s, bg: device.createBindGroup({ layout: s.k.layout, entries }) };
  });
  const run = async (items: typeof bound, reps: number): Promise<number> => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    for (let r = 0; r < reps; r++) {
      for (const { s, bg } of items) {
        pass.setPipeline(s.k.pipeline);
        pass.setBindGroup(0, bg, [0]);
        pass.dispatchWorkgroups(s.groups);
      }
    }
    pass.end();
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    return (performance.now() - t0) * 1000;
  };
  const median = async (items: typeof bound, reps: number): Promise<number> => {
    await run(items, reps);
    const r: number[] = [];
    for (let i = 0; i < 5; i++) r.push(await run(items, reps));
    return r.sort((a, b) => a - b)[2];
  };
  const empty = await median([], 0);
  const out: number[] = [];
  for (const b of bound) out.push((await median([b], REPS) - empty) / REPS);
  out.push((await median(bound, REPS) - empty) / REPS);
  return out;
}
void main().catch((e) => { console.error(e); process.exit(1); });
