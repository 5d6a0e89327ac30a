import { Backend, CpuBackend, NDArray } from '@surf/core';
import {
  Tensor,
  allclose,
  diag,
  diagonal,
  einsum,
  isclose,
  lerp,
  logicalAnd,
  meshgrid,
  nanToNum,
  outer,
  roll,
  setBackend,
  unique,
} from '@surf/autograd';
import { describeEach, gpuBackend } from './gpu';
import fixtures from './fixtures/ops.json';

// The tensor ops against PyTorch: fixtures written by scripts/interop/make-ops-fixtures.py
// (inputs, PyTorch's outputs, and its gradients of sum(out * cot)), on every backend.

type Enc = number | string;
interface Packed {
  shape: number[];
  dtype: 'float32' | 'int32' | 'bool';
  data: Enc[];
  requiresGrad?: boolean;
}
interface Case {
  name: string;
  inputs: Packed[];
  outputs: Packed[];
  cots?: Packed[];
  grads?: (Packed | null)[];
}

const dec = (v: Enc): number => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : (v as number));

type Out = Tensor | Tensor[];
const CALLS: Record<string, (...x: Tensor[]) => Out | Promise<Out>> = {
  isnan: (x) => x.isnan(),
  isinf: (x) => x.isinf(),
  isfinite: (x) => x.isfinite(),
  'isnan int': (x) => x.isnan(),
  'isfinite int': (x) => x.isfinite(),
  'nanToNum defaults': (x) => x.nanToNum(),
  'nanToNum options': (x) => nanToNum(x, { nan: 1.5, posinf: 2, neginf: -3 }),
  'isclose defaults': (a, b) => isclose(a, b),
  'isclose rtol atol': (a, b) => a.isclose(b, { rtol: 1e-2, atol: 1e-4 }),
  'isclose equalNan': (a, b) => isclose(a, b, { equalNan: true }),
  'cumprod dim 1 with zeros': (x) => x.cumprod(1),
  'cumprod dim 0': (x) => x.cumprod(0),
  'cumprod int': (x) => x.cumprod(0),
  'roll dim 1': (x) => x.roll(1, 1),
  'roll two dims': (x) => roll(x, [2, -1], [0, 1]),
  'roll flat': (x) => x.roll(3),
  'roll negative large': (x) => x.roll(-7, 0),
  'diag vector offset 1': (x) => x.diag(1),
  'diag vector offset -2': (x) => diag(x, -2),
  'diag matrix': (x) => x.diag(),
  'diag matrix offset 1': (x) => x.diag(1),
  'diag matrix offset -1': (x) => diag(x, -1),
  'diagonal 3-d dims 1 2 offset 1': (x) => x.diagonal(1, 1, 2),
  'diagonal offset -1 dims 2 0': (x) => diagonal(x, -1, 2, 0),
  outer: (a, b) => outer(a, b),
  'meshgrid ij': (a, b, c) => meshgrid([a, b, c], { indexing: 'ij' }),
  'meshgrid xy': (a, b) => meshgrid([a, b], { indexing: 'xy' }),
  square: (x) => x.square(),
  'square int': (x) => x.square(),
  'lerp scalar weight': (s, e) => s.lerp(e, 0.3),
  'lerp tensor weight': (s, e, w) => lerp(s, e, w),
  logicalAnd: (a, b) => a.logicalAnd(b),
  logicalOr: (a, b) => a.logicalOr(b),
  logicalXor: (a, b) => a.logicalXor(b),
  logicalNot: (a) => a.logicalNot(),
  'logicalAnd int bool': (a, b) => logicalAnd(a, b),
  'max dim 1': (x) => {
    const r = x.max(1);
    return [r.values, r.indices];
  },
  'max dim 0 keepdim': (x) => {
    const r = x.max(0, true);
    return [r.values, r.indices];
  },
  'min dim 1': (x) => {
    const r = x.min(1);
    return [r.values, r.indices];
  },
  'min dim -1 keepdim': (x) => {
    const r = x.min(-1, true);
    return [r.values, r.indices];
  },
  'amax dims': (x) => x.amax([0, 2]),
  'amin dim': (x) => x.amin(1, true),
  'einsum matmul': (a, b) => einsum('ij,jk->ik', a, b),
  'einsum batched': (a, b) => einsum('bij,bjk->bik', a, b),
  'einsum trace': (a) => einsum('ii', a),
  'einsum diagonal': (a) => einsum('ii->i', a),
  'einsum sum all': (a) => einsum('ij->', a),
  'einsum outer': (a, b) => einsum('i,j->ij', a, b),
  'einsum dot': (a, b) => einsum('i,i->', [a, b]),
  'einsum hadamard': (a, b) => einsum('ij,ij->ij', a, b),
  'einsum transpose': (a) => einsum('ij->ji', a),
  'einsum implicit': (a, b) => einsum('ij,jk', a, b),
  'einsum implicit transpose': (a) => einsum('ba', a),
  'einsum attention scores': (q, k) => einsum('bhqd,bhkd->bhqk', q, k),
  'einsum contract two': (a, b) => einsum('ijk,ikl->jl', a, b),
  'einsum ellipsis broadcast': (a, b) => einsum('...ij,...jk->...ik', a, b),
  'einsum ellipsis middle': (a) => einsum('i...j->j...i', a),
  'einsum three operands': (a, b, c) => einsum('ij,jk,kl->il', a, b, c),
  'einsum repeated with other': (a, b) => einsum('iij,j->i', a, b),
  'einsum bilinear': (x, w, y) => einsum('bi,oij,bj->bo', x, w, y),
  unique: async (x) => {
    const r = await x.unique({ returnInverse: true, returnCounts: true });
    return [r.values, r.inverse!, r.counts!];
  },
  'unique int': async (x) => {
    const r = await unique(x, { returnInverse: true, returnCounts: true });
    return [r.values, r.inverse!, r.counts!];
  },
};

const cases = (fixtures as { cases: Case[] }).cases;

async function expectClose(got: Tensor | null, want: Packed, what: string, rtol = 1e-5, atol = 1e-5): Promise<void> {
  expect([what, got?.shape]).toEqual([what, want.shape]);
  expect([what, got!.dtype]).toEqual([what, want.dtype]);
  const g = Array.from(await got!.data());
  const w = want.data.map(dec);
  const bad = w
    .map((wv, i) => {
      const gv = g[i];
      const ok = Number.isNaN(wv)
        ? Number.isNaN(gv)
        : !Number.isFinite(wv)
          ? gv === wv
          : Math.abs(gv - wv) <= atol + rtol * Math.abs(wv);
      return ok ? null : `${i}: got ${gv}, want ${wv}`;
    })
    .filter((s) => s !== null);
  expect([what, bad]).toEqual([what, []]);
}

const upload = (p: Packed, backend: Backend): Tensor => {
  const data = p.data.map(dec);
  const arr =
    p.dtype === 'float32'
      ? Float32Array.from(data)
      : p.dtype === 'int32'
        ? Int32Array.from(data)
        : Uint8Array.from(data);
  return Tensor.fromNDArray(NDArray.fromData(backend, arr, p.shape, p.dtype), { requiresGrad: !!p.requiresGrad });
};

describeEach(['cpu', 'webgpu'] as const, 'tensor ops against PyTorch on %s', (kind) => {
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

  test('every fixture case has a Surf call', () => {
    expect(cases.map((c) => c.name).filter((n) => !CALLS[n])).toEqual([]);
  });

  test.each(cases.map((c) => [c.name, c] as const))('%s', async (name, c) => {
    const xs = c.inputs.map((p) => upload(p, backend));
    const r = await CALLS[name](...xs);
    const outs = Array.isArray(r) ? r : [r];
    expect(outs.length).toBe(c.outputs.length);
    for (let k = 0; k < outs.length; k++) await expectClose(outs[k], c.outputs[k], `${name} output ${k}`);
    if (c.grads && c.cots) {
      let total: Tensor | null = null;
      outs.forEach((o, k) => {
        if (!o.requiresGrad) return;
        const term = o.mul(upload(c.cots![k], backend)).sum();
        total = total ? total.add(term) : term;
      });
      (total as unknown as Tensor).backward();
      for (let i = 0; i < xs.length; i++) {
        const want = c.grads[i];
        if (want) await expectClose(xs[i].grad, want, `${name} grad ${i}`);
      }
    }
  });

  test('allclose reads one boolean back', async () => {
    const a = upload({ shape: [3], dtype: 'float32', data: [1, 2, 3] }, backend);
    expect(await allclose(a, a.add(1e-7))).toBe(true);
    expect(await a.allclose(a.add(1e-3))).toBe(false);
    expect(await allclose(a, a.add(1e-3), { atol: 1e-2 })).toBe(true);
  });
});
