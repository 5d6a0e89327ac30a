// Steps/s of the MLP 784-128-10 b64 training step, eager (tidy) vs jit, on the backend given
// as argv[2] ('cpu' | 'webgpu'). The lead runs it on the GPU host; here it checks the CPU.
import { Tensor, crossEntropy, init, jit, manualSeed, nn, optim, randint, randn, tidy } from '@surf/nn';

const [IN, H, B] = (process.env.MLP ?? '784,128,64').split(',').map(Number);

async function main(): Promise<void> {
  const backend = (process.argv[2] ?? 'cpu') as 'cpu' | 'webgpu';
  const steps = Number(process.argv[3] ?? 300);
  await init({ backend });
  for (const kind of ['sgd', 'adam'] as const) {
    for (const mode of ['eager', 'jit'] as const) {
      manualSeed(0);
      const model = new nn.Sequential(new nn.Linear(IN, H), new nn.ReLU(), new nn.Linear(H, 10));
      const opt =
        kind === 'sgd'
          ? new optim.SGD(model.parameters(), { lr: 0.01, momentum: 0.9 })
          : new optim.Adam(model.parameters());
      const x = randn([B, IN]);
      const y = randint(0, 10, [B]);
      const body = (xb: Tensor, yb: Tensor): Tensor => {
        opt.zeroGrad();
        const loss = crossEntropy(model.forward(xb), yb);
        loss.backward();
        opt.step();
        return loss;
      };
      const step = mode === 'jit' ? jit(body) : (xb: Tensor, yb: Tensor) => tidy(() => body(xb, yb));
      for (let i = 0; i < 10; i++) step(x, y).dispose();
      await step(x, y).item();
      const t0 = performance.now();
      let last: Tensor | null = null;
      for (let i = 0; i < steps; i++) {
        last?.dispose();
        last = step(x, y);
      }
      const l = await last!.item();
      const dt = (performance.now() - t0) / 1000;
      console.log(`${backend} ${kind} ${mode}: ${(steps / dt).toFixed(0)} steps/s (loss ${l.toFixed(4)})`);
    }
  }
}
void main();
