import { Backend, CpuBackend, DTypeError, ShapeError, SurfTypeError, ValueError } from '@surf/core';
import {
  cumprod,
  diag,
  diagonal,
  einsum,
  isclose,
  lerp,
  meshgrid,
  nanToNum,
  outer,
  roll,
  setBackend,
  softmaxCrossEntropy,
  tensor,
  unique,
  zeros,
} from '@surf/autograd';
import { describeEach, gpuBackend } from './gpu';

// Bad arguments to the PyTorch-ported tensor ops raise SurfErrors that name the op, what was
// given and what to do; option typos suggest the known key.

describeEach(['cpu', 'webgpu'] as const, 'tensor op argument errors on %s', (kind) => {
  let backend: Backend;
  let prev: Backend | null = null;
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
    prev = setBackend(backend);
  });
  afterAll(() => {
    if (prev) setBackend(prev);
    if (kind === 'webgpu') backend?.destroy();
  });

  test('einsum: equation and operands must agree', () => {
    const a = zeros([2, 3]);
    const b = zeros([4, 2]);
    expect(() => einsum('ij,jk->ik', a)).toThrow(/einsum: 'ij,jk->ik' names 2 operands; got 1 tensors/);
    expect(() => einsum('ij,jk->ik', a, b)).toThrow(ShapeError);
    expect(() => einsum('ij,jk->ik', a, b)).toThrow(/label 'j' has size 3 in one place and 4 in operand 1/);
    expect(() => einsum('i1->i', a)).toThrow(/has the character '1' in operand 0/);
    expect(() => einsum('ij->iz', a)).toThrow(/'z' in the output but in no operand/);
    expect(() => einsum('ij->ii', a)).toThrow(/repeats 'i' in the output/);
    expect(() => einsum('ijk->i', a)).toThrow(/operand 0 has 2 dims but 'ijk' names 3/);
    expect(() => einsum('......->', a)).toThrow(/two '\.\.\.'/);
    expect(() => einsum('ii->i', zeros([2, 3]))).toThrow(/label 'i' has size 2 in one place and 3 in operand 0/);
  });

  test('roll, diag, diagonal, outer, cumprod, lerp', () => {
    const x = zeros([2, 3]);
    expect(() => roll(x, [1, 2], 0)).toThrow(/2 shifts and 1 dims/);
    expect(() => roll(x, 1.5, 0)).toThrow(ValueError);
    expect(() => roll(x, [1, 1])).toThrow(/2 shifts without dims/);
    expect(() => diag(zeros([2, 2, 2]))).toThrow(/diag: input has 3 dims; expected a 1-d or 2-d tensor/);
    expect(() => diagonal(x, 0, 1, -1)).toThrow(/dim1 and dim2 are both 1/);
    expect(() => diagonal(zeros([3]))).toThrow(ShapeError);
    expect(() => outer(x, zeros([3]))).toThrow(/outer: got shapes \[2,3\] and \[3\]; expected two 1-d tensors/);
    expect(() => cumprod(tensor([true, false]), 0)).toThrow(DTypeError);
    expect(() => lerp(tensor([1, 2], { dtype: 'int32' }), zeros([2]), 0.5)).toThrow(/lerp: start has dtype int32/);
    expect(() => x.max(0, 'yes' as unknown as boolean)).toThrow(/keepdim must be a boolean/);
  });

  test('option typos suggest the known key', async () => {
    const x = zeros([2]);
    expect(() => meshgrid([x, x], { indexng: 'xy' } as never)).toThrow(/did you mean 'indexing'/);
    expect(() => meshgrid([x, x], { indexing: 'yx' as 'xy' })).toThrow(ValueError);
    expect(() => isclose(x, x, { equal_nan: true } as never)).toThrow(/did you mean 'equalNan'/);
    expect(() => nanToNum(x, { nan: 'zero' as unknown as number })).toThrow(SurfTypeError);
    await expect(unique(x, { return_counts: true } as never)).rejects.toThrow(/did you mean 'returnCounts'/);
  });

  test('crossEntropy: ignoreIndex, weight and target shapes are checked', () => {
    const z = zeros([2, 3]);
    const y = tensor([0, 2], { dtype: 'int32' });
    expect(() => softmaxCrossEntropy(z, y, { ignore_index: 0 } as never)).toThrow(/did you mean 'ignoreIndex'/);
    expect(() => softmaxCrossEntropy(z, y, { ignoreIndex: 0.5 })).toThrow(ValueError);
    expect(() => softmaxCrossEntropy(z, y, { weight: zeros([2]) })).toThrow(
      /crossEntropy: weight has shape \[2\]; expected \[3\] \(one weight per class\)/,
    );
    expect(() => softmaxCrossEntropy(z, y, { weight: tensor([1, 2, 3], { dtype: 'int32' }) })).toThrow(DTypeError);
    expect(() => softmaxCrossEntropy(zeros([2, 3, 4]), y)).toThrow(
      /target has shape \[2\]; expected \[2,4\] \(one class index per position of the input \[2,3,4\]\)/,
    );
  });
});
