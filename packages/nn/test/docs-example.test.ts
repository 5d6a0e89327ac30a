import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as surf from '@surf/nn';
const { nn, optim } = surf;

// The training example of docs/api-nn.md, verbatim between the <doc> markers: the second
// test checks the two stay identical, the first that the example runs and learns.

afterAll(() => surf.getBackend().destroy());

test('the docs training example runs and trains to high accuracy', async () => {
  const logs: string[] = [];
  const spy = jest.spyOn(console, 'log').mockImplementation((s: unknown) => {
    logs.push(String(s));
  });
  try {
    // <doc>
    await surf.init(); // WebGPU when an adapter exists, else the CPU
    surf.manualSeed(0);

    // A toy task: is a 2-d point inside the unit circle? The data is uploaded once.
    const x = surf.randn([128, 2]);
    const y = surf.tidy(() => x.mul(x).sum(1).lt(1).int()); // int32 labels 0/1

    const model = new nn.Sequential(new nn.Linear(2, 32), new nn.ReLU(), new nn.Linear(32, 2));
    const opt = new optim.Adam(model.parameters(), { lr: 0.03 });
    const loader = new surf.DataLoader([x, y], { batchSize: 32, shuffle: true, seed: 0 });

    let step = 0;
    for (let epoch = 0; epoch < 15; epoch++) {
      for (const [xb, yb] of loader) {
        const loss = surf.tidy(() => {
          const l = surf.crossEntropy(model.forward(xb), yb);
          l.backward();
          opt.step();
          opt.zeroGrad();
          return l;
        });
        // The only readback of the loop: the loss, every 20 steps.
        if (++step % 20 === 0) console.log(`step ${step}: loss ${(await loss.item()).toFixed(3)}`);
        loss.dispose();
      }
    }

    model.eval();
    const acc = surf.tidy(() => model.forward(x).argmax(1).eq(y).float().mean());
    console.log(`accuracy ${(await acc.item()).toFixed(3)}`);

    const bytes = await surf.save(model); // safetensors, loadable by PyTorch
    model.loadStateDict(surf.load(bytes));
    // </doc>
    expect(step).toBe(60);
    expect(bytes.length).toBeGreaterThan(8 + (2 * 32 + 32 + 32 * 2 + 2) * 4);
    expect(Number(await acc.item())).toBeGreaterThan(0.95);
  } finally {
    spy.mockRestore();
  }
  expect(logs.slice(0, 3).map((l) => l.replace(/[\d.]+$/, '#'))).toEqual([
    'step 20: loss #',
    'step 40: loss #',
    'step 60: loss #',
  ]);
  const losses = logs.slice(0, 3).map((l) => Number(l.split(' ').pop()));
  expect(losses[2]).toBeLessThan(losses[0]);
  expect(losses[2]).toBeLessThan(0.2);
  expect(logs[3]).toMatch(/^accuracy 0\.9[5-9]\d|^accuracy 1\.000/);
});

test('docs/api-nn.md shows exactly the code between the <doc> markers above', () => {
  const norm = (s: string) =>
    s
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0);
  const md = readFileSync(join(__dirname, '../../../docs/api-nn.md'), 'utf8');
  const section = md.slice(md.indexOf('## A training example'));
  const block = section.slice(section.indexOf('```ts\n') + 6, section.indexOf('\n```', section.indexOf('```ts\n')));
  const src = readFileSync(__filename, 'utf8');
  const region = src.slice(src.indexOf('// <doc>\n') + 9, src.indexOf('// </doc>'));
  expect(norm(block).length).toBeGreaterThan(20);
  expect(norm(block)).toEqual(norm(region));
});
