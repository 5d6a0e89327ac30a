import { ShapeError, ValueError, gradcheck, manualSeed, nn, tensor } from '@surf/nn';
import type { Backend } from '@surf/core';
import { backends, functional, on, testEach, testGpu } from '../helpers';

// nn.MultiheadAttention against a per-head loop written here from the module's own parameter
// values (projections, masks, softmax, output projection), on the CPU and on WebGPU; its
// gradients by finite differences; PyTorch's state-dict names.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

type M = number[][];
const mm = (x: M, wT: M, bias: number[] | null): M =>
  x.map((r) => wT.map((w, o) => r.reduce((a, v, i) => a + v * w[i], bias ? bias[o] : 0)));
const rows = (flat: ArrayLike<number>, n: number, c: number): M =>
  Array.from({ length: n }, (_, i) => Array.from({ length: c }, (_, j) => flat[i * c + j]));

/** The module's formula for one batch element, with `hidden(i, j)` true where key j is masked. */
function reference(
  p: Record<string, Float32Array>,
  E: number,
  H: number,
  xq: M,
  xk: M,
  xv: M,
  hidden: (i: number, j: number) => boolean,
): M {
  const W = rows(p.in_proj_weight, 3 * E, E);
  const B = Array.from(p.in_proj_bias);
  const q = mm(xq, W.slice(0, E), B.slice(0, E)),
    k = mm(xk, W.slice(E, 2 * E), B.slice(E, 2 * E)),
    v = mm(xv, W.slice(2 * E), B.slice(2 * E));
  const Dh = E / H;
  const cat = q.map(() => new Array<number>(E).fill(0));
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < q.length; i++) {
      const s = k.map((kr, j) =>
        hidden(i, j)
          ? -Infinity
          : kr.slice(h * Dh, (h + 1) * Dh).reduce((a, kv, d) => a + kv * q[i][h * Dh + d], 0) / Math.sqrt(Dh),
      );
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, c) => a + c, 0);
      for (let d = 0; d < Dh; d++) cat[i][h * Dh + d] = e.reduce((a, w, j) => a + (w / z) * v[j][h * Dh + d], 0);
    }
  }
  return mm(cat, rows(p['out_proj.weight'], E, E), Array.from(p['out_proj.bias']));
}

async function params(m: nn.MultiheadAttention): Promise<Record<string, Float32Array>> {
  const out: Record<string, Float32Array> = {};
  for (const [k, t] of Object.entries(m.stateDict())) out[k] = (await t.data()) as Float32Array;
  return out;
}

const seq = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 1.7 + seed) * 0.9);

async function checkForward(backend: Backend): Promise<void> {
  await on(backend, async () => {
    const E = 4,
      H = 2,
      N = 2,
      L = 3,
      S = 5;
    manualSeed(3);
    const m = new nn.MultiheadAttention(E, H, { batchFirst: true });
    nn.init.normal(m.in_proj_bias!, 0, 0.3);
    nn.init.normal(m.out_proj.bias!, 0, 0.3);
    const p = await params(m);
    const xq = tensor(seq(N * L * E, 1)).reshape([N, L, E]);
    const xk = tensor(seq(N * S * E, 2)).reshape([N, S, E]);
    const xv = tensor(seq(N * S * E, 3)).reshape([N, S, E]);
    const pad = [
      [false, false, false, true, true],
      [false, false, false, false, false],
    ];
    const am = [
      [false, true, false, false, false],
      [false, false, false, false, false],
      [true, false, false, false, false],
    ];
    const y = m.forward(xq, xk, xv, { keyPaddingMask: tensor(pad), attnMask: tensor(am) });
    expect(y.shape).toEqual([N, L, E]);
    const got = await y.data();
    const [dq, dk, dv] = [await xq.data(), await xk.data(), await xv.data()];
    for (let n = 0; n < N; n++) {
      const want = reference(
        p,
        E,
        H,
        rows(dq.subarray(n * L * E), L, E),
        rows(dk.subarray(n * S * E), S, E),
        rows(dv.subarray(n * S * E), S, E),
        (i, j) => pad[n][j] || am[i][j],
      );
      want.flat().forEach((w, i) => expect(Math.abs(got[n * L * E + i] - w)).toBeLessThan(1e-5 + 1e-4 * Math.abs(w)));
    }
    // Causal self-attention, batchFirst false ([L, N, E]) is the transpose of batchFirst true.
    const x = tensor(seq(N * L * E, 4)).reshape([N, L, E]);
    const yb = await m.forward(x, undefined, undefined, { isCausal: true }).data();
    const xs = (await x.data()) as Float32Array;
    for (let n = 0; n < N; n++) {
      const r = rows(xs.subarray(n * L * E), L, E);
      const want = reference(p, E, H, r, r, r, (i, j) => j > i);
      want.flat().forEach((w, i) => expect(Math.abs(yb[n * L * E + i] - w)).toBeLessThan(1e-5 + 1e-4 * Math.abs(w)));
    }
    const mT = new nn.MultiheadAttention(E, H, { batchFirst: false });
    mT.loadStateDict(m.stateDict());
    const yt = await mT.forward(x.transpose(0, 1), undefined, undefined, { isCausal: true }).transpose(0, 1).data();
    Array.from(yt).forEach((v, i) => expect(v).toBeCloseTo(yb[i], 5));
  });
}

describe('nn.MultiheadAttention', () => {
  test('state dict uses PyTorch names and shapes', () => {
    const m = new nn.MultiheadAttention(6, 3);
    const sd = m.stateDict();
    expect(Object.keys(sd).sort()).toEqual(['in_proj_bias', 'in_proj_weight', 'out_proj.bias', 'out_proj.weight']);
    expect(sd.in_proj_weight.shape).toEqual([18, 6]);
    expect(sd['out_proj.weight'].shape).toEqual([6, 6]);
    expect(Object.keys(new nn.MultiheadAttention(6, 3, { bias: false }).stateDict()).sort()).toEqual([
      'in_proj_weight',
      'out_proj.weight',
    ]);
  });

  test('forward matches a per-head loop on the CPU', async () => {
    await checkForward(b.cpu);
  });

  testGpu('forward matches a per-head loop on WebGPU', async () => {
    const gpu = b.gpu();
    await checkForward(gpu);
  });

  test('gradients (input and parameters) by finite differences', async () => {
    await on(b.cpu, async () => {
      manualSeed(5);
      const m = new nn.MultiheadAttention(4, 2);
      const x = tensor(seq(2 * 3 * 4, 7), { requiresGrad: true })
        .reshape([2, 3, 4])
        .detach()
        .requiresGrad_();
      const r = await gradcheck(functional(m), [x, ...m.parameters()]);
      expect(r.ok).toBe(true);
    });
  });

  testEach(['cpu', 'webgpu'], "batchFirst defaults to false, PyTorch's [L, N, E]", async (kind) => {
    await on(kind === 'cpu' ? b.cpu : b.gpu(), async () => {
      manualSeed(9);
      const d = new nn.MultiheadAttention(4, 2);
      expect(d.batchFirst).toBe(false);
      expect(String(d)).toContain('batchFirst=false');
      const t = new nn.MultiheadAttention(4, 2, { batchFirst: true });
      t.loadStateDict(d.stateDict());
      // [L=3, N=2, E=4]: the default reads dim 0 as the sequence.
      const x = tensor(seq(3 * 2 * 4, 5)).reshape([3, 2, 4]);
      const got = await d.forward(x, undefined, undefined, { isCausal: true }).data();
      const want = await t.forward(x.transpose(0, 1), undefined, undefined, { isCausal: true }).transpose(0, 1).data();
      Array.from(got).forEach((v, i) => expect(v).toBeCloseTo(want[i], 5));
      // The batch-first reading of the same tensor differs (causal over 2 rows, not 3).
      const other = await t.forward(x, undefined, undefined, { isCausal: true }).data();
      expect(Array.from(other).some((v, i) => Math.abs(v - got[i]) > 1e-3)).toBe(true);
    });
  });

  test('clear errors for heads and shapes', () => {
    expect(() => new nn.MultiheadAttention(6, 4)).toThrow(ValueError);
    expect(() => new nn.MultiheadAttention(6, 4)).toThrow(/not divisible by numHeads/);
    const m = new nn.MultiheadAttention(4, 2, { batchFirst: true });
    expect(() => m.forward(tensor(seq(2 * 3 * 5, 1)).reshape([2, 3, 5]))).toThrow(ShapeError);
    const x = tensor(seq(2 * 3 * 4, 1)).reshape([2, 3, 4]);
    expect(() => m.forward(x, tensor(seq(3 * 2 * 4, 1)).reshape([3, 2, 4]))).toThrow(/disagree on the batch size/);
    expect(() => m.forward(x, undefined, undefined, { attnMask: tensor([[true, false]]) })).toThrow(
      /attnMask has shape \[1,2\]; expected \[3,3\]/,
    );
  });
});
