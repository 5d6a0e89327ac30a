import { CpuBackend, NDArray } from '@surf/core';
import { adamExprs, sgdExprs } from '../../src/optim/update-exprs';

// The fused update trees on the CPU backend against the textbook formulas evaluated here in
// f64 (so the comparison is at f32 precision).
const cpu = new CpuBackend();
const nd = (xs: number[]) => NDArray.fromData(cpu, xs, [xs.length]);
const close = (got: ArrayLike<number>, want: number[]) => want.forEach((w, i) => expect(got[i]).toBeCloseTo(w, 5));

test('SGD with momentum, dampening, weight decay: first step sets the buffer to g', async () => {
  let p = [1, -2];
  const g = [0.5, 0.25];
  const [lr, mu, tau, wd] = [0.1, 0.9, 0.2, 0.01];
  let P = nd(p);
  let B = nd([0, 0]);
  let buf = [0, 0];
  for (let step = 1; step <= 3; step++) {
    const first = step === 1;
    const [p2, b2] = NDArray.elementwise(
      sgdExprs({ lr, weightDecay: wd, momentum: mu, dampening: tau, nesterov: false, first }),
      first ? [P, nd(g)] : [P, nd(g), B],
    );
    const gd = g.map((x, i) => x + wd * p[i]);
    buf = first ? gd : buf.map((b, i) => mu * b + (1 - tau) * gd[i]);
    p = p.map((x, i) => x - lr * buf[i]);
    close(await p2.data(), p);
    close(await b2.data(), buf);
    P = p2;
    B = b2;
  }
});

test('SGD Nesterov and plain SGD', async () => {
  const [lr, mu] = [0.5, 0.8];
  const [p1, b1] = NDArray.elementwise(
    sgdExprs({ lr, weightDecay: 0, momentum: mu, dampening: 0, nesterov: true, first: true }),
    [nd([3]), nd([2])],
  );
  // buf = g = 2; d = g + mu*buf = 3.6; p = 3 - 0.5*3.6
  close(await p1.data(), [3 - lr * 3.6]);
  close(await b1.data(), [2]);
  const out = NDArray.elementwise(
    sgdExprs({ lr, weightDecay: 0.1, momentum: 0, dampening: 0, nesterov: false, first: false }),
    [nd([3]), nd([2])],
  );
  expect(out.length).toBe(1);
  close(await out[0].data(), [3 - lr * (2 + 0.1 * 3)]);
});

test.each([false, true])(
  'Adam (decoupled=%s) over three steps matches the bias-corrected formula',
  async (decoupled) => {
    const [lr, b1, b2, eps, wd] = [0.01, 0.9, 0.999, 1e-8, 0.1];
    let p = [0.5, -1.5, 2];
    let m = [0, 0, 0];
    let v = [0, 0, 0];
    let P = nd(p);
    let M = nd(m);
    let V = nd(v);
    const grads = [
      [0.1, -0.2, 0.3],
      [0.05, 0.4, -0.1],
      [-0.3, 0.1, 0],
    ];
    for (let t = 1; t <= 3; t++) {
      const g0 = grads[t - 1];
      const [p2, m2, v2] = NDArray.elementwise(
        adamExprs({ lr, beta1: b1, beta2: b2, eps, weightDecay: wd, decoupled, step: t }),
        t === 1 ? [P, nd(g0)] : [P, nd(g0), M, V],
      );
      const pd = decoupled ? p.map((x) => x * (1 - lr * wd)) : p;
      const g = decoupled ? g0 : g0.map((x, i) => x + wd * p[i]);
      m = m.map((x, i) => b1 * x + (1 - b1) * g[i]);
      v = v.map((x, i) => b2 * x + (1 - b2) * g[i] * g[i]);
      const mh = m.map((x) => x / (1 - b1 ** t));
      const vh = v.map((x) => x / (1 - b2 ** t));
      p = pd.map((x, i) => x - (lr * mh[i]) / (Math.sqrt(vh[i]) + eps));
      close(await p2.data(), p);
      close(await m2.data(), m);
      close(await v2.data(), v);
      [P, M, V] = [p2, m2, v2];
    }
  },
);

test('one configuration gets the same expression objects (the backends cache per Expr); another gets its own', () => {
  const c = { lr: 0.1, weightDecay: 0, momentum: 0.9, dampening: 0, nesterov: false, first: false };
  const a = sgdExprs(c);
  expect(sgdExprs({ ...c })).toBe(a);
  expect(sgdExprs({ ...c, lr: 0.05 })).not.toBe(a);
  expect(sgdExprs({ ...c, first: true })).not.toBe(a);
  const ad = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false, step: 3 };
  expect(adamExprs({ ...ad })).toBe(adamExprs({ ...ad }));
  // The bias corrections change with the step: a new tree, whose constants say so.
  const consts = (e: unknown) => JSON.stringify(e).match(/"value":[^,}]+/g);
  expect(consts(adamExprs({ ...ad, step: 4 }))).not.toEqual(consts(adamExprs(ad)));
});
