import { Module, Tensor, ValueError, nn, tensor } from '@surf/nn';
import { backends, testEach } from '../helpers';
import { checkCase, loadCases } from './torch-cases';

// nn.functional forms against torch.nn.functional (scripts/interop/make-modules-fixtures.py),
// values and gradients of every input, defaults included, on the CPU and on WebGPU.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

const F = nn.functional;
const cases = loadCases('functional');
const run: Record<string, (x: Tensor[]) => Tensor> = {
  normalize: ([x]) => F.normalize(x),
  normalize_p1_dim0: ([x]) => F.normalize(x, { p: 1, dim: 0 }),
  cosine_similarity: ([x, y]) => F.cosineSimilarity(x, y),
  cosine_similarity_last_bcast: ([x, y]) => F.cosineSimilarity(x, y, { dim: -1 }),
  pairwise_distance: ([x, y]) => F.pairwiseDistance(x, y),
  pad_value: ([x]) => F.pad(x, [1, 2, 0, 1], { value: 1.5 }),
  layer_norm_affine: ([x, w, bb]) => F.layerNorm(x, [4], { weight: w, bias: bb }),
  group_norm_affine: ([x, w, bb]) => F.groupNorm(x, 2, { weight: w, bias: bb }),
  instance_norm: ([x]) => F.instanceNorm(x),
  interpolate_linear: ([x]) => F.interpolate(x, { scaleFactor: 1.5, mode: 'linear' }),
  interpolate_nearest_1d: ([x]) => F.interpolate(x, { size: 8 }),
};

/** A parameter-free module standing for the functional call. */
class Call extends Module {
  forward(): Tensor {
    throw new Error('unused');
  }
}

test('every functional fixture has a call', () => {
  expect(Object.keys(cases).sort()).toEqual(Object.keys(run).sort());
});

describe.each(Object.keys(run))('%s matches torch.nn.functional', (name) => {
  testEach(['cpu', 'webgpu'], '%s', (kind) =>
    checkCase(
      kind === 'cpu' ? b.cpu : b.gpu(),
      cases[name],
      () => new Call(),
      (_m, xs) => [run[name](xs)],
    ),
  );
});

test('the namespace holds the forms PyTorch users reach for', () => {
  for (const name of [
    'relu',
    'gelu',
    'silu',
    'softmax',
    'logSoftmax',
    'dropout',
    'linear',
    'conv1d',
    'conv2d',
    'maxPool2d',
    'avgPool2d',
    'maxPool1d',
    'layerNorm',
    'batchNorm',
    'embedding',
    'pad',
    'interpolate',
    'oneHot',
    'normalize',
    'cosineSimilarity',
    'crossEntropy',
    'mseLoss',
    'scaledDotProductAttention',
  ])
    expect(typeof (F as Record<string, unknown>)[name]).toBe('function');
});

test('dropout: identity when not training, PyTorch-style scaling when training', async () => {
  const x = tensor([1, 2, 3, 4]);
  expect(F.dropout(x, 0.5, false)).toBe(x);
  const y = await F.dropout(tensor(new Float32Array(1000).fill(1)), 0.25).data();
  const kept = Array.from(y).filter((v) => v !== 0);
  expect(kept.every((v) => Math.abs(v - 1 / 0.75) < 1e-6)).toBe(true);
  expect(kept.length).toBeGreaterThan(650);
  expect(kept.length).toBeLessThan(850);
});

test('embedding gathers rows; options are checked', async () => {
  const w = tensor([
    [1, 2],
    [3, 4],
    [5, 6],
  ]);
  const e = F.embedding(tensor([[2, 0]], { dtype: 'int32' }), w);
  expect(e.shape).toEqual([1, 2, 2]);
  expect(Array.from(await e.data())).toEqual([5, 6, 1, 2]);
  expect(() => F.normalize(w, { axis: 0 } as never)).toThrow(ValueError);
  expect(() => F.pad(w, [1, 1], { mode: 'reflekt' } as never)).toThrow(ValueError);
  expect(() => F.interpolate(tensor([[[1, 2]]]), { size: 3, scaleFactor: 2 })).toThrow(/exactly one/);
});
