import { DisposedError, NDArray, ShapeError, ValueError } from '@surf/core';
import { Tensor, isGradEnabled, noGrad, enableGrad, ones, tensor, tidy, zeros } from '@surf/autograd';

const grad = async (t: Tensor) => t.grad!.toArray();

describe('backward', () => {
  test("micrograd's sanity expression: y = -20, dy/dx = 46", async () => {
    const x = tensor(-4, { requiresGrad: true });
    const z = x.mul(2).add(2).add(x);
    const q = z.relu().add(z.mul(x));
    const h = z.mul(z).relu();
    const y = h.add(q).add(q.mul(x));
    y.backward();
    expect(await y.item()).toBe(-20);
    expect(await x.grad!.item()).toBe(46);
  });

  test('gradients accumulate across backward calls and are undone by grad = null', async () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    x.mul(x).sum().backward();
    x.mul(3).sum().backward();
    expect(await grad(x)).toEqual([5, 7, 9]); // 2x + 3
    const g = x.grad!;
    x.grad = null;
    expect(g.isDisposed).toBe(true);
    x.sum().backward();
    expect(await grad(x)).toEqual([1, 1, 1]);
  });

  test('broadcasting is undone by summing', async () => {
    const a = tensor(
      [
        [1, 2, 3],
        [4, 5, 6],
      ],
      { requiresGrad: true },
    );
    const b = tensor([10, 20, 30], { requiresGrad: true });
    const c = tensor([[2], [3]], { requiresGrad: true });
    a.mul(b).add(c).sum().backward();
    expect(await grad(a)).toEqual([
      [10, 20, 30],
      [10, 20, 30],
    ]);
    expect(await grad(b)).toEqual([5, 7, 9]);
    expect(await grad(c)).toEqual([[3], [3]]); // each broadcast over 3 columns
  });

  test('non-scalar backward takes the vector of the vector-Jacobian product', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const y = x.mul(x);
    expect(() => y.backward()).toThrow(ShapeError);
    y.backward(tensor([1, 10]));
    expect(await grad(x)).toEqual([2, 40]);
    expect(() => x.mul(2).backward(tensor([1, 2, 3]))).toThrow(
      /backward: gradient has shape \[3\]; expected the tensor's shape \[2\]/,
    );
  });

  test('only leaves keep .grad; intermediate gradients are freed', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const y = x.exp();
    y.sum().backward();
    expect(y.isLeaf).toBe(false);
    expect(y.grad).toBeNull();
    expect(x.isLeaf).toBe(true);
  });

  test('the graph is freed after backward unless retainGraph', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const y = x.sigmoid().sum();
    y.backward(undefined, { retainGraph: true });
    y.backward();
    const s = 1 / (1 + Math.exp(-1));
    expect(((await grad(x)) as number[])[0]).toBeCloseTo(2 * s * (1 - s), 6);
    expect(() => y.backward()).toThrow(DisposedError);
  });

  test('max gradient is split among ties, also for 3-way ties', async () => {
    const x = tensor(
      [
        [4, 4, 4, 1],
        [0, 2, 1, 2],
      ],
      { requiresGrad: true },
    );
    x.amax(1).sum().backward();
    const g = (await grad(x)) as number[][];
    expect(g[0].map((v) => +v.toFixed(6))).toEqual([0.333333, 0.333333, 0.333333, 0]);
    expect(g[1]).toEqual([0, 0.5, 0, 0.5]);
    const y = tensor([3, 3], { requiresGrad: true });
    y.min().backward();
    expect(await grad(y)).toEqual([0.5, 0.5]);
    const z = tensor([2, 5], { requiresGrad: true });
    z.maximum(tensor([2, 1]))
      .sum()
      .backward();
    expect(await grad(z)).toEqual([0.5, 1]);
  });

  test('pow: gradients at base 0 and negative bases', async () => {
    const x = tensor([0, -3, -0.5], { requiresGrad: true });
    x.pow(2).sum().backward();
    expect(await grad(x)).toEqual([0, -6, -1]);
    const y = tensor([0, 2], { requiresGrad: true });
    y.pow(0).sum().backward();
    expect(await grad(y)).toEqual([0, 0]);
    const b = tensor([0, 2], { requiresGrad: true });
    const e = tensor([2, 3], { requiresGrad: true });
    b.pow(e).sum().backward();
    expect(await grad(b)).toEqual([0, 12]);
    expect(((await grad(e)) as number[])[0]).toBe(0); // d/de 0^e at base 0: 0 (PyTorch's convention)
    expect(((await grad(e)) as number[])[1]).toBeCloseTo(8 * Math.log(2), 5);
  });

  test('sqrt and log at 0 give infinite gradients, not NaN', async () => {
    const x = tensor([0, 4], { requiresGrad: true });
    x.sqrt().sum().backward();
    expect(await grad(x)).toEqual([Infinity, 0.25]);
    const y = tensor([0], { requiresGrad: true });
    y.log().sum().backward();
    expect(await grad(y)).toEqual([Infinity]);
  });

  test('indexSelect backward scatter-adds repeated rows', async () => {
    const w = tensor(
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      { requiresGrad: true },
    );
    w.indexSelect(0, tensor([2, 0, 2], { dtype: 'int32' }))
      .mul(
        tensor([
          [1, 1],
          [10, 10],
          [100, 100],
        ]),
      )
      .sum()
      .backward();
    expect(await grad(w)).toEqual([
      [10, 10],
      [0, 0],
      [101, 101],
    ]);
  });

  test('cat and shape ops route gradients back to each input', async () => {
    const a = tensor([[1, 2]], { requiresGrad: true });
    const b = tensor(
      [
        [3, 4],
        [5, 6],
      ],
      { requiresGrad: true },
    );
    const c = Tensor.cat([a, b.T], 0); // [[1,2],[3,5],[4,6]]
    c.mul(tensor([[1], [2], [3]]))
      .sum()
      .backward();
    expect(await grad(a)).toEqual([[1, 1]]);
    expect(await grad(b)).toEqual([
      [2, 3],
      [2, 3],
    ]);
  });

  test('backward errors', () => {
    expect(() => tensor([1, 2]).sum().backward()).toThrow(/backward: the tensor of shape \[\] does not require grad/);
    const x = tensor([1.5], { requiresGrad: true });
    const y = x.mul(2);
    expect(() => y.requiresGrad_(false)).toThrow(ValueError);
  });
});

describe('grad mode', () => {
  test('noGrad records nothing; detach cuts the graph', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const y = noGrad(() => {
      expect(isGradEnabled()).toBe(false);
      expect(enableGrad(() => x.mul(2)).requiresGrad).toBe(true);
      return x.mul(2);
    });
    expect(isGradEnabled()).toBe(true);
    expect(y.requiresGrad).toBe(false);
    const d = x.detach();
    expect(d.requiresGrad).toBe(false);
    expect(await d.toArray()).toEqual([1, 2]);
    x.mul(d).sum().backward();
    expect(await grad(x)).toEqual([1, 2]);
    expect(() => noGrad(() => Promise.resolve(1))).toThrow(/noGrad is synchronous/);
  });

  test('requiresGrad_ turns a leaf into a parameter', async () => {
    const w = ones([2]).requiresGrad_();
    w.mul(3).sum().backward();
    expect(await grad(w)).toEqual([3, 3]);
  });
});

describe('interop for @surf/nn', () => {
  test('fromNDArray, ndarray and assign', async () => {
    const p = tensor([1, 2], { requiresGrad: true });
    p.mul(p).sum().backward();
    // An optimizer step: a fused update on NDArrays, written back without a graph.
    const upd = NDArray.elementwise(
      [
        {
          kind: 'binary',
          op: 'sub',
          a: { kind: 'input', index: 0 },
          b: {
            kind: 'binary',
            op: 'mul',
            a: { kind: 'const', value: 0.5, dtype: 'float32' },
            b: { kind: 'input', index: 1 },
          },
        },
      ],
      [p.ndarray, p.grad!.ndarray],
    )[0];
    p.assign(upd);
    upd.dispose();
    expect(await p.toArray()).toEqual([0, 0]);
    expect(p.requiresGrad).toBe(true);
    expect(p.isLeaf).toBe(true);
    const q = Tensor.fromNDArray(NDArray.fromData(p.ndarray.backend, [3, 4], [2]), { requiresGrad: true });
    expect(q.requiresGrad).toBe(true);
    expect(() => p.assign(zeros([3]))).toThrow(/assign: got shape \[3\]; expected this tensor's shape \[2\]/);
    p.assign(tensor([7, 8], { dtype: 'int32' }));
    expect(p.dtype).toBe('float32');
    expect(await p.toArray()).toEqual([7, 8]);
  });

  test('a loss returned from tidy can still be backpropagated', async () => {
    const w = tensor([1, 2, 3], { requiresGrad: true });
    const loss = tidy(() => w.mul(w).exp().log().sum());
    loss.backward();
    expect(await grad(w)).toEqual([2, 4, 6]);
    loss.dispose();
  });
});
