// The README's "use it in your app" program, type-checked and run by scripts/packaging/check.mjs
// in a fresh app that installed the packed tarballs.
import * as surf from '@surf/nn';
import { nn, optim } from '@surf/nn';

const { backend } = await surf.init({ backend: 'cpu' });
surf.manualSeed(0);
const x = surf.randn([64, 2]);
const y = surf.tidy(() => x.mul(x).sum(1).lt(1).int()); // inside the unit circle?
const model = new nn.Sequential(new nn.Linear(2, 16), new nn.ReLU(), new nn.Linear(16, 2));
const opt = new optim.Adam(model.parameters(), { lr: 0.05 });
for (let step = 1; step <= 60; step++) {
  const loss = surf.crossEntropy(model.forward(x), y);
  loss.backward();
  opt.step();
  opt.zeroGrad();
  if (step % 20 === 0) console.log(`${backend} step ${step}: loss ${(await loss.item()).toFixed(3)}`);
  loss.dispose();
}
