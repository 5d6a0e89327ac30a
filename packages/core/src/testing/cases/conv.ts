import type { ConvParams } from '../../conv';
import { convNd } from '../../conv';
import { E } from '../../expr';
import { OpCase, defineCase, CaseContext } from '../case';
import { TOL } from '../compare';
import { randF32 } from '../inputs';
import { RefArray, flatOf, forEachIndex, refArray, refSize } from '../reference';
import { Pair } from './pair';

/**
 * The contract conv against the defining sum written out with loops: for every output
 * element, every channel of its group and every kernel tap, find the dilated-input
 * coordinate and read x only where it lands on a real (not inserted) element.
 */
export function refConv(x: RefArray, w: RefArray, p: ConvParams): { out: RefArray; mag: Float64Array } {
  const sd = x.shape.length - 2;
  const [n, c] = x.shape;
  const [o, cg] = w.shape;
  const og = o / p.groups;
  const inS = x.shape.slice(2),
    kS = w.shape.slice(2);
  const outS = inS.map((len, d) => {
    const din = (len - 1) * p.lhsDilation[d] + 1;
    return Math.floor((din + p.padding[d][0] + p.padding[d][1] - p.dilation[d] * (kS[d] - 1) - 1) / p.stride[d]) + 1;
  });
  const shape = [n, o, ...outS];
  const data = new Float64Array(refSize(shape));
  const mag = new Float64Array(data.length);
  forEachIndex(shape, (idx, flat) => {
    const [b, oc] = idx;
    const g = Math.floor(oc / og);
    let s = 0,
      m = 0;
    for (let ci = 0; ci < cg; ci++) {
      forEachIndex(kS, (kk) => {
        const src = [b, g * cg + ci];
        for (let d = 0; d < sd; d++) {
          const pos = idx[2 + d] * p.stride[d] + kk[d] * p.dilation[d] - p.padding[d][0];
          if (pos < 0 || pos % p.lhsDilation[d] !== 0 || pos / p.lhsDilation[d] >= inS[d]) return;
          src.push(pos / p.lhsDilation[d]);
        }
        const t = x.data[flatOf(x.shape, src)] * w.data[flatOf(w.shape, [oc, ci, ...kk])];
        s += t;
        m += Math.abs(t);
      });
    }
    void c;
    data[flat] = s;
    mag[flat] = m;
  });
  return { out: refArray(data, shape), mag };
}

function params(sd: number, o: Partial<ConvParams> = {}): ConvParams {
  const ones = new Array<number>(sd).fill(1);
  return { stride: ones, padding: ones.map(() => [0, 0] as const), dilation: ones, lhsDilation: ones, groups: 1, ...o };
}

async function checkConv(t: CaseContext, label: string, x: Pair, w: Pair, p: ConvParams): Promise<void> {
  const { out, mag } = refConv(x.ref, w.ref, p);
  await t.check(label, convNd(x.nd, w.nd, p), out, TOL.accumulate, mag);
}

export function convCases(): OpCase[] {
  return [
    defineCase(
      'conv/2d [2,3,5,6] 3x3 pad 1',
      async (t) => {
        await checkConv(
          t,
          'pad 1',
          Pair.of(t, randF32([2, 3, 5, 6], 1)),
          Pair.of(t, randF32([4, 3, 3, 3], 2)),
          params(2, {
            padding: [
              [1, 1],
              [1, 1],
            ],
          }),
        );
      },
      { quick: true },
    ),
    defineCase(
      'conv/2d stride 2, dilation 2, asymmetric padding, groups 2',
      async (t) => {
        const x = Pair.of(t, randF32([2, 4, 7, 6], 3));
        await checkConv(
          t,
          'stride 2',
          x,
          Pair.of(t, randF32([3, 4, 2, 3], 4)),
          params(2, {
            stride: [2, 2],
            padding: [
              [0, 1],
              [2, 0],
            ],
          }),
        );
        await checkConv(
          t,
          'dilation 2',
          x,
          Pair.of(t, randF32([3, 4, 2, 2], 5)),
          params(2, {
            dilation: [2, 2],
            padding: [
              [1, 1],
              [0, 0],
            ],
          }),
        );
        await checkConv(
          t,
          'groups 2',
          x,
          Pair.of(t, randF32([6, 2, 3, 3], 6)),
          params(2, {
            groups: 2,
            stride: [1, 2],
            padding: [
              [1, 1],
              [1, 1],
            ],
          }),
        );
        await checkConv(t, 'depthwise', x, Pair.of(t, randF32([4, 1, 3, 2], 7)), params(2, { groups: 4 }));
      },
      { quick: true },
    ),
    defineCase('conv/2d lhs dilation with negative padding (gradient and transposed forms)', async (t) => {
      const x = Pair.of(t, randF32([1, 2, 3, 4], 8));
      await checkConv(
        t,
        'lhs 2',
        x,
        Pair.of(t, randF32([3, 2, 3, 3], 9)),
        params(2, {
          lhsDilation: [2, 2],
          padding: [
            [2, 2],
            [1, 2],
          ],
        }),
      );
      await checkConv(
        t,
        'lhs 3 negative pad',
        x,
        Pair.of(t, randF32([2, 2, 2, 2], 10)),
        params(2, {
          lhsDilation: [3, 2],
          padding: [
            [-1, 1],
            [1, -1],
          ],
          stride: [2, 1],
        }),
      );
    }),
    // cnn2: the CPU packs windows transposed when kernel rows are long and outputs few (the
    // weight-gradient shape): rows hanging over the padding on either side, strides, groups.
    defineCase('conv/long kernel rows, few outputs (weight-gradient shape)', async (t) => {
      const x = Pair.of(t, randF32([2, 3, 6, 12], 21));
      await checkConv(
        t,
        'stride 2, padding both sides',
        x,
        Pair.of(t, randF32([4, 3, 3, 10], 22)),
        params(2, {
          stride: [2, 2],
          padding: [
            [1, 0],
            [2, 1],
          ],
        }),
      );
      await checkConv(
        t,
        'groups 3, dilation along H',
        x,
        Pair.of(t, randF32([3, 1, 2, 9], 23)),
        params(2, {
          groups: 3,
          dilation: [2, 1],
          padding: [
            [0, 0],
            [0, 3],
          ],
        }),
      );
      await checkConv(
        t,
        '1-d',
        Pair.of(t, randF32([2, 2, 12], 24)),
        Pair.of(t, randF32([3, 2, 9], 25)),
        params(1, { padding: [[1, 1]] }),
      );
    }),
    defineCase(
      'conv/1d stride, padding, dilation, groups',
      async (t) => {
        const x = Pair.of(t, randF32([2, 4, 9], 11));
        await checkConv(t, 'plain', x, Pair.of(t, randF32([5, 4, 3], 12)), params(1));
        await checkConv(
          t,
          'mixed',
          x,
          Pair.of(t, randF32([6, 2, 2], 13)),
          params(1, { stride: [2], padding: [[2, 1]], dilation: [3], groups: 2 }),
        );
        await checkConv(
          t,
          'lhs',
          x,
          Pair.of(t, randF32([2, 4, 3], 14)),
          params(1, { lhsDilation: [2], padding: [[2, 2]] }),
        );
      },
      { quick: true },
    ),
    defineCase('conv/strided operands: permuted input, flipped weight, padded view', async (t) => {
      const x = Pair.of(t, randF32([5, 2, 3, 4], 15)).permute([1, 3, 2, 0]); // [2,4,3,5]
      const w = Pair.of(t, randF32([3, 4, 2, 2], 16)).flip([2, 3]);
      await checkConv(
        t,
        'permuted/flipped',
        x,
        w,
        params(2, {
          padding: [
            [1, 0],
            [0, 1],
          ],
        }),
      );
      const xp = Pair.of(t, randF32([1, 2, 3, 3], 17)).pad([
        [0, 0],
        [0, 0],
        [1, 1],
        [0, 2],
      ]);
      await checkConv(t, 'masked input', xp, Pair.of(t, randF32([2, 2, 2, 2], 18)), params(2));
    }),
    defineCase(
      'conv/epilogue: bias + relu fused',
      async (t) => {
        const x = Pair.of(t, randF32([2, 3, 4, 4], 19));
        const w = Pair.of(t, randF32([5, 3, 3, 3], 20));
        const b = Pair.of(t, randF32([5, 1, 1], 21));
        const p = params(2, {
          padding: [
            [1, 1],
            [1, 1],
          ],
        });
        const { out, mag } = refConv(x.ref, w.ref, p);
        const want = refArray(
          Array.from(out.data, (v, i) => Math.max(0, v + b.ref.data[Math.floor(i / 16) % 5])),
          out.shape,
        );
        const got = convNd(x.nd, w.nd, p, { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [b.nd] });
        await t.check(
          'relu(conv + b)',
          got,
          want,
          TOL.accumulate,
          mag.map((m, i) => m + Math.abs(b.ref.data[Math.floor(i / 16) % 5])),
        );
      },
      { quick: true },
    ),
    // output channels over several row tiles and columns not a tile multiple (stride 2
    // on H only), and a long k over few outputs, which GPU backends split over workgroups.
    defineCase('conv/tile edges and a long k range over few outputs', async (t) => {
      await checkConv(
        t,
        '37 channels, stride (2, 1)',
        Pair.of(t, randF32([3, 7, 9, 11], 26)),
        Pair.of(t, randF32([37, 7, 3, 3], 27)),
        params(2, {
          stride: [2, 1],
          padding: [
            [1, 1],
            [1, 1],
          ],
        }),
      );
      await checkConv(
        t,
        'k = 12·8·7 over 18 outputs',
        Pair.of(t, randF32([2, 12, 10, 9], 28)),
        Pair.of(t, randF32([3, 12, 8, 7], 29)),
        params(2),
      );
      await checkConv(
        t,
        'long k, groups 2, dilation 2',
        Pair.of(t, randF32([2, 8, 13, 12], 30)),
        Pair.of(t, randF32([4, 4, 6, 5], 31)),
        params(2, { groups: 2, dilation: [2, 2] }),
      );
    }),
    defineCase('conv/size 0 batch and a larger [2,8,12,12] 5x5', async (t) => {
      await checkConv(
        t,
        'batch 0',
        Pair.of(t, randF32([0, 2, 4, 4], 22)),
        Pair.of(t, randF32([3, 2, 3, 3], 23)),
        params(2),
      );
      await checkConv(
        t,
        '8->16 5x5',
        Pair.of(t, randF32([2, 8, 12, 12], 24)),
        Pair.of(t, randF32([16, 8, 5, 5], 25)),
        params(2, {
          padding: [
            [2, 2],
            [2, 2],
          ],
        }),
      );
    }),
  ];
}
