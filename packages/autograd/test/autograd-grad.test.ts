import { Backend, CpuBackend, DisposedError, ShapeError, ValueError } from '@surf/core';
import { Tensor, grad, setBackend, tensor } from '@surf/autograd';
import { describeEach, gpuBackend } from './gpu';

// autograd's grad() (torch.autograd.grad), tensor hooks (register_hook) and retainGrad on
// both backends. Expected gradients are worked out by hand in the comments.

const vals = async (t: Tensor | null) => Array.from(await t!.data());
const near = async (t: Tensor | null, want: number[]) => {
  const got = await vals(t);
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThan(1e-5));
};

describeEach(['cpu', 'webgpu'] as const, 'grad, hooks and retainGrad on %s', (kind) => {
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

  test('grad returns d(sum x·w)/dx = w and d/dw = x without touching .grad', async () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const w = tensor([0.5, -1, 4], { requiresGrad: true });
    const [gx, gw] = grad(x.mul(w).sum(), [x, w]);
    await near(gx, [0.5, -1, 4]);
    await near(gw, [1, 2, 3]);
    expect(x.grad).toBeNull();
    expect(w.grad).toBeNull();
  });

  test('grad with respect to an intermediate tensor, and gradOutputs for several outputs', async () => {
    const x = tensor([1, -2], { requiresGrad: true });
    const h = x.mul(3); // h = [3, -6]
    const y1 = h.square(); // dy1/dh = 2h = [6, -12]
    const y2 = h.mul(x); // = 3x², dy2/dh = x = [1, -2], dy2/dx (direct) = h = [3, -6]
    const [gh, gx] = grad([y1, y2], [h, x], { gradOutputs: [tensor([1, 1]), tensor([2, 0.5])] });
    // dL/dh = 1·[6, -12] + [2, 0.5]·x = [6 + 2, -12 - 1] = [8, -13]
    await near(gh, [8, -13]);
    // dL/dx = 3·dL/dh + [2, 0.5]·h = [24 + 6, -39 - 3] = [30, -42]
    await near(gx, [30, -42]);
  });

  test('retainGraph keeps the graph for a second call; without it the graph is freed', async () => {
    const x = tensor([2], { requiresGrad: true });
    const y = x.mul(x).sum(); // dy/dx = 2x = 4
    await near(grad(y, x, { retainGraph: true })[0], [4]);
    await near(grad(y, x)[0], [4]);
    expect(() => grad(y, x)).toThrow(DisposedError);
  });

  test('an unused input raises unless allowUnused; createGraph and unknown options are refused', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const z = tensor([1, 2], { requiresGrad: true });
    expect(() => grad(x.sum(), [x, z])).toThrow(/inputs\[1\] is not used/);
    const [gx, gz] = grad(x.sum(), [x, z], { allowUnused: true });
    await near(gx, [1, 1]);
    expect(gz).toBeNull();
    expect(() => grad(x.sum(), x, { createGraph: true })).toThrow(/createGraph is not supported/);
    expect(() => grad(x.sum(), x, { retain_graph: true } as never)).toThrow(/did you mean 'retainGraph'/);
    expect(() => grad(x.sum(), tensor([1]))).toThrow(ValueError);
    expect(() => grad(x.mul(2), x)).toThrow(ShapeError);
  });

  test('a hook sees the total gradient once and can replace it; remove() unregisters it', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const seen: number[][] = [];
    const handle = x.registerHook((g) => {
      seen.push(Array.from(g.ndarray.shape));
      return g.mul(10);
    });
    // Hooks run in order: the second sees what the first returned.
    const spy = x.registerHook((g) => {
      seen.push(Array.from(g.ndarray.shape));
      expect(g.requiresGrad).toBe(false);
    });
    // x is used twice: y = x·3 + x² -> dy/dx = 3 + 2x = [5, 7]; the first hook makes it [50, 70].
    x.mul(3).add(x.square()).sum().backward();
    await near(x.grad, [50, 70]);
    expect(seen.length).toBe(2);
    handle.remove();
    spy.remove();
    x.grad = null;
    x.mul(3).sum().backward();
    await near(x.grad, [3, 3]);
    expect(seen.length).toBe(2);
  });

  test('a hook on an intermediate tensor changes what flows further back (also past a fused matmul)', async () => {
    const x = tensor([[1, -2]], { requiresGrad: true });
    const w = tensor([[1], [1]], { requiresGrad: true });
    const y = x.relu(); // [1, 0]
    y.registerHook((g) => g.mul(0).add(1)); // every dL/dy becomes 1
    y.matmul(w).sum().backward();
    await near(x.grad, [1, 0]); // relu'(x)·1
    const x2 = tensor([[1, 2]], { requiresGrad: true });
    const w2 = tensor([[3], [5]], { requiresGrad: true });
    const y2 = x2.relu();
    const got: number[][] = [];
    y2.registerHook((g) => {
      got.push([g.shape[0], g.shape[1]]);
      return g.mul(2);
    });
    y2.matmul(w2).sum().backward();
    expect(got).toEqual([[1, 2]]);
    await near(x2.grad, [6, 10]);
  });

  test('hooks and retainGrad on a matmul result that an elementwise op joins (the fusion pass)', async () => {
    const x = tensor([[1, 2]], { requiresGrad: true });
    const w = tensor([[3], [-1]], { requiresGrad: true });
    const h = x.matmul(w); // [[1]]
    h.retainGrad();
    h.registerHook((g) => g.mul(5));
    const y = h.relu().mul(2); // dL/dh = 2 (h > 0), then the hook: 10
    y.sum().backward();
    await near(h.grad, [10]);
    await near(x.grad, [30, -10]); // 10·w^T
    await near(w.grad, [10, 20]); // x^T·10
  });

  test('a hook runs in grad() too, and a hook returning the wrong shape raises', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const h = x.mul(2);
    h.registerHook((g) => g.add(1));
    // dL/dh = 1 -> hook -> 2; dL/dx = 2·2 = 4
    await near(grad(h.sum(), x)[0], [4, 4]);
    const x3 = tensor([1, 2], { requiresGrad: true });
    x3.registerHook(() => tensor([1, 2, 3]));
    expect(() => x3.sum().backward()).toThrow(/hook returned shape \[3\]/);
    expect(() => tensor([1, 2]).registerHook(() => undefined)).toThrow(/does not require grad/);
  });

  test('retainGrad keeps a non-leaf gradient, accumulating over backward calls', async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    const h = x.mul(x); // dL/dh = 3 for L = sum(3h)
    expect(h.retainGrad()).toBe(h);
    expect(h.retainsGrad).toBe(true);
    const l = h.mul(3).sum();
    l.backward(undefined, { retainGraph: true });
    await near(h.grad, [3, 3]);
    await near(x.grad, [6, 12]); // 3·2x
    l.backward();
    await near(h.grad, [6, 6]);
    const plain = x.mul(2);
    plain.sum().backward();
    expect(plain.grad).toBeNull();
    // grad() touches no .grad, retained ones included.
    const k = x.mul(5).retainGrad();
    await near(grad(k.sum(), x)[0], [5, 5]);
    expect(k.grad).toBeNull();
    expect(x.retainGrad()).toBe(x); // a no-op on a leaf
    expect(x.retainsGrad).toBe(false);
  });
});
