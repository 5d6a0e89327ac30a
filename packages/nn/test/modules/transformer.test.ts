import { Module, Tensor, ValueError, nn, tensor } from '@surf/nn';
import { backends, testEach } from '../helpers';
import { checkCase, loadCases } from './torch-cases';

// Transformer encoder/decoder layers and stacks against PyTorch (scripts/interop/
// make-modules-fixtures.py): post- and pre-norm, relu and gelu, [L, N, E] and batch-first,
// float and bool masks; PyTorch's weights loaded by its state-dict names; CPU and WebGPU.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

const cases = loadCases('transformer');
const causal = (n: number) =>
  tensor(Float32Array.from({ length: n * n }, (_, k) => (k % n > Math.floor(k / n) ? -Infinity : 0))).reshape([n, n]);
const padding = () =>
  tensor([
    [false, false, false, true, true],
    [false, false, false, false, false],
  ]);

type Row = [() => Module, (m: Module, x: Tensor[]) => Tensor];
const rows: Record<string, Row> = {
  encoder_layer_post_relu: [
    () => new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }),
    (m, [x]) => (m as nn.TransformerEncoderLayer).forward(x),
  ],
  encoder_layer_pre_gelu_bf_masks: [
    () =>
      new nn.TransformerEncoderLayer(8, 2, {
        dimFeedforward: 16,
        activation: 'gelu',
        normFirst: true,
        batchFirst: true,
      }),
    (m, [x]) => (m as nn.TransformerEncoderLayer).forward(x, { srcMask: causal(5), srcKeyPaddingMask: padding() }),
  ],
  decoder_layer_post_relu_causal: [
    () => new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 }),
    (m, [t, s]) => (m as nn.TransformerDecoderLayer).forward(t, s, { tgtMask: causal(4) }),
  ],
  decoder_layer_pre_gelu_bf: [
    () =>
      new nn.TransformerDecoderLayer(8, 2, {
        dimFeedforward: 16,
        activation: 'gelu',
        normFirst: true,
        batchFirst: true,
      }),
    (m, [t, s]) => (m as nn.TransformerDecoderLayer).forward(t, s),
  ],
  encoder_stack_norm: [
    () =>
      new nn.TransformerEncoder(new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }), 2, {
        norm: new nn.LayerNorm(8),
      }),
    (m, [x]) => (m as nn.TransformerEncoder).forward(x),
  ],
  decoder_stack: [
    () => new nn.TransformerDecoder(new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 }), 2),
    (m, [t, s]) => (m as nn.TransformerDecoder).forward(t, s),
  ],
};

test('every transformer fixture has a row', () => {
  expect(Object.keys(cases).sort()).toEqual(Object.keys(rows).sort());
});

describe.each(Object.keys(rows))('%s matches PyTorch', (name) => {
  testEach(['cpu', 'webgpu'], '%s', (kind) =>
    checkCase(
      kind === 'cpu' ? b.cpu : b.gpu(),
      cases[name],
      rows[name][0],
      (m, xs) => [rows[name][1](m, xs)],
      kind === 'cpu' ? 2e-5 : 1e-4,
      kind === 'cpu' ? 1e-5 : 1e-4,
    ),
  );
});

test("PyTorch's defaults: dimFeedforward 2048, dropout 0.1, relu, eps 1e-5, [L, N, E], post-norm", () => {
  const l = new nn.TransformerEncoderLayer(8, 2);
  expect(l.options).toEqual({
    dimFeedforward: 2048,
    dropout: 0.1,
    activation: 'relu',
    layerNormEps: 1e-5,
    batchFirst: false,
    normFirst: false,
    bias: true,
  });
  expect(l.self_attn.batchFirst).toBe(false);
  expect(l.linear1.outFeatures).toBe(2048);
  expect(l.dropout.p).toBe(0.1);
  expect(new nn.TransformerDecoderLayer(8, 2, { batchFirst: true }).multihead_attn.batchFirst).toBe(true);
});

test('stacks copy the layer (same initial weights, separate tensors)', async () => {
  const enc = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(4, 1, { dimFeedforward: 4 }), 2);
  const sd = enc.stateDict();
  expect(Object.keys(sd)).toContain('layers.1.self_attn.in_proj_weight');
  expect(sd['layers.0.linear1.weight']).not.toBe(sd['layers.1.linear1.weight']);
  expect(Array.from(await sd['layers.0.linear1.weight'].data())).toEqual(
    Array.from(await sd['layers.1.linear1.weight'].data()),
  );
});

test('options are checked', () => {
  expect(() => new nn.TransformerEncoderLayer(8, 2, { norm_first: true } as never)).toThrow(/normFirst/);
  expect(() => new nn.TransformerEncoderLayer(8, 2, { activation: 'tanh' as never })).toThrow(ValueError);
  expect(() => new nn.TransformerEncoder(new nn.Linear(2, 2) as never, 2)).toThrow(ValueError);
});
