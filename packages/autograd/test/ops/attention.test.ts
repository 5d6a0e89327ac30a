import { DTypeError, ShapeError, ValueError } from '@surf/core';
import { scaledDotProductAttention as sdpa, tensor, zeros } from '@surf/autograd';

// Argument errors of scaledDotProductAttention name the op, the shapes and what was expected;
// values and gradients are checked in the gradcheck suite and the shared op cases.
describe('scaledDotProductAttention errors', () => {
  const q = zeros([2, 3, 4]),
    k = zeros([2, 5, 4]),
    v = zeros([2, 5, 6]);

  test('head dims and lengths must agree', () => {
    expect(() => sdpa(q, zeros([2, 5, 3]), v)).toThrow(ShapeError);
    expect(() => sdpa(q, zeros([2, 5, 3]), v)).toThrow(/differ in the last dim \(E\)/);
    expect(() => sdpa(q, k, zeros([2, 4, 6]))).toThrow(/differ in the key count \(S\)/);
    expect(() => sdpa(q, zeros([3, 5, 4]), v)).toThrow(ShapeError);
    expect(() => sdpa(zeros([4]), k, v)).toThrow(/at least 2-d/);
  });

  test('masks: dtype, shape, not with causal', () => {
    expect(() => sdpa(q, k, v, { attnMask: zeros([3, 4]) })).toThrow(
      /attention mask: shapes \[3,4\] and \[2,3,5\] cannot broadcast/,
    );
    expect(() => sdpa(q, k, v, { attnMask: zeros([3, 5]).int() })).toThrow(DTypeError);
    expect(() => sdpa(q, k, v, { attnMask: zeros([3, 5]), causal: true })).toThrow(/both attnMask and causal/);
  });

  test('options and dtypes', () => {
    expect(() => sdpa(q.int(), k, v)).toThrow(/q has dtype int32; expected float32/);
    expect(() => sdpa(q, k, v, 3 as never)).toThrow(ValueError);
    expect(() => sdpa(q, k, v, { dropoutP: 1.5 })).toThrow(/option 'dropoutP' must be a number in \[0, 1\]/);
    expect(() => sdpa(q, k, v, { scale: NaN })).toThrow(/scale must be a finite number/);
  });

  test('a fully hidden row is 0, not NaN; dropoutP 1 zeroes the output', async () => {
    const f = { dtype: 'float32' as const };
    const out = sdpa(
      tensor([[1, 2]], f),
      tensor(
        [
          [1, 0],
          [0, 1],
        ],
        f,
      ),
      tensor([[3], [4]], f),
      { attnMask: tensor([[false, false]]) },
    );
    expect(Array.from(await out.data())).toEqual([0]);
    const d = sdpa(
      tensor([[1, 2]], f),
      tensor(
        [
          [1, 0],
          [0, 1],
        ],
        f,
      ),
      tensor([[3], [4]], f),
      { dropoutP: 1 },
    );
    expect(Array.from(await d.data())).toEqual([0]);
  });
});
