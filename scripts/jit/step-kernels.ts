// Lists the kernels of the jitted MLP training step's compiled replay on WebGPU (issue 12):
// name, grid and bound buffer count of every dispatch the program issues per step, in order.
// Usage: node scripts/run-ts.mjs scripts/jit/step-kernels.ts [sgd|sgdm|adam] (SwiftShader here).
import { createWebGPUBackend } from '@surf/webgpu';
import { Tensor, crossEntropy, jit, manualSeed, nn, optim, randint, randn, setBackend } from '@surf/nn';

const [IN, H, B] = (process.env.MLP ?? '784,128,64').split(',').map(Number);

async function main(): Promise<void> {
  const kind = process.argv[2] ?? 'sgd';
  const be = await createWebGPUBackend();
  setBackend(be);
  // The runtime is private: watch its dispatches while the program is captured (compile time).
  const rt = (be as unknown as { rt: { capture: unknown; dispatch: (k: { name: string }, bufs: unknown[], w: number, g: number) => void } }).rt;
  const seen: string[] = [];
  const orig = rt.dispatch.bind(rt);
  rt.dispatch = (k, bufs, w, g) => {
    if (rt.capture) seen.push(`${k.name}  groups=${g} bufs=${bufs.length}`);
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
  console.log(`${kind}: ${perStep} dispatches per replayed step`);
  one.forEach((s, i) => console.log(`${String(i + 1).padStart(2)}. ${s}`));
  be.destroy();
}
void main().catch((e) => { console.error(e); process.exit(1); });
