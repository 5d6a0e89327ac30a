import { Tensor, nn, optim, tensor } from '@surf/nn';
import { backends, on, testEach } from './helpers';

// zeroGrad clears every parameter's gradient, in every group, on the optimizer and on a
// module: each parameter is checked, so skipping any one (the first, the last, a whole group)
// fails.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const param = (n: number) =>
  tensor(
    Array.from({ length: n }, (_, i) => i + 1),
    { dtype: 'float32', requiresGrad: true },
  );

testEach(['cpu', 'webgpu'] as const, 'optimizer.zeroGrad clears every parameter of every group on %s', (kind) =>
  on(kind === 'cpu' ? B.cpu : B.gpu(), () => {
    const groups = [[param(2), param(3)], [param(1)], [param(2), param(1), param(4)]];
    const opt = new optim.SGD(
      groups.map((params, i) => ({ params, lr: 0.1 * (i + 1) })),
      { lr: 0.1 },
    );
    const all: Tensor[] = groups.flat();
    all.forEach((p) => p.mul(p).sum().backward());
    expect(all.map((p) => p.grad !== null)).toEqual(all.map(() => true));
    opt.zeroGrad();
    expect(all.map((p) => p.grad)).toEqual(all.map(() => null));
  }),
);

testEach(['cpu', 'webgpu'] as const, 'module.zeroGrad clears every parameter of every submodule on %s', (kind) =>
  on(kind === 'cpu' ? B.cpu : B.gpu(), () => {
    const m = new nn.Sequential(new nn.Linear(3, 4), new nn.ReLU(), new nn.Linear(4, 2), new nn.LayerNorm(2));
    m.forward(tensor([[1, 2, 3]], { dtype: 'float32' }))
      .sum()
      .backward();
    const ps = m.namedParameters();
    expect(ps).toHaveLength(6);
    expect(ps.filter(([, p]) => p.grad === null).map(([n]) => n)).toEqual([]);
    m.zeroGrad();
    expect(ps.filter(([, p]) => p.grad !== null).map(([n]) => n)).toEqual([]);
  }),
);
