import { attentionBackwardNd, attentionNd } from '../../attention';
import type { NDArray } from '../../ndarray';
import { OpCase, defineCase, CaseContext } from '../case';
import { Tolerance } from '../compare';
import { randBool, randF32 } from '../inputs';
import { RefArray, refArray, refBroadcastShape, refExpand, refSize } from '../reference';
import { Pair } from './pair';

/**
 * Attention against the plainest possible reference: the full L x S score matrix
 * softmax(scale·QKᵀ + mask)·V in float64 loops, and its gradient by the textbook formulas
 * (dP = dO·Vᵀ, dS = P∘(dP - rowsum(P∘dP))), sharing nothing with the backends' row-wise
 * online-softmax recompute scheme.
 */
interface RefOpts {
  scale: number;
  causal?: boolean;
  mask?: RefArray;
}

interface RefAttention {
  out: RefArray;
  lse: RefArray;
  grads: (gOut: RefArray) => { dq: RefArray; dk: RefArray; dv: RefArray };
}

export function refAttention(q0: RefArray, k0: RefArray, v0: RefArray, o: RefOpts): RefAttention {
  const batch = refBroadcastShape(q0.shape.slice(0, -2), k0.shape.slice(0, -2), v0.shape.slice(0, -2));
  const [L, E] = q0.shape.slice(-2),
    [S] = k0.shape.slice(-2),
    Ev = v0.shape[v0.shape.length - 1];
  const q = refExpand(q0, [...batch, L, E]),
    k = refExpand(k0, [...batch, S, E]),
    v = refExpand(v0, [...batch, S, Ev]);
  const mask = o.mask && refExpand(o.mask, [...batch, L, S]);
  const B = refSize(batch);
  const P = new Float64Array(B * L * S);
  const out = new Float64Array(B * L * Ev),
    lse = new Float64Array(B * L);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < L; i++) {
      const row: number[] = [];
      for (let j = 0; j < S; j++) {
        let s = 0;
        for (let e = 0; e < E; e++) s += q.data[(b * L + i) * E + e] * k.data[(b * S + j) * E + e];
        s *= o.scale;
        const mv = mask ? mask.data[(b * L + i) * S + j] : 0;
        if (mask?.dtype === 'bool') s = mv ? s : -Infinity;
        else s += mv;
        if (o.causal && j > i) s = -Infinity;
        row.push(s);
      }
      const m = Math.max(-Infinity, ...row);
      if (m === -Infinity) {
        lse[b * L + i] = -Infinity;
        continue;
      } // all hidden: out 0
      const ex = row.map((s) => Math.exp(s - m));
      const z = ex.reduce((a, c) => a + c, 0);
      lse[b * L + i] = m + Math.log(z);
      for (let j = 0; j < S; j++) P[(b * L + i) * S + j] = ex[j] / z;
      for (let e = 0; e < Ev; e++) {
        let acc = 0;
        for (let j = 0; j < S; j++) acc += P[(b * L + i) * S + j] * v.data[(b * S + j) * Ev + e];
        out[(b * L + i) * Ev + e] = acc;
      }
    }
  }
  const grads = (g0: RefArray) => {
    const g = refExpand(g0, [...batch, L, Ev]);
    const dq = new Float64Array(B * L * E),
      dk = new Float64Array(B * S * E),
      dv = new Float64Array(B * S * Ev);
    for (let b = 0; b < B; b++) {
      for (let i = 0; i < L; i++) {
        const p = (j: number) => P[(b * L + i) * S + j];
        const dP: number[] = [];
        for (let j = 0; j < S; j++) {
          let acc = 0;
          for (let e = 0; e < Ev; e++) acc += g.data[(b * L + i) * Ev + e] * v.data[(b * S + j) * Ev + e];
          dP.push(acc);
        }
        let rs = 0;
        for (let j = 0; j < S; j++) rs += p(j) * dP[j];
        for (let j = 0; j < S; j++) {
          const dS = p(j) * (dP[j] - rs) * o.scale;
          for (let e = 0; e < E; e++) {
            dq[(b * L + i) * E + e] += dS * k.data[(b * S + j) * E + e];
            dk[(b * S + j) * E + e] += dS * q.data[(b * L + i) * E + e];
          }
          for (let e = 0; e < Ev; e++) dv[(b * S + j) * Ev + e] += p(j) * g.data[(b * L + i) * Ev + e];
        }
      }
    }
    return {
      dq: refArray(dq, [...batch, L, E]),
      dk: refArray(dk, [...batch, S, E]),
      dv: refArray(dv, [...batch, S, Ev]),
    };
  };
  return { out: refArray(out, [...batch, L, Ev]), lse: refArray(lse, [...batch, L]), grads };
}

/** f32 kernels accumulating E- and S-long sums in another order than the float64 reference. */
const TOL_OUT: Tolerance = { rtol: 1e-4, atol: 2e-5 };
const TOL_GRAD: Tolerance = { rtol: 1e-3, atol: 1e-4 };

interface Inputs {
  q: Pair;
  k: Pair;
  v: Pair;
  mask?: Pair;
}

async function checkAttention(
  t: CaseContext,
  label: string,
  x: Inputs,
  o: { scale: number; causal?: boolean },
  backward = true,
): Promise<void> {
  const ref = refAttention(x.q.ref, x.k.ref, x.v.ref, { ...o, mask: x.mask?.ref });
  const nopts = { ...o, mask: x.mask?.nd as NDArray | undefined };
  const r = attentionNd(x.q.nd, x.k.nd, x.v.nd, nopts);
  t.keep([r.out, r.lse]);
  await t.check(`${label} out`, r.out, ref.out, TOL_OUT);
  await t.check(`${label} lse`, r.lse, ref.lse, TOL_OUT);
  if (!backward) return;
  const g = Pair.of(t, randF32(ref.out.shape, `${label} gOut`));
  const want = ref.grads(g.ref);
  const d = attentionBackwardNd(x.q.nd, x.k.nd, x.v.nd, r.out, r.lse, g.nd, nopts);
  await t.check(`${label} dq`, d.dq, want.dq, TOL_GRAD);
  await t.check(`${label} dk`, d.dk, want.dk, TOL_GRAD);
  await t.check(`${label} dv`, d.dv, want.dv, TOL_GRAD);
}

const qkv = (t: CaseContext, seed: string, q: number[], k: number[], v: number[]): Inputs => ({
  q: Pair.of(t, randF32(q, `${seed} q`, -2, 2)),
  k: Pair.of(t, randF32(k, `${seed} k`, -2, 2)),
  v: Pair.of(t, randF32(v, `${seed} v`)),
});

export function attentionCases(): OpCase[] {
  return [
    defineCase(
      'attention/[2,3] heads, L=5 S=7 E=4 Ev=6',
      async (t) => {
        await checkAttention(t, 'plain', qkv(t, 'a1', [2, 3, 5, 4], [2, 3, 7, 4], [2, 3, 7, 6]), { scale: 0.5 });
      },
      { quick: true },
    ),
    defineCase(
      'attention/causal, square and L != S (top-left aligned)',
      async (t) => {
        await checkAttention(t, 'L=S=9', qkv(t, 'c1', [2, 9, 5], [2, 9, 5], [2, 9, 5]), {
          scale: 1 / Math.sqrt(5),
          causal: true,
        });
        await checkAttention(t, 'L=5 S=8', qkv(t, 'c2', [5, 3], [8, 3], [8, 2]), { scale: 0.7, causal: true });
        await checkAttention(t, 'L=8 S=5', qkv(t, 'c3', [8, 3], [5, 3], [5, 4]), { scale: 0.7, causal: true });
      },
      { quick: true },
    ),
    defineCase(
      'attention/bool mask with a fully hidden row (output 0, lse -inf, no gradient)',
      async (t) => {
        const x = qkv(t, 'm1', [2, 6, 4], [2, 7, 4], [2, 7, 3]);
        const m = randBool([2, 6, 7], 'm1 mask', 0.6);
        for (let j = 0; j < 7; j++) m.data[2 * 7 + j] = 0; // batch 0, row 2: nothing to attend to
        await checkAttention(t, 'bool', { ...x, mask: Pair.of(t, m) }, { scale: 0.5 });
        await checkAttention(t, 'bool+causal', { ...x, mask: Pair.of(t, m) }, { scale: 0.5, causal: true });
      },
      { quick: true },
    ),
    defineCase('attention/float mask broadcast over batch and rows, with -inf entries', async (t) => {
      const x = qkv(t, 'f1', [3, 4, 5], [3, 6, 5], [3, 6, 5]);
      const m = randF32([1, 1, 6], 'f1 mask', -3, 3);
      m.data[4] = -Infinity;
      await checkAttention(t, 'float', { ...x, mask: Pair.of(t, m) }, { scale: 0.3 });
    }),
    defineCase('attention/strided views: permuted heads, flipped rows, broadcast k/v batch', async (t) => {
      // q read as [B, H, L, E] from a [B, L, H, E] buffer (what multi-head attention makes).
      const q = Pair.of(t, randF32([2, 5, 3, 4], 's1 q', -2, 2)).permute([0, 2, 1, 3]);
      const k = Pair.of(t, randF32([1, 3, 6, 4], 's1 k', -2, 2)).flip([2]);
      const v = Pair.of(t, randF32([3, 6, 2], 's1 v'));
      await checkAttention(t, 'strided', { q, k, v }, { scale: 0.5 });
    }),
    defineCase('attention/tile edges: L=70 S=45 E=9 Ev=5 causal, and S=1, L=1', async (t) => {
      await checkAttention(t, 'edges', qkv(t, 'e1', [70, 9], [45, 9], [45, 5]), { scale: 1 / 3, causal: true });
      await checkAttention(t, 'S=1', qkv(t, 'e2', [2, 4, 3], [2, 1, 3], [2, 1, 5]), { scale: 1 });
      await checkAttention(t, 'L=1', qkv(t, 'e3', [1, 8], [20, 8], [20, 8]), { scale: 0.35 });
    }),
    defineCase('attention/head dims divisible by 4 (vector lanes on the GPU), permuted, float mask', async (t) => {
      const q = Pair.of(t, randF32([2, 20, 2, 8], 'v1 q', -2, 2)).permute([0, 2, 1, 3]);
      const k = Pair.of(t, randF32([2, 2, 20, 8], 'v1 k', -2, 2));
      const v = Pair.of(t, randF32([2, 20, 2, 8], 'v1 v')).permute([0, 2, 1, 3]);
      await checkAttention(t, 'lanes causal', { q, k, v }, { scale: 0.35, causal: true });
      await checkAttention(
        t,
        'lanes masked',
        { q, k, v, mask: Pair.of(t, randF32([20, 20], 'v1 mask', -2, 2)) },
        { scale: 0.35 },
      );
    }),
    defineCase(
      'attention/head dim 64 (register-tiled kernels on the GPU): partial tiles, causal L > S, permuted q, large scores',
      async (t) => {
        await checkAttention(t, 'd64 causal', qkv(t, 'd1', [2, 70, 64], [2, 45, 64], [2, 45, 64]), {
          scale: 0.125,
          causal: true,
        });
        const q = Pair.of(t, randF32([1, 37, 2, 64], 'd2 q', -2, 2)).permute([0, 2, 1, 3]);
        const k = Pair.of(t, randF32([1, 2, 50, 64], 'd2 k', -2, 2));
        await checkAttention(
          t,
          'd64 permuted',
          { q, k, v: Pair.of(t, randF32([2, 50, 64], 'd2 v')) },
          { scale: 0.125 },
        );
        const big = {
          q: Pair.of(t, randF32([5, 64], 'd3 q', 1, 1.5)),
          k: Pair.of(t, randF32([33, 64], 'd3 k', 1, 1.5)),
          v: Pair.of(t, randF32([33, 64], 'd3 v')),
        };
        await checkAttention(t, 'd64 big', big, { scale: 1 }, false);
      },
    ),
    defineCase('attention/large scores stay finite (max subtracted)', async (t) => {
      const x = {
        q: Pair.of(t, randF32([4, 4], 'b1 q', 5, 6)),
        k: Pair.of(t, randF32([9, 4], 'b1 k', 5, 6)),
        v: Pair.of(t, randF32([9, 3], 'b1 v')),
      };
      await checkAttention(t, 'big', x, { scale: 1 }, false);
    }),
  ];
}
