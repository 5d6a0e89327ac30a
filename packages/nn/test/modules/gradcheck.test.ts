import { Module, Tensor, gradcheck, manualSeed, nn, randn } from '@surf/nn';
import { backends, functional, on } from '../helpers';

// Finite-difference gradient checks of the new modules (input and every parameter) on the
// CPU, independent of the PyTorch fixtures.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

// Inputs kept at least 0.1 from 0, where PReLU, ReLU6 and the shrinks have kinks that finite
// differences cannot step across.
const leaf = (shape: number[], scale = 1) => {
  const r = randn(shape);
  return r.add(r.sign().mul(0.1)).mul(scale).detach().requiresGrad_(true);
};
const first = (m: Module) => {
  const f = functional(m);
  return (x: Tensor, ...ps: Tensor[]) => {
    const out = f(x, ...ps) as unknown as Tensor | Tensor[] | [Tensor, Tensor[]];
    const ts = (Array.isArray(out) ? out.flat(2) : [out]) as Tensor[];
    return ts.map((t) => t.sum()).reduce((a, t) => a.add(t));
  };
};

const cases: [string, () => Module, number[]][] = [
  ['LSTM, bidirectional', () => new nn.LSTM(2, 3, { bidirectional: true }), [2, 2, 2]],
  ['GRU', () => new nn.GRU(2, 3), [3, 2, 2]],
  ['RNN relu', () => new nn.RNN(2, 3, { nonlinearity: 'relu' }), [3, 2, 2]],
  ['LSTMCell', () => new nn.LSTMCell(2, 3), [2, 2]],
  [
    'TransformerEncoderLayer (pre-norm, gelu)',
    () => {
      const l = new nn.TransformerEncoderLayer(4, 2, {
        dimFeedforward: 6,
        normFirst: true,
        activation: 'gelu',
        dropout: 0,
      });
      return l;
    },
    [3, 2, 4],
  ],
  ['TransformerDecoderLayer', () => new DecoderSelf(), [3, 2, 4]],
  ['PReLU per channel', () => new nn.PReLU({ numParameters: 3 }), [2, 3, 2]],
  ['InstanceNorm2d affine', () => new nn.InstanceNorm2d(2, { affine: true }), [2, 2, 3, 3]],
  ['Upsample bilinear', () => new nn.Upsample({ scaleFactor: 1.5, mode: 'bilinear' }), [1, 2, 3, 3]],
  ['Mish', () => new nn.Mish(), [2, 3]],
  ['Softplus', () => new nn.Softplus({ beta: 2 }), [2, 3]],
];

/** The decoder layer attending to its own input as memory (one input for gradcheck). */
class DecoderSelf extends Module {
  readonly layer = new nn.TransformerDecoderLayer(4, 2, { dimFeedforward: 6, dropout: 0 });
  forward(x: Tensor): Tensor {
    return this.layer.forward(x, x.mul(0.5));
  }
}

test.each(cases)('%s: gradients by finite differences', async (_name, build, shape) => {
  await on(b.cpu, async () => {
    manualSeed(7);
    const m = build();
    m.eval();
    const x = leaf(shape);
    const r = await gradcheck(first(m), [x, ...m.parameters()]);
    expect(r.ok).toBe(true);
  });
});
