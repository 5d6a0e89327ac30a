import '@surf/webgpu';
import { inspect } from 'node:util';
import { Backend, CpuBackend } from '@surf/core';
import { arange, setBackend, tensor, zeros } from '@surf/autograd';
import { gpuAvailable, gpuBackend, testGpu } from './gpu';

// Tensor printing against PyTorch's repr of the same values, the GPU placeholder, the async
// forms that read back, and a guarded toJSON.

const cpu = new CpuBackend();
let gpu: Backend | null = null;
beforeAll(async () => {
  if (gpuAvailable) gpu = await gpuBackend();
});
afterAll(() => gpu?.destroy());

test('String(t) on the CPU prints the values as PyTorch does', () => {
  const prev = setBackend(cpu);
  try {
    expect(String(tensor([1, 2, 3], { dtype: 'float32' }))).toBe('tensor([1., 2., 3.])');
    expect(String(tensor([0.5, -1.25]))).toBe('tensor([ 0.5000, -1.2500])');
    expect(
      String(
        tensor([
          [1.5, 2],
          [3, 4],
        ]),
      ),
    ).toBe('tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]])');
    expect(String(tensor([1e-5, 1]))).toBe('tensor([1.0000e-05, 1.0000e+00])');
    expect(String(tensor([1, 2], { dtype: 'int32' }))).toBe('tensor([1, 2], dtype=int32)');
    expect(String(tensor([1, 2]))).toBe('tensor([1., 2.])');
    expect(String(tensor([true, false]))).toBe('tensor([ true, false], dtype=bool)');
    expect(String(tensor(2.5))).toBe('tensor(2.5000)');
    expect(String(tensor([NaN, 1.5, -Infinity]))).toBe('tensor([   nan, 1.5000,   -inf])');
    const w = tensor([1.5, 2], { requiresGrad: true });
    expect(String(w)).toBe('tensor([1.5000, 2.0000], requiresGrad=true)');
    expect(String(w.mul(2))).toBe('tensor([3., 4.], gradFn=<mul>)');
    // 3-d: blocks separated by a blank line.
    expect(String(arange(8).reshape([2, 2, 2]))).toBe(
      'tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]], dtype=int32)',
    );
    // Over 1,000 elements: the first and last 3 per dim.
    expect(String(arange(2000).float())).toBe('tensor([   0.,    1.,    2.,  ..., 1997., 1998., 1999.])');
    const big = String(zeros([40, 40]));
    expect(big.split('\n')).toHaveLength(7);
    expect(big).toContain('...');
    // Long rows wrap within 80 columns.
    const row = String(arange(30).float().div(7));
    expect(row.split('\n').every((l) => l.length <= 80)).toBe(true);
    expect(row.split('\n').length).toBeGreaterThan(2);
    // console.log goes through util.inspect: values, not internals.
    expect(inspect(tensor([0.25]))).toBe('tensor([0.2500])');
    expect(JSON.stringify(tensor([[1, 2]], { dtype: 'float32' }))).toBe(
      '{"dtype":"float32","shape":[1,2],"data":[[1,2]]}',
    );
    expect(JSON.parse(JSON.stringify(zeros([2000]))).data).toBeUndefined();
    const d = tensor([1.5]);
    d.dispose();
    expect(String(d)).toBe('tensor(<disposed>, shape=[1], dtype=float32)');
  } finally {
    setBackend(prev);
  }
});

testGpu('on WebGPU String(t) says how to read the values; toStringAsync and print read them', async () => {
  const prev = setBackend(gpu!);
  try {
    const t = tensor([[0.5, -1.25]], { requiresGrad: true });
    expect(String(t)).toBe(
      'tensor(<values on the webgpu device: await t.print() or await t.toStringAsync() to read them>, shape=[1,2], dtype=float32, device=webgpu, requiresGrad=true)',
    );
    expect(await t.toStringAsync()).toBe('tensor([[ 0.5000, -1.2500]], requiresGrad=true)');
    const log = jest.spyOn(console, 'log').mockImplementation(() => {});
    await t.print();
    expect(log).toHaveBeenCalledWith('tensor([[ 0.5000, -1.2500]], requiresGrad=true)');
    log.mockRestore();
    expect(JSON.stringify(t)).toBe(
      '{"dtype":"float32","shape":[1,2],"note":"values on the webgpu device; use await t.toArray()"}',
    );
  } finally {
    setBackend(prev);
  }
});
