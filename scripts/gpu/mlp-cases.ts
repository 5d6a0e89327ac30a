// The bench's two MLP training steps (bench/src/rows.ts), shared by the step labs
// (step-profile.ts, loop-profile.ts).
import { Tensor, crossEntropy, manualSeed, nn, optim } from '@surf/nn';

export interface MlpCase {
  name: string;
  sizes: number[];
  batch: number;
  opt: 'sgd' | 'adam';
}

export const MLP_CASES: MlpCase[] = [
  { name: 'MLP 784-128-10 b64 SGD', sizes: [784, 128, 10], batch: 64, opt: 'sgd' },
  { name: 'MLP 784-512-512-10 b256 Adam', sizes: [784, 512, 512, 10], batch: 256, opt: 'adam' },
];

/** The case's model (seeded) and optimizer at the bench's learning rates, and one training step's body. */
export function mlpStep(c: MlpCase): { model: nn.Sequential; body: (x: Tensor, y: Tensor) => Tensor } {
  manualSeed(0);
  const layers: nn.Module[] = [];
  for (let i = 0; i + 1 < c.sizes.length; i++) {
    layers.push(new nn.Linear(c.sizes[i], c.sizes[i + 1]));
    if (i + 2 < c.sizes.length) layers.push(new nn.ReLU());
  }
  const model = new nn.Sequential(...layers);
  const opt =
    c.opt === 'sgd' ? new optim.SGD(model.parameters(), { lr: 0.1 }) : new optim.Adam(model.parameters(), { lr: 1e-3 });
  const body = (x: Tensor, y: Tensor): Tensor => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  return { model, body };
}
