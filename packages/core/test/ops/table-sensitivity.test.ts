import { CpuBackend, DType, E, Expr, ReduceOp, Strided, View, exprKey } from '@surf/core';
import { opCases, runCase } from '@surf/core/testing';

// The table must catch the mistakes a new backend makes. Each backend here is the CPU backend
// with one deliberate fault; the table has to fail for it (and pass for the real one, which
// ops-cpu.test.ts checks).
type Fault = (b: CpuBackend) => void;

function withPostprocess(b: CpuBackend, fix: (d: Float32Array | Int32Array | Uint8Array) => void): void {
  const ew = b.elementwise.bind(b);
  b.elementwise = (outs, ins, shape) =>
    ew(outs, ins, shape).map((s) => {
      const d = b.readSync(s);
      fix(d);
      b.dispose(s);
      return b.fromData(d, s.dtype);
    });
}

function unflip(x: Strided): Strided {
  const v = x.view;
  let off = v.offset;
  const st = v.strides.map((s, d) => {
    if (s < 0 && v.shape[d] > 0) {
      off += (v.shape[d] - 1) * s;
      return -s;
    }
    return s;
  });
  return { storage: x.storage, view: new View(v.shape, st, off, v.mask) };
}

const faults: [string, string[], Fault][] = [
  [
    'float results 1e-4 off',
    ['elementwise'],
    (b) =>
      withPostprocess(b, (d) => {
        if (d instanceof Float32Array) for (let i = 0; i < d.length; i++) d[i] *= 1 + 1e-4;
      }),
  ],
  [
    'NaN flushed to 0',
    ['ieee'],
    (b) =>
      withPostprocess(b, (d) => {
        for (let i = 0; i < d.length; i++) if (Number.isNaN(d[i])) d[i] = 0;
      }),
  ],
  [
    'Inf clamped to f32 max',
    ['ieee'],
    (b) =>
      withPostprocess(b, (d) => {
        if (d instanceof Float32Array)
          for (let i = 0; i < d.length; i++)
            if (!Number.isFinite(d[i]) && !Number.isNaN(d[i])) d[i] = Math.sign(d[i]) * 3.4e38;
      }),
  ],
  [
    'negative strides ignored',
    ['movement'],
    (b) => {
      const ew = b.elementwise.bind(b);
      b.elementwise = (o, ins, s) => ew(o, ins.map(unflip), s);
    },
  ],
  [
    'masks one element short',
    ['movement'],
    (b) => {
      const ew = b.elementwise.bind(b);
      b.elementwise = (o, ins, s) =>
        ew(
          o,
          ins.map((x) =>
            x.view.mask
              ? {
                  storage: x.storage,
                  view: new View(
                    x.view.shape,
                    x.view.strides,
                    x.view.offset,
                    x.view.mask.map(([lo, hi]) => [lo, hi > lo ? hi - 1 : hi] as [number, number]),
                  ),
                }
              : x,
          ),
          s,
        );
    },
  ],
  [
    'reduce ignores input strides',
    ['reduce'],
    (b) => {
      const r = b.reduce.bind(b);
      b.reduce = (op: ReduceOp, x: Strided, axes) =>
        r(op, { storage: x.storage, view: new View(x.view.shape, View.contiguous(x.view.shape).strides, 0) }, axes);
    },
  ],
  [
    'matmul ignores b strides',
    ['matmul'],
    (b) => {
      const m = b.matmul.bind(b);
      b.matmul = (a: Strided, x: Strided) =>
        m(a, {
          storage: x.storage,
          view: new View(
            x.view.shape,
            View.contiguous(x.view.shape).strides.map((s, d) => (x.view.strides[d] === 0 ? 0 : s)),
            0,
          ),
        });
    },
  ],
  [
    'gather clamps out-of-range indices',
    ['gather'],
    (b) => {
      const g = b.gather.bind(b);
      b.gather = (x: Strided, axis: number, idx: Strided) => {
        const n = x.view.shape[axis];
        const raw = b.readSync(idx.storage) as Int32Array;
        const clamped = b.fromData(
          raw.map((i) => Math.min(Math.max(i, 0), n - 1)),
          'int32',
        );
        try {
          return g(x, axis, { storage: clamped, view: idx.view });
        } finally {
          b.dispose(clamped);
        }
      };
    },
  ],
  [
    'constants baked into the cached kernel',
    ['elementwise'],
    (b) => {
      const first = new Map<string, number[]>();
      const ew = b.elementwise.bind(b);
      const replace = (e: Expr, vals: number[]): Expr => {
        switch (e.kind) {
          case 'const':
            return E.c(vals.shift()!, e.dtype);
          case 'input':
            return e;
          case 'cast':
            return E.cast(replace(e.a, vals), e.dtype);
          case 'unary':
            return E.un(e.op, replace(e.a, vals));
          case 'binary': {
            const a = replace(e.a, vals);
            return E.bin(e.op, a, replace(e.b, vals));
          }
          case 'where': {
            const c = replace(e.c, vals);
            const a = replace(e.a, vals);
            return E.where(c, a, replace(e.b, vals));
          }
        }
      };
      b.elementwise = (outs, ins, shape) => {
        const consts: { value: number; dtype: DType }[] = [];
        const key = outs.map((e) => exprKey(e, consts)).join(';') + ins.map((x) => x.storage.dtype).join();
        if (!first.has(key))
          first.set(
            key,
            consts.map((c) => c.value),
          );
        const vals = first.get(key)!.slice();
        return ew(
          outs.map((e) => replace(e, vals)),
          ins,
          shape,
        );
      };
    },
  ],
  [
    'leaks a buffer per reduce',
    ['reduce'],
    (b) => {
      const r = b.reduce.bind(b);
      b.reduce = (op, x, axes) => {
        b.fromData(new Float32Array(1), 'float32');
        return r(op, x, axes);
      };
    },
  ],
];

test.each(faults)('the table catches: %s', async (_name, groups, fault) => {
  const b = new CpuBackend();
  fault(b);
  const failed: string[] = [];
  for (const c of opCases({ groups })) if (!(await runCase(c, b)).ok) failed.push(c.name);
  expect(failed.length).toBeGreaterThan(0);
});
