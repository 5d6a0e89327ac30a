import type { Strided } from '../../backend';
import { ValueError } from '../../errors';
import { E } from '../../expr';
import { View } from '../../view';
import { OpCase, defineCase } from '../case';
import { TOL } from '../compare';
import { iota, randF32, randI32 } from '../inputs';
import { refElementwise } from '../ref-expr';
import { RefArray, forEachIndex, refArray, refGather, refMatmul, refReduce } from '../reference';

/**
 * Cases that call the backend contract directly with hand-built views (offsets, negative
 * strides, stride 0, masks), bypassing NDArray, so a backend is tested on exactly what the
 * contract allows and not only on what today's frontend happens to produce.
 */
type Mask = [number, number][] | null;

/** What a raw view reads, by the contract's definition, written out naively. */
function readView(buf: RefArray, shape: number[], strides: number[], offset: number, mask: Mask): RefArray {
  const out: number[] = [];
  forEachIndex(shape, (idx) => {
    let o = offset;
    let hidden = false;
    for (let d = 0; d < shape.length; d++) {
      if (mask && (idx[d] < mask[d][0] || idx[d] >= mask[d][1])) hidden = true;
      o += idx[d] * strides[d];
    }
    out.push(hidden ? 0 : buf.data[o]);
  });
  return refArray(out, shape, buf.dtype);
}

export function backendCases(): OpCase[] {
  return [
    defineCase(
      'backend/elementwise on raw views: offset, negative strides, stride 0, mask',
      async (t) => {
        const buf = randF32([60], 1);
        const s = t.storage(buf);
        // shape [3,4,5]: dim 0 reversed, dim 1 broadcast, dim 2 stride 2; masked on dims 0 and 2.
        const shape = [3, 4, 5],
          strides = [-20, 0, 2],
          offset = 41;
        const mask: Mask = [
          [1, 3],
          [0, 4],
          [0, 4],
        ];
        const x: Strided = { storage: s, view: new View(shape, strides, offset, mask) };
        const y: Strided = { storage: s, view: new View(shape, [1, 5, 0], 3, null) };
        const outs = [E.add(E.in(0), E.in(1)), E.neg(E.in(0))];
        const got = t.keepStorage(t.backend.elementwise(outs, [x, y], shape));
        const want = refElementwise(outs, [
          readView(buf, shape, strides, offset, mask),
          readView(buf, shape, [1, 5, 0], 3, null),
        ]);
        await t.checkStorage('x + y', got[0], shape, want[0], TOL.f32);
        await t.checkStorage('-x', got[1], shape, want[1]);
      },
      { quick: true },
    ),
    defineCase(
      'backend/elementwise 0-d views at an offset, and no inputs',
      async (t) => {
        const buf = iota([5], 'int32', 10);
        const s = t.storage(buf);
        const [got] = t.backend.elementwise([E.mul(E.in(0), E.i(3))], [{ storage: s, view: new View([], [], 4) }], []);
        await t.checkStorage('0-d', got, [], refArray([42], [], 'int32'));
        const [c] = t.backend.elementwise([E.f(1.25)], [], [2, 3]);
        await t.checkStorage('const', c, [2, 3], refArray([1.25, 1.25, 1.25, 1.25, 1.25, 1.25], [2, 3]));
        const [z] = t.backend.elementwise([E.in(0)], [{ storage: s, view: new View([0, 3], [3, 1], 0) }], [0, 3]);
        await t.checkStorage('size 0', z, [0, 3], refArray([], [0, 3], 'int32'));
      },
      { quick: true },
    ),
    defineCase(
      'backend/reduce on raw views: offset, negative and zero strides',
      async (t) => {
        const buf = randF32([40], 2);
        const s = t.storage(buf);
        const shape = [4, 3, 5],
          strides = [-10, 0, 2],
          offset = 31;
        const x = readView(buf, shape, strides, offset, null);
        for (const axes of [[0], [1], [2], [0, 2], [0, 1, 2]]) {
          const got = t.backend.reduce('sum', { storage: s, view: new View(shape, strides, offset) }, axes);
          const r = refReduce('sum', x, axes);
          await t.checkStorage(`sum[${axes}]`, got, r.out.shape, r.out, TOL.accumulate, r.mag);
          const gm = t.backend.reduce('max', { storage: s, view: new View(shape, strides, offset) }, axes);
          await t.checkStorage(`max[${axes}]`, gm, r.out.shape, refReduce('max', x, axes).out);
        }
      },
      { quick: true },
    ),
    defineCase(
      'backend/matmul on raw views: transposed strides, stride-0 batch, offsets',
      async (t) => {
        const abuf = randF32([80], 3);
        const bbuf = randF32([60], 4);
        const sa = t.storage(abuf),
          sb = t.storage(bbuf);
        // a: batch 2 broadcast (stride 0), [5,7] read transposed from a [7,5] block at offset 3.
        const av = { shape: [2, 5, 7], strides: [0, 1, 5], offset: 3 };
        // b: batch 2, [7,4] with rows reversed.
        const bv = { shape: [2, 7, 4], strides: [28, -4, 1], offset: 24 };
        const got = t.backend.matmul(
          { storage: sa, view: new View(av.shape, av.strides, av.offset) },
          { storage: sb, view: new View(bv.shape, bv.strides, bv.offset) },
        );
        const r = refMatmul(
          readView(abuf, av.shape, av.strides, av.offset, null),
          readView(bbuf, bv.shape, bv.strides, bv.offset, null),
        );
        await t.checkStorage('a^T-ish @ flipped b', got, [2, 5, 4], r.out, TOL.accumulate, r.mag);
      },
      { quick: true },
    ),
    defineCase('backend/gather on raw views: strided index with offset, out-of-range rows', async (t) => {
      const xbuf = randF32([24], 5);
      const ibuf = randI32([9], 6, -2, 8);
      const sx = t.storage(xbuf),
        si = t.storage(ibuf);
      const xs = { shape: [6, 4], strides: [-4, 1], offset: 20 };
      const is = { shape: [4], strides: [2], offset: 1 };
      const got = t.backend.gather({ storage: sx, view: new View(xs.shape, xs.strides, xs.offset) }, 0, {
        storage: si,
        view: new View(is.shape, is.strides, is.offset),
      });
      const want = refGather(
        readView(xbuf, xs.shape, xs.strides, xs.offset, null),
        0,
        Array.from(readView(ibuf, is.shape, is.strides, is.offset, null).data),
      );
      await t.checkStorage('gather', got, [4, 4], want);
    }),
    defineCase(
      'backend/masked operands: matmul, reduce and gather reject them; NDArray copies them first',
      async (t) => {
        // The masked-input policy lives in core (NDArray.unmasked): a backend never sees a
        // masked operand outside elementwise, and says so clearly if handed one.
        const buf = randF32([12], 7);
        const s = t.storage(buf);
        const ibuf = refArray([2, 0, 1], [3], 'int32');
        const si = t.storage(ibuf);
        const padded = new View([3, 4], [3, 1], -1, [
          [0, 3],
          [1, 4],
        ]); // [3,3] with a zero column in front
        const plain = View.contiguous([4, 3]);
        const x: Strided = { storage: s, view: padded };
        const attempts: [string, () => unknown][] = [
          ['sum', () => t.backend.reduce('sum', x, [1])],
          ['matmul a', () => t.backend.matmul(x, { storage: s, view: plain })],
          ['matmul b', () => t.backend.matmul({ storage: s, view: plain }, x)],
          [
            'matmul epilogue',
            () =>
              t.backend.matmul(
                { storage: s, view: new View([3, 4], [4, 1], 0) },
                { storage: s, view: plain },
                {
                  expr: E.add(E.in(0), E.in(1)),
                  inputs: [
                    {
                      storage: s,
                      view: new View([3, 3], [3, 1], -1, [
                        [0, 3],
                        [1, 3],
                      ]),
                    },
                  ],
                },
              ),
          ],
          ['gather source', () => t.backend.gather(x, 0, { storage: si, view: View.contiguous([3]) })],
          [
            'gather index',
            () =>
              t.backend.gather({ storage: s, view: plain }, 0, { storage: si, view: new View([3], [1], -1, [[1, 3]]) }),
          ],
        ];
        for (const [what, run] of attempts) {
          let named = 0;
          try {
            const got = run();
            t.keepStorage(got as never);
          } catch (e) {
            named = e instanceof ValueError && /mask/.test((e as Error).message) ? 1 : 0;
          }
          t.checks.push({
            label: `${what} rejects a masked view with a ValueError`,
            got: Int32Array.of(named),
            gotShape: [1],
            gotDType: 'int32',
            want: refArray([1], [1], 'int32'),
            tol: TOL.exact,
          });
        }
        // Through NDArray the same views work: padded operands are copied before the kernel.
        const m43 = t.keep(t.upload(buf).reshape([4, 3]));
        const xa = t.keep(
          t
            .keep(
              m43.crop([
                [0, 3],
                [0, 3],
              ]),
            )
            .pad([
              [0, 0],
              [1, 0],
            ]),
        );
        const want = readView(buf, [3, 4], [3, 1], -1, [
          [0, 3],
          [1, 4],
        ]);
        const r = refMatmul(want, readView(buf, [4, 3], [3, 1], 0, null));
        await t.check('padded @ plain', xa.matmul(m43), r.out, TOL.accumulate, r.mag);
        const rs = refReduce('sum', want, [1]);
        await t.check('padded row sums', xa.sum(1, true), rs.out, TOL.accumulate, rs.mag);
        await t.check('gather rows of padded', xa.gather(0, t.upload(ibuf)), refGather(want, 0, [2, 0, 1]));
      },
      { quick: true },
    ),
    defineCase(
      'backend/crossEntropyRows: m, s, the rows and (where the backend sums them) their total',
      async (t) => {
        const rows = t.backend.crossEntropyRows?.bind(t.backend);
        if (!rows) return;
        // 70 rows (more than one fold thread's share of 64), 7 classes, smoothing, a 1/N scale.
        const n = 70,
          c = 7,
          eps = 0.1,
          scale = 1 / n;
        const z = randF32([n, c], 'ce z', -4, 4);
        const y = randI32([n], 'ce y', 0, c);
        const zs: Strided = { storage: t.storage(z), view: new View([n, c], [c, 1], 0) };
        const ys: Strided = { storage: t.storage(y), view: new View([n], [1], 0) };
        const site = { op: 'crossEntropy', name: 'target', range: `the class range [0, ${c})` };
        const [m, s, r, total] = rows(zs, ys, { smoothing: eps, scale, site, total: true });
        const wm: number[] = [],
          ws: number[] = [],
          wr: number[] = [];
        for (let i = 0; i < n; i++) {
          const row = Array.from(z.data.slice(i * c, (i + 1) * c));
          const mx = Math.max(...row);
          const se = row.reduce((a, v) => a + Math.exp(v - mx), 0);
          const lse = Math.log(se) + mx;
          wm.push(mx);
          ws.push(se);
          wr.push(scale * row.reduce((a, v, j) => a + ((j === y.data[i] ? 1 - eps : 0) + eps / c) * (lse - v), 0));
        }
        await t.checkStorage('row max', m, [n], refArray(wm, [n]), TOL.exact);
        await t.checkStorage('row sum of exp', s, [n], refArray(ws, [n]), TOL.transcendental);
        await t.checkStorage('rows', r, [n], refArray(wr, [n]), TOL.transcendental);
        if (total)
          await t.checkStorage('total', total, [1], refArray([wr.reduce((a, v) => a + v, 0)], [1]), TOL.transcendental);
      },
      { quick: true },
    ),
    defineCase(
      'backend/crossEntropyRows: ignoreIndex rows add 0 and are no error; meanOverKept divides by the kept rows',
      async (t) => {
        const rows = t.backend.crossEntropyRows?.bind(t.backend);
        if (!rows) return;
        // 70 rows, 5 classes; the ignored index 2 is also a class, so it must be left out by value.
        const n = 70,
          c = 5,
          ignore = 2;
        const z = randF32([n, c], 'ce-ignore z', -4, 4);
        const y = randI32([n], 'ce-ignore y', 0, c);
        const zs: Strided = { storage: t.storage(z), view: new View([n, c], [c, 1], 0) };
        const ys: Strided = { storage: t.storage(y), view: new View([n], [1], 0) };
        const site = { op: 'crossEntropy', name: 'target', range: `the class range [0, ${c})` };
        const [m, s, r, total] = rows(zs, ys, {
          smoothing: 0.2,
          scale: 1,
          site,
          total: true,
          ignoreIndex: ignore,
          meanOverKept: true,
        });
        const wr: number[] = [],
          ws: number[] = [],
          wm: number[] = [];
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const row = Array.from(z.data.slice(i * c, (i + 1) * c));
          const mx = Math.max(...row);
          const se = row.reduce((a, v) => a + Math.exp(v - mx), 0);
          ws.push(se);
          wm.push(mx);
          const lse = Math.log(se) + mx;
          if (y.data[i] === ignore) {
            wr.push(0);
            continue;
          }
          kept++;
          wr.push(row.reduce((a, v, j) => a + ((j === y.data[i] ? 0.8 : 0) + 0.2 / c) * (lse - v), 0));
        }
        await t.checkStorage('rows (ignored ones 0)', r, [n], refArray(wr, [n]), TOL.transcendental);
        await t.checkStorage('row max (ignored rows too)', m, [n], refArray(wm, [n]), TOL.exact);
        if (!total) await t.checkStorage('row sum of exp', s, [n], refArray(ws, [n]), TOL.transcendental);
        else {
          const mean = wr.reduce((a, v) => a + v, 0) / kept;
          await t.checkStorage('mean over the kept rows', total, [1], refArray([mean], [1]), TOL.transcendental);
          await t.checkStorage(
            'sums, then the kept count',
            s,
            [n + 1],
            refArray([...ws, kept], [n + 1]),
            TOL.transcendental,
          );
        }
      },
      { quick: true },
    ),
    defineCase(
      'backend/fromData and read round-trip every dtype exactly',
      async (t) => {
        const vals = [0, -0, 1.5, -2.25, 3.4028234663852886e38, -Infinity, NaN, 1.1754943508222875e-38];
        for (const r of [
          refArray(vals.map(Math.fround), [vals.length]),
          refArray([0, -1, 2147483647, -2147483648], [4], 'int32'),
          refArray([1, 0, 1], [3], 'bool'),
        ]) {
          await t.checkStorage(`round-trip ${r.dtype}`, t.storage(r), r.shape, r);
        }
      },
      { quick: true },
    ),
  ];
}
