// Lists the kernels of the jitted MLP training step's compiled replay on WebGPU (issue 12):
// name, workgroups and bound buffers of every dispatch the program issues per step, in order.
// With --time, also what each costs on the GPU (kernel-timer.ts).
// Usage: node scripts/run-ts.mjs scripts/jit/step-kernels.ts [sgd|sgdm|adam] [--time]
// (MLP=784,128,64 sets in,hidden,batch; SwiftShader here, the H100 through the GPU host.)
// MM_SPLIT=off turns the matmuls' k-split off; MM_SPLIT=<n> asks n k-chunks wherever the
// untuned choice splits (issue 12's split-k lab; docs/tuning-log.md "mlpmm").
import { bucketedMatmulConfig, createWebGPUBackend } from '@surf/webgpu';
import { captureDispatches, timeEach } from './kernel-timer';
import { Tensor, crossEntropy, jit, manualSeed, nn, optim, randint, randn, setBackend } from '@surf/nn';

const [IN, H, B] = (process.env.MLP ?? '784,128,64').split(',').map(Number);
const REPS = Number(process.env.REPS ?? 200);

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
  const seen = captureDispatches(be);
  manualSeed(0);
  const model = new nn.Sequential(new nn.Linear(IN, H), new nn.ReLU(), new nn.Linear(H, 10));
  const opt =
    kind === 'adam'
      ? new optim.Adam(model.parameters(), { lr: 1e-3 })
      : new optim.SGD(model.parameters(), { lr: 0.1, momentum: kind === 'sgdm' ? 0.9 : 0 });
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
  const times = process.argv.includes('--time') ? await timeEach(be.device, one, REPS) : null;
  one.forEach((s, i) =>
    console.log(
      `${String(i + 1).padStart(2)}. ${times ? `${times[i].toFixed(2).padStart(6)} µs  ` : ''}${s.k.name.slice(0, 110)}  groups=${s.groups} bufs=${s.bufs.length}`,
    ),
  );
  if (times)
    console.log(
      `sum of the kernels alone: ${times
        .slice(0, one.length)
        .reduce((a, b) => a + b, 0)
        .toFixed(1)} µs; the whole list back to back: ${times[one.length].toFixed(1)} µs per step`,
    );
  be.destroy();
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
