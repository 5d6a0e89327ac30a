import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tensor, tensor } from '@surf/nn';
import { backends, describeEach, on } from '../helpers';
import { OPS } from './ops';
import { DIVERGENCES, GPU_LAYOUTS, KNOWN_BUGS, TOLERANCES } from './divergences';

// The differential suite against PyTorch (README.md here): every public tensor op and
// nn.functional op over the layouts of its first input, forward values and the gradient of
// sum(out * w), replayed on the CPU and on WebGPU against fixtures.json, written by
// scripts/interop/make-diff-fixtures.py. One test per op and backend runs all its layouts and
// reports every mismatch at once.

type Num = number | 'NaN' | 'Infinity' | '-Infinity';
interface Arr {
  shape: number[];
  dtype: 'float32' | 'int32' | 'bool';
  data: Num[];
}
interface Input extends Arr {
  layout: string;
  viewShape: number[];
  grad: boolean;
}
interface Case {
  layout: string;
  inputs: Input[];
  error?: string;
  outputs?: Arr[];
  weights?: Arr[];
  grads?: (Arr | null)[];
}
const FIXTURES = JSON.parse(readFileSync(join(__dirname, 'fixtures.json'), 'utf8')) as {
  ops: Record<string, Case[]>;
};

const num = (v: Num): number => (v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v);

function fromArr(a: Arr): Tensor {
  const vals = a.data.map(num);
  const t =
    a.dtype === 'bool'
      ? tensor(
          vals.map((v) => v !== 0),
          { dtype: 'bool' },
        )
      : tensor(vals, { dtype: a.dtype });
  return t.reshape(a.shape);
}

/** The base tensor (a leaf, with grad where PyTorch's had it) and its view in the case's layout. */
function build(inp: Input): { leaf: Tensor; x: Tensor } {
  const leaf = fromArr(inp).detach();
  if (inp.grad) leaf.requiresGrad_(true);
  const last = inp.shape.length - 1;
  const n = inp.viewShape[inp.viewShape.length - 1];
  const x =
    inp.layout === 'transposed'
      ? leaf.transpose(last - 1, last)
      : inp.layout === 'flipped'
        ? leaf.flip(last)
        : inp.layout === 'narrowed'
          ? leaf.narrow(last, 1, n)
          : inp.layout === 'strided'
            ? leaf.slice(last, 0, null, 2)
            : inp.layout === 'broadcast'
              ? leaf.expand(inp.viewShape)
              : leaf;
  return { leaf, x };
}

/** Mismatches of got against want (NaN meets NaN, infinities exactly, else atol + rtol·|want|). */
function mismatch(c: Check, gotData: ArrayLike<number>): string[] {
  const { what, got, want, rtol, atol } = c;
  if (JSON.stringify(got.shape) !== JSON.stringify(want.shape))
    return [`${what}: shape [${got.shape}], PyTorch [${want.shape}]`];
  if (got.dtype !== want.dtype) return [`${what}: dtype ${got.dtype}, PyTorch ${want.dtype}`];
  const bad: string[] = [];
  want.data.forEach((wv, i) => {
    const w = num(wv);
    const g = Number(gotData[i]);
    const ok = Number.isNaN(w)
      ? Number.isNaN(g)
      : !Number.isFinite(w) || want.dtype !== 'float32'
        ? g === w
        : Math.abs(g - w) <= atol + rtol * Math.abs(w);
    if (!ok && bad.length < 3) bad.push(`${what}[${i}]: Surf ${g}, PyTorch ${w}`);
  });
  return bad;
}

interface Check {
  what: string;
  got: Tensor;
  want: Arr;
  rtol: number;
  atol: number;
}

/**
 * Runs one case's forward and backward (no readback): what to compare with PyTorch, or the
 * reasons it already differs (a throw where PyTorch returns, or the reverse).
 */
function runCase(op: string, c: Case): Check[] | string[] {
  const tol = TOLERANCES[`${op}/${c.layout}`] ?? TOLERANCES[op] ?? {};
  const [rtol, atol, grtol, gatol] = [tol.rtol ?? 1e-5, tol.atol ?? 1e-6, tol.gradRtol ?? 1e-4, tol.gradAtol ?? 1e-5];
  const built = c.inputs.map(build);
  let out: Tensor | Tensor[];
  try {
    out = OPS[op](...built.map((b) => b.x));
  } catch (e) {
    return c.error ? [] : [`threw ${(e as Error).message}`];
  }
  const outs = Array.isArray(out) ? out : [out];
  if (c.error) return [`PyTorch raises (${c.error}); Surf returned shape [${outs[0].shape}]`];
  if (outs.length !== c.outputs!.length) return [`${outs.length} outputs, PyTorch ${c.outputs!.length}`];
  const checks: Check[] = outs.map((got, i) => ({ what: `out${i}`, got, want: c.outputs![i], rtol, atol }));
  if (c.weights) {
    const floats = outs.filter((o) => o.dtype === 'float32');
    let loss: Tensor | null = null;
    floats.forEach((o, i) => {
      const term = o.mul(fromArr(c.weights![i])).sum();
      loss = loss ? loss.add(term) : term;
    });
    try {
      (loss as Tensor | null)?.backward();
    } catch (e) {
      return [`backward threw ${(e as Error).message}`];
    }
    built.forEach((b, i) => {
      const want = c.grads![i];
      if (want)
        checks.push({ what: `grad${i}`, got: b.leaf.grad ?? b.leaf.detach().mul(0), want, rtol: grtol, atol: gatol });
    });
  }
  return checks;
}

/** Whether the table leaves this case out on this backend. */
function skipped(kind: string, op: string, layout: string): boolean {
  const key = `${op}/${layout}`;
  if (DIVERGENCES[key] || DIVERGENCES[`${kind}:${key}`] || KNOWN_BUGS[key] || KNOWN_BUGS[`${kind}:${key}`]) return true;
  return kind === 'webgpu' && GPU_LAYOUTS[op] !== undefined && !GPU_LAYOUTS[op].layouts.includes(layout);
}

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

describeEach(['cpu', 'webgpu'] as const, 'differential vs PyTorch on %s', (kind) => {
  test.each(Object.keys(FIXTURES.ops))('%s', (op) =>
    on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
      expect(OPS[op]).toBeDefined();
      const failures: string[] = [];
      const pending: [string, Check][] = [];
      for (const c of FIXTURES.ops[op]) {
        const key = `${op}/${c.layout}`;
        if (skipped(kind, op, c.layout)) continue;
        const r = runCase(op, c);
        if (r.length && typeof r[0] === 'string') failures.push(`${key}: ${r.join('; ')}`);
        else for (const check of r as Check[]) pending.push([key, check]);
      }
      // All readbacks at once: on WebGPU each one waits for the queue, so overlapping them is
      // most of this suite's speed.
      const data = await Promise.all(pending.map(([, ch]) => ch.got.data()));
      pending.forEach(([key, ch], i) => {
        const bad = mismatch(ch, data[i]);
        if (bad.length) failures.push(`${key}: ${bad.join('; ')}`);
      });
      expect(failures).toEqual([]);
    }),
  );
});

test('every op in the registry has fixtures, and every table entry names a real case', () => {
  expect(Object.keys(OPS).sort()).toEqual(Object.keys(FIXTURES.ops).sort());
  const cases = new Set(Object.entries(FIXTURES.ops).flatMap(([op, cs]) => cs.map((c) => `${op}/${c.layout}`)));
  for (const key of [...Object.keys(DIVERGENCES), ...Object.keys(KNOWN_BUGS)])
    expect(cases.has(key.replace(/^(cpu|webgpu):/, ''))).toBe(true);
});
