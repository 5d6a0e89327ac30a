import { DTypeError, DisposedError, ShapeError, ValueError } from '@surf/core';
import {
  Tensor,
  arange,
  cat,
  eye,
  full,
  getBackend,
  linspace,
  manualSeed,
  ones,
  rand,
  randint,
  randn,
  stack,
  tensor,
  where,
  zeros,
} from '@surf/autograd';

describe('creation and readback', () => {
  test('tensor infers the shape; JS numbers are float32 unless dtype says (TF.js rule)', async () => {
    const a = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect([a.shape, a.ndim, a.numel, a.dtype]).toEqual([[2, 3], 2, 6, 'float32']);
    expect(tensor([1, 2], { dtype: 'int32' }).dtype).toBe('int32');
    expect(tensor(3).dtype).toBe('float32');
    expect(tensor(true).dtype).toBe('bool');
    expect(tensor(new Int32Array([1])).dtype).toBe('int32');
    expect(tensor(new Int16Array([1])).dtype).toBe('int32');
    expect(tensor(new Uint8Array([1, 0])).dtype).toBe('bool');
    expect(tensor(new Float64Array([1])).dtype).toBe('float32');
    expect(await a.toArray()).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(tensor([1, 2.5]).dtype).toBe('float32');
    expect(tensor([true, false]).dtype).toBe('bool');
    expect(await tensor([true, false]).toArray()).toEqual([true, false]);
    expect(tensor([1, 2], { requiresGrad: true }).dtype).toBe('float32');
    const s = tensor(3.5);
    expect(s.shape).toEqual([]);
    expect(await s.item()).toBe(3.5);
    expect(await s.toArray()).toBe(3.5);
    expect(tensor(new Float32Array([1, 2])).dtype).toBe('float32');
    expect(Array.from(await tensor(new Int32Array([7, -7])).data())).toEqual([7, -7]);
    expect(await tensor([1.9, -1.9], { dtype: 'int32' }).toArray()).toEqual([1, -1]);
  });

  test('ragged and mixed input is rejected', () => {
    expect(() => tensor([[1, 2], [3]])).toThrow(ShapeError);
    expect(() => tensor([[1, 2], [3]])).toThrow(/ragged/);
    expect(() => tensor([1, true])).toThrow(ValueError);
    expect(() => tensor([1, 2], { dtype: 'float64' as never })).toThrow(DTypeError);
  });

  test('zeros, ones, full, arange, linspace, eye', async () => {
    expect(await zeros([2, 2]).toArray()).toEqual([
      [0, 0],
      [0, 0],
    ]);
    expect(await ones(3).toArray()).toEqual([1, 1, 1]);
    expect(full([2], 7).dtype).toBe('float32');
    expect(full([2], 7, { dtype: 'int32' }).dtype).toBe('int32');
    expect(full([2], true).dtype).toBe('bool');
    expect(zeros([2], { dtype: 'int32' }).dtype).toBe('int32');
    expect(ones([2], { dtype: 'bool' }).dtype).toBe('bool');
    expect(linspace(0, 4, 3, { dtype: 'int32' }).dtype).toBe('int32');
    expect(eye(2, 2, { dtype: 'bool' }).dtype).toBe('bool');
    expect(arange(0, 3, 1, { dtype: 'float32' }).dtype).toBe('float32');
    expect(await full([2], 0.5).toArray()).toEqual([0.5, 0.5]);
    expect(await arange(4).toArray()).toEqual([0, 1, 2, 3]);
    expect(arange(4).dtype).toBe('int32');
    expect(await arange(1, 2, 0.25).toArray()).toEqual([1, 1.25, 1.5, 1.75]);
    expect(await arange(5, 0, -2).toArray()).toEqual([5, 3, 1]);
    expect(await linspace(0, 1, 5).toArray()).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(await eye(2, 3).toArray()).toEqual([
      [1, 0, 0],
      [0, 1, 0],
    ]);
    expect(() => arange(0, 1, 0)).toThrow(ValueError);
  });

  test('random ops are reproducible with manualSeed and in range', async () => {
    manualSeed(42);
    const a = await rand([50]).data();
    const b = await randn([4]).data();
    const c = await randint(3, 6, [50]).data();
    manualSeed(42);
    expect(await rand([50]).data()).toEqual(a);
    expect(await randn([4]).data()).toEqual(b);
    expect(Array.from(a).every((v) => v >= 0 && v < 1)).toBe(true);
    expect(new Set(Array.from(c))).toEqual(new Set([3, 4, 5]));
    expect(Array.from(await randn([4]).data())).not.toEqual(Array.from(b));
  });

  test('item on a non-scalar names the shape', async () => {
    await expect(zeros([2, 3]).item()).rejects.toThrow(/item: the tensor has shape \[2,3\]/);
  });

  test('the default backend is the CPU, created lazily', () => {
    expect(getBackend().name).toBe('cpu');
  });
});

describe('elementwise ops and dtype promotion', () => {
  test('values of composite activations', async () => {
    const x = tensor([-100, -1, 0, 1, 100]);
    const close = async (t: Tensor, want: number[]) =>
      (Array.from(await t.data()) as number[]).forEach((v, i) => expect(v).toBeCloseTo(want[i], 5));
    await close(x.sigmoid(), [0, 1 / (1 + Math.E), 0.5, 1 / (1 + Math.exp(-1)), 1]);
    await close(x.tanh(), [-1, Math.tanh(-1), 0, Math.tanh(1), 1]);
    await close(x.softplus(), [0, Math.log1p(Math.exp(-1)), Math.log(2), 1 + Math.log1p(Math.exp(-1)), 100]);
    await close(x.relu(), [0, 0, 0, 1, 100]);
    await close(x.leakyRelu(0.1), [-10, -0.1, 0, 1, 100]);
    await close(x.gelu(), [-0, -0.15865525, 0, 0.84134475, 100]);
    await close(x.abs(), [100, 1, 0, 1, 100]);
    await close(x.clamp(-2, 0.5), [-2, -1, 0, 0.5, 0.5]);
    await close(x.clamp(null, 0), [-100, -1, 0, 0, 0]);
  });

  test('promotion: int32 with float number is float32, with int number stays int32, div is true division', async () => {
    const i = tensor([1, 2, 3], { dtype: 'int32' });
    expect(i.add(1).dtype).toBe('int32');
    expect(await i.add(0.5).toArray()).toEqual([1.5, 2.5, 3.5]);
    expect(i.mul(tensor([0.5])).dtype).toBe('float32');
    expect(await i.div(2).toArray()).toEqual([0.5, 1, 1.5]);
    expect(i.exp().dtype).toBe('float32');
    expect(await tensor([true, false]).add(1).toArray()).toEqual([2, 1]);
    expect(await tensor([7, -7]).neg().toArray()).toEqual([-7, 7]);
    expect(await i.maximum(2).toArray()).toEqual([2, 2, 3]);
    expect(await i.minimum(2).toArray()).toEqual([1, 2, 2]);
  });

  test('comparisons give bool and follow NaN rules', async () => {
    const a = tensor([1, 2, NaN]);
    expect(a.lt(2).dtype).toBe('bool');
    expect(await a.lt(2).toArray()).toEqual([true, false, false]);
    expect(await a.le(2).toArray()).toEqual([true, true, false]);
    expect(await a.gt(1).toArray()).toEqual([false, true, false]);
    expect(await a.ge(1).toArray()).toEqual([true, true, false]);
    expect(await a.eq(2).toArray()).toEqual([false, true, false]);
    expect(await a.ne(2).toArray()).toEqual([true, false, true]);
    expect(await where(a.gt(1), a, tensor([10, 20, 30])).toArray()).toEqual([10, 2, 30]);
    expect(await Tensor.where(tensor([true, false]), 1, 2).toArray()).toEqual([1, 2]);
  });

  test('bad operands raise named errors', () => {
    const a = zeros([2, 3]);
    expect(() => a.add(zeros([4]))).toThrow(ShapeError);
    expect(() => a.add(zeros([4]))).toThrow(/add: shapes \[2,3\] and \[4\] cannot broadcast/);
    expect(() => a.add('x' as never)).toThrow(
      /add: expected an operand to be a Tensor, a number or a boolean; got the string "x"/,
    );
    expect(() => where(a, a, a)).toThrow(/where: condition has dtype float32; expected bool/);
    expect(() => a.matmul(zeros([4, 5]))).toThrow(/matmul: inner dimensions differ: a \[2,3\] and b \[4,5\]/);
    expect(() => tensor([1], { dtype: 'int32' }).matmul(zeros([1, 1]))).toThrow(DTypeError);
    expect(() => a.reshape(4, 2)).toThrow(/reshape: cannot reshape \[2,3\] \(6 elements\) to \[4,2\]/);
    expect(() => a.sum(2)).toThrow(/sum: axis 2 is out of range/);
    expect(() => tensor([1, 2], { dtype: 'int32' }).requiresGrad_()).toThrow(DTypeError);
  });
});

describe('reductions', () => {
  test('sum, mean, max, min, argmax, argmin, var, std, logsumexp', async () => {
    const x = tensor(
      [
        [1, 5, 3],
        [4, 2, 6],
      ],
      { dtype: 'float32' },
    );
    expect(await x.sum().item()).toBe(21);
    expect(await x.sum(0).toArray()).toEqual([5, 7, 9]);
    expect(await x.sum([0, 1], true).toArray()).toEqual([[21]]);
    expect(await x.mean(1).toArray()).toEqual([3, 4]);
    expect(await x.amax(1).toArray()).toEqual([5, 6]);
    expect(await x.amin(0, true).toArray()).toEqual([[1, 2, 3]]);
    expect(await x.argmax(1).toArray()).toEqual([1, 2]);
    expect(await x.argmin(1, true).toArray()).toEqual([[0], [1]]);
    expect(await x.argmax().item()).toBe(5);
    expect(await tensor([3, 7, 7, 1]).argmax().item()).toBe(1); // first of ties
    expect(await tensor([3, -7, -7, 1]).argmin().item()).toBe(1);
    expect(await tensor([1, NaN, 3]).argmax().item()).toBe(1);
    expect(await tensor([1, 2, 3, 4]).var().item()).toBeCloseTo(5 / 3, 6);
    expect(await tensor([1, 2, 3, 4]).var(0, false, 0).item()).toBeCloseTo(1.25, 6);
    expect(await tensor([1, 2, 3, 4]).std().item()).toBeCloseTo(Math.sqrt(5 / 3), 6);
    expect(await tensor([1000, 1000]).logsumexp().item()).toBeCloseTo(1000 + Math.log(2), 3);
    expect(await tensor([-Infinity, -Infinity]).logsumexp().item()).toBe(-Infinity);
    expect(await tensor([true, true, false]).sum().item()).toBe(2);
    expect(
      await tensor([
        [1, 2],
        [3, 4],
      ])
        .mean()
        .item(),
    ).toBe(2.5);
  });

  test('softmax and logSoftmax are stable for large logits', async () => {
    const x = tensor([
      [1000, 1001, 1002],
      [-1000, -1001, -1002],
    ]);
    const e = [1, Math.E, Math.E ** 2];
    const z = e[0] + e[1] + e[2];
    const s = (await x.softmax(1).data()) as Float32Array;
    [e[0] / z, e[1] / z, e[2] / z, e[2] / z, e[1] / z, e[0] / z].forEach((v, i) => expect(s[i]).toBeCloseTo(v, 6));
    const l = (await x.logSoftmax(1).data()) as Float32Array;
    expect(l[2]).toBeCloseTo(2 - Math.log(z), 4);
    expect(Array.from(l).every(Number.isFinite)).toBe(true);
  });
});

describe('shape ops', () => {
  test('views and joins', async () => {
    const x = arange(6).reshape(2, 3);
    expect(await x.T.toArray()).toEqual([
      [0, 3],
      [1, 4],
      [2, 5],
    ]);
    expect(await x.permute(1, 0).reshape(-1).toArray()).toEqual([0, 3, 1, 4, 2, 5]);
    expect(await x.flip(1).toArray()).toEqual([
      [2, 1, 0],
      [5, 4, 3],
    ]);
    expect(await x.narrow(1, 1, 2).toArray()).toEqual([
      [1, 2],
      [4, 5],
    ]);
    expect(await x.pad([1, 0, 0, 1]).toArray()).toEqual([
      [0, 0, 1, 2],
      [0, 3, 4, 5],
      [0, 0, 0, 0],
    ]);
    expect(x.unsqueeze(1).shape).toEqual([2, 1, 3]);
    expect(x.unsqueeze(-1).shape).toEqual([2, 3, 1]);
    expect(zeros([1, 2, 1]).squeeze().shape).toEqual([2]);
    expect(zeros([1, 2, 1]).squeeze(0).shape).toEqual([2, 1]);
    expect(zeros([2, 3, 4]).flatten(1).shape).toEqual([2, 12]);
    expect(await tensor([1, 2]).expand(2, -1).toArray()).toEqual([
      [1, 2],
      [1, 2],
    ]);
    expect(await cat([x, tensor([[9, 9, 9]])], 0).toArray()).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [9, 9, 9],
    ]);
    expect(await cat([tensor([true]), tensor([false])]).toArray()).toEqual([true, false]);
    expect(await cat([tensor([1]), tensor([0.5])]).toArray()).toEqual([1, 0.5]);
    expect(await stack([tensor([1, 2]), tensor([3, 4])], 1).toArray()).toEqual([
      [1, 3],
      [2, 4],
    ]);
    expect(await x.indexSelect(0, tensor([1, 1, 0], { dtype: 'int32' })).toArray()).toEqual([
      [3, 4, 5],
      [3, 4, 5],
      [0, 1, 2],
    ]);
    expect(await x.indexSelect(1, [2, 0]).toArray()).toEqual([
      [2, 0],
      [5, 3],
    ]);
    expect(() => x.indexSelect(0, [2])).toThrow(/indexSelect: index 2 is out of range for dim 0 of size 2/);
    expect(() => cat([x, zeros([2, 2])], 0)).toThrow(/cat: shapes \[2,3\], \[2,2\] differ outside dim 0/);
    expect(() => x.narrow(1, 2, 2)).toThrow(ShapeError);
  });

  test('matmul shapes follow torch.matmul', async () => {
    const a = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { dtype: 'float32' },
    );
    const v = tensor([1, 1], { dtype: 'float32' });
    expect(await a.matmul(a).toArray()).toEqual([
      [7, 10],
      [15, 22],
    ]);
    expect(await a.matmul(v).toArray()).toEqual([3, 7]);
    expect(await v.matmul(a).toArray()).toEqual([4, 6]);
    expect(await v.dot(v).item()).toBe(2);
    expect(zeros([5, 2, 3]).matmul(zeros([3, 4])).shape).toEqual([5, 2, 4]);
    expect(zeros([3]).matmul(zeros([5, 3, 4])).shape).toEqual([5, 4]);
    expect(() => v.dot(zeros([3]))).toThrow(/dot: got shapes \[2\] and \[3\]/);
  });
});

test('a disposed tensor raises DisposedError naming the op', async () => {
  const a = ones([2, 2]);
  a.dispose();
  a.dispose(); // idempotent
  expect(a.isDisposed).toBe(true);
  expect(() => a.add(1)).toThrow(DisposedError);
  expect(() => a.add(1)).toThrow(/add: a tensor of shape \[2,2\] \(float32\) was used after dispose\(\)/);
  await expect(a.data()).rejects.toThrow(DisposedError);
  expect(() => a.ndarray).toThrow(DisposedError);
});
