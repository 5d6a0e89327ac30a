import { Module, ShapeError, Tensor, ValueError, nn, ones, zeros } from '@surf/nn';
import { backends, testEach } from '../helpers';
import { checkCase, loadCases } from './torch-cases';

// nn.RNN/LSTM/GRU and their cells against PyTorch (scripts/interop/make-modules-fixtures.py):
// the same weights loaded by PyTorch's state-dict names, outputs, final states and gradients of
// the input, the initial states and every parameter, on the CPU and on WebGPU.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

const cases = loadCases('recurrent');

type Row = [string, () => Module, (m: Module, x: Tensor[]) => Tensor[]];
const seqOut = (r: [Tensor, Tensor]) => [r[0], r[1]];
const rows: Row[] = [
  ['rnn_tanh_2layer_h0', () => new nn.RNN(3, 4, { numLayers: 2 }), (m, [x, h]) => seqOut((m as nn.RNN).forward(x, h))],
  [
    'rnn_relu_bi_batchfirst',
    () => new nn.RNN(3, 4, { nonlinearity: 'relu', bidirectional: true, batchFirst: true }),
    (m, [x]) => seqOut((m as nn.RNN).forward(x)),
  ],
  [
    'lstm_2layer_bi_h0c0',
    () => new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true }),
    (m, [x, h, c]) => {
      const [o, [hn, cn]] = (m as nn.LSTM).forward(x, [h, c]);
      return [o, hn, cn];
    },
  ],
  [
    'lstm_nobias_batchfirst',
    () => new nn.LSTM(3, 4, { bias: false, batchFirst: true }),
    (m, [x]) => (m as nn.LSTM).forward(x).flat(),
  ],
  ['lstm_unbatched', () => new nn.LSTM(3, 4), (m, [x]) => (m as nn.LSTM).forward(x).flat()],
  [
    'gru_2layer_bi_h0',
    () => new nn.GRU(3, 4, { numLayers: 2, bidirectional: true }),
    (m, [x, h]) => seqOut((m as nn.GRU).forward(x, h)),
  ],
  ['gru_batchfirst', () => new nn.GRU(3, 4, { batchFirst: true }), (m, [x]) => seqOut((m as nn.GRU).forward(x))],
  ['rnncell_tanh', () => new nn.RNNCell(3, 4), (m, [x, h]) => [(m as nn.RNNCell).forward(x, h)]],
  ['rnncell_relu_noh', () => new nn.RNNCell(3, 4, { nonlinearity: 'relu' }), (m, [x]) => [m.forward(x)]],
  ['lstmcell', () => new nn.LSTMCell(3, 4), (m, [x, h, c]) => (m as nn.LSTMCell).forward(x, [h, c])],
  ['lstmcell_unbatched_noh', () => new nn.LSTMCell(3, 4), (m, [x]) => (m as nn.LSTMCell).forward(x)],
  ['grucell', () => new nn.GRUCell(3, 4), (m, [x, h]) => [(m as nn.GRUCell).forward(x, h)]],
  ['grucell_nobias', () => new nn.GRUCell(3, 4, { bias: false }), (m, [x]) => [m.forward(x)]],
];

describe.each(rows)('%s matches PyTorch', (name, build, run) => {
  testEach(['cpu', 'webgpu'], '%s', (kind) =>
    checkCase(
      kind === 'cpu' ? b.cpu : b.gpu(),
      cases[name],
      build,
      run,
      kind === 'cpu' ? 2e-5 : 1e-4,
      kind === 'cpu' ? 1e-5 : 1e-4,
    ),
  );
});

test('every recurrent fixture has a row', () => {
  expect(Object.keys(cases).sort()).toEqual(rows.map((r) => r[0]).sort());
});

test("PyTorch's defaults: one layer, biases, [L, N, H] input, one direction, no dropout", async () => {
  const m = new nn.LSTM(3, 4);
  expect([m.numLayers, m.bias, m.batchFirst, m.bidirectional, m.dropout]).toEqual([1, true, false, false, 0]);
  expect(Object.keys(m.stateDict())).toEqual(['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']);
  expect(new nn.RNN(3, 4).nonlinearityName).toBe('tanh');
  // U(±1/√hidden): every weight within 1/2 for hidden 4, and not all zero.
  const g = new nn.GRU(2, 4, { bidirectional: true });
  expect(Object.keys(g.stateDict())).toContain('weight_hh_l0_reverse');
  const w = (await g.stateDict().weight_ih_l0.data()) as Float32Array;
  expect(Math.max(...w.map(Math.abs))).toBeLessThanOrEqual(0.5);
  expect(Math.max(...w.map(Math.abs))).toBeGreaterThan(0.2);
});

test('options are checked (unknown keys, ranges) and states by shape', () => {
  expect(() => new nn.LSTM(3, 4, { batch_first: true } as never)).toThrow(/did you mean 'batchFirst'/);
  expect(() => new nn.GRU(3, 4, { numLayers: 0 })).toThrow(ValueError);
  expect(() => new nn.RNN(3, 4, { nonlinearity: 'sigmoid' as never })).toThrow(ValueError);
  expect(() => new nn.RNN(3, 4, { dropout: 1.5 })).toThrow(/probability/);
  const m = new nn.GRU(3, 4);
  expect(() => m.forward(zeros([5, 2, 2]))).toThrow(ShapeError);
  expect(() => m.forward(zeros([5, 2, 3]), zeros([2, 2, 4]))).toThrow(/h0 has shape \[2,2,4\]; expected \[1,2,4\]/);
});

test('dropout between layers applies in training only', async () => {
  const m = new nn.GRU(3, 4, { numLayers: 2, dropout: 0.9 });
  const x = ones([3, 2, 3]);
  m.eval();
  const a = await m.forward(x)[0].data();
  const bb = await m.forward(x)[0].data();
  expect(Array.from(a)).toEqual(Array.from(bb));
  m.train();
  const c = await m.forward(x)[0].data();
  expect(Array.from(c)).not.toEqual(Array.from(a));
});
