import {
  SurfError,
  SurfTypeError,
  ValueError,
  crossEntropy,
  nn,
  scaledDotProductAttention,
  tensor,
  tidy,
  zeros,
} from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// Arguments of the wrong JS type are refused at the boundary with a SurfTypeError naming the
// function, the argument and the expected type (before: raw TypeErrors such as
// "list.map is not a function"); edge cases give PyTorch's value or a clear message.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
const pick = (k: 'cpu' | 'webgpu') => (k === 'cpu' ? B.cpu : B.gpu());
const bad = (v: unknown) => v as never;

testEach(['cpu', 'webgpu'], 'wrong argument types raise SurfTypeErrors naming function and type on %s', (k) =>
  on(pick(k), () => {
    const t = tensor([1, 2, 3], { dtype: 'float32', requiresGrad: true });
    expect(() => t.sum(bad('1'))).toThrow(SurfTypeError);
    expect(() => t.sum(bad('1'))).toThrow(
      /sum: expected dim to be a number, an array of numbers or nothing; got the string "1"/,
    );
    expect(() => t.max(bad({}))).toThrow(/max: expected dim to be .*; got an object/);
    expect(() => tidy(bad(5))).toThrow(/tidy: expected its argument to be a function; got the number 5/);
    expect(() => t.sum().backward(bad(2))).toThrow(
      /backward: expected the gradient to be a Tensor .*; got the number 2/,
    );
    expect(() => t.add(bad('x'))).toThrow(
      /add: expected an operand to be a Tensor, a number or a boolean; got the string "x"/,
    );
    expect(() => t.mul(bad(undefined))).toThrow(SurfTypeError);
    expect(() => t.matmul(bad(5))).toThrow(SurfTypeError);
    expect(() => new nn.Linear(2, 2).forward(bad(undefined))).toThrow(
      /Linear.forward: the input is undefined; expected a Tensor/,
    );
    expect(() => crossEntropy(bad(null), tensor([0], { dtype: 'int32' }))).toThrow(SurfTypeError);
    // Every one is a SurfError (one catch clause covers Surf's errors).
    expect(() => tidy(bad('f'))).toThrow(SurfError);
  }),
);

testEach(['cpu', 'webgpu'], 'index, empty crossEntropy and head dim 0 give clear answers on %s', (k) =>
  on(pick(k), async () => {
    const t = tensor([1, 2, 3], { dtype: 'float32' });
    expect(() => t.index(1.5)).toThrow(/index: index 1.5 must be an integer/);
    expect(() => t.index(3)).toThrow(/index 3 is out of range/);
    // The mean of an empty batch is NaN, as in PyTorch; its gradient is empty.
    const z = zeros([0, 3], { requiresGrad: true });
    const loss = crossEntropy(z, tensor([], { dtype: 'int32' }));
    expect(Number.isNaN(await loss.item())).toBe(true);
    loss.backward();
    expect(z.grad!.shape).toEqual([0, 3]);
    expect(await crossEntropy(zeros([0, 3]), tensor([], { dtype: 'int32' }), { reduction: 'sum' }).item()).toBe(0);
    // Head dim 0: the message names E, not a scale nobody passed.
    expect(() => scaledDotProductAttention(zeros([1, 2, 0]), zeros([1, 2, 0]), zeros([1, 2, 3]))).toThrow(ValueError);
    expect(() => scaledDotProductAttention(zeros([1, 2, 0]), zeros([1, 2, 0]), zeros([1, 2, 3]))).toThrow(
      /head dim E = 0/,
    );
  }),
);
