import { CpuBackend, ValueError } from '@surf/core';
import { Backend } from '@surf/core';
import { manualSeed, multinomial, setBackend, tensor } from '@surf/autograd';
import { describeGpu, gpuBackend } from './gpu';

// multinomial against its distribution (seeded, so the counts below are fixed numbers, not
// flaky), and the same draws on CPU and WebGPU for the same seed.

async function counts(t: ReturnType<typeof multinomial>, C: number): Promise<number[]> {
  const c = new Array<number>(C).fill(0);
  for (const v of await t.data()) c[v]++;
  return c;
}

describe('multinomial', () => {
  test('with replacement: frequencies follow the (unnormalised) weights', async () => {
    manualSeed(1);
    const n = 4000;
    const s = multinomial(tensor([1, 2, 0, 7]).float(), n, { replacement: true });
    expect([s.shape, s.dtype]).toEqual([[n], 'int32']);
    const c = await counts(s, 4);
    expect(c[2]).toBe(0);
    [0.1, 0.2, 0, 0.7].forEach((p, k) => expect(Math.abs(c[k] / n - p)).toBeLessThan(0.03));
  });

  test('without replacement: distinct draws, zero weights never drawn, first draw follows the weights', async () => {
    manualSeed(2);
    const rows = 2000;
    const w = tensor([[0.5, 0.3, 0.2, 0]])
      .expand(rows, 4)
      .contiguous();
    const s = multinomial(w, 3);
    const d = await s.data();
    const first = [0, 0, 0, 0];
    for (let r = 0; r < rows; r++) {
      const row = Array.from(d.slice(r * 3, r * 3 + 3)).sort();
      expect(row).toEqual([0, 1, 2]);
      first[d[r * 3]]++;
    }
    [0.5, 0.3, 0.2].forEach((p, k) => expect(Math.abs(first[k] / rows - p)).toBeLessThan(0.04));
  });

  test('manualSeed makes draws repeat; bad arguments are clear errors', async () => {
    const p = tensor([0.2, 0.3, 0.5]);
    manualSeed(7);
    const a = await multinomial(p, 20, { replacement: true }).data();
    manualSeed(7);
    const b = await multinomial(p, 20, { replacement: true }).data();
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(() => multinomial(p, 4)).toThrow(/without replacement from 3 categories/);
    expect(() => multinomial(p, 0)).toThrow(ValueError);
    expect(() => multinomial(tensor([1, 2], { dtype: 'int32' }), 1)).toThrow(/dtype int32/);
    expect(() => multinomial(p, 1, 5 as never)).toThrow(
      /the options argument must be an object like \{ replacement \}/,
    );
  });
});

describeGpu('CPU and WebGPU agree', () => {
  let gpu: Backend;
  beforeAll(async () => {
    gpu = await gpuBackend();
  });
  afterAll(() => gpu?.destroy());

  test('multinomial draws and topk of the same data', async () => {
    const run = async (b: Backend) => {
      const prev = setBackend(b);
      try {
        manualSeed(3);
        const p = tensor([
          [0.1, 0.4, 0.2, 0.3, 0],
          [1, 1, 1, 1, 1],
        ]);
        const a = multinomial(p, 50, { replacement: true });
        const w = multinomial(p.index(0), 4);
        const t = tensor([3, -1, 7, 7, 0.5, -2, 9, 7]).topk(5);
        return [await a.toArray(), await w.toArray(), await t.values.toArray(), await t.indices.toArray()];
      } finally {
        setBackend(prev);
      }
    };
    expect(await run(gpu)).toEqual(await run(new CpuBackend()));
  });
});
