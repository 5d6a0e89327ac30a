import { Backend, CpuBackend, NDArray, randomArray, parseOptions } from '@surf/core';
import { setBackend } from '../context';
import { tidy } from '../scope';
import { Tensor } from '../tensor';
import type { GradcheckCase } from './case';
import { gradcheckCases } from './cases/cases';
import { copyCases } from './cases/copies';
import { gradcheck } from './gradcheck';
import { Host } from './host';
import { hostValues, makeInput } from './inputs';

export type { GradcheckCase } from './case';

/**
 * Runs the gradient-check cases on one backend.
 * - Without `reference`: forward against the case's float64 host reference (|err| <=
 *   FORWARD_ATOL + FORWARD_RTOL·|ref|), gradients against central finite differences
 *   (gradcheck's eps/atol/rtol, per-case overrides), and hand-worked `expected` numbers.
 * - With `reference` (the CPU backend): the backend's forward output and analytic gradients
 *   must match the reference backend's within refAtol + REF_RTOL·|ref| (default refAtol
 *   1e-3: WGSL allows exp/log a few ulp and sin/cos an absolute 2^-11 error).
 */
export const FORWARD_ATOL = 1e-5;
export const FORWARD_RTOL = 1e-4;
export const REF_ATOL = 1e-3;
export const REF_RTOL = 1e-3;
const EXPECTED_RTOL = 1e-5;

export interface SuiteResult {
  name: string;
  op: string;
  backend: string;
  mode: 'finite-differences' | 'vs-reference';
  ok: boolean;
  /** Max |forward - reference| (host reference or reference backend); null when unchecked. */
  forwardError: number | null;
  /** Max |analytic - numeric| (or - reference backend's analytic). */
  gradError: number;
  checked: number;
  detail: string;
  ms: number;
}

export function gradcheckSuite(): GradcheckCase[] {
  // boundaries: copies and same-dtype casts, found missing by the coverage check (coverage.ts).
  return [...gradcheckCases(), ...copyCases()];
}

function maxErr(
  got: ArrayLike<number>,
  want: ArrayLike<number>,
  atol: number,
  rtol: number,
): { err: number; ok: boolean; at: number } {
  let err = 0,
    ok = got.length === want.length,
    at = -1;
  for (let i = 0; i < Math.min(got.length, want.length); i++) {
    const g = got[i],
      w = want[i];
    if (Number.isNaN(g) && Number.isNaN(w)) continue;
    if (g === w) continue; // equal infinities
    const e = Math.abs(g - w);
    if (!(e <= atol + rtol * Math.abs(w))) {
      ok = false;
      if (at < 0) at = i;
    }
    if (e > err || Number.isNaN(e)) {
      err = Number.isNaN(e) ? Infinity : e;
    }
  }
  return { err, ok, at };
}

function inputsFor(backend: Backend, c: GradcheckCase): { hosts: Host[]; tensors: Tensor[] } {
  const hosts = c.inputs.map((s, i) => hostValues(s, `${c.name}/${i}`));
  const tensors = c.inputs.map((s, i) => makeInput(backend, s, hosts[i]));
  return { hosts, tensors };
}

/** Forward output and analytic gradients of Σ v·y on one backend. */
async function evaluate(
  backend: Backend,
  c: GradcheckCase,
): Promise<{ out: Float32Array; grads: (Float32Array | null)[] }> {
  const prev = setBackend(backend);
  const { tensors } = inputsFor(backend, c);
  try {
    const y = c.fn(...tensors);
    const out = (await y.data()) as Float32Array;
    const v = out.length === 1 ? new Float32Array([1]) : randomArray('uniform', out.length, 'gradcheck/0', -1, 1);
    tidy(() => y.backward(Tensor.fromNDArray(NDArray.fromData(backend, v, y.shape))));
    y.dispose();
    const grads = await Promise.all(
      tensors.map(async (t) =>
        t.requiresGrad ? (t.grad ? ((await t.grad.data()) as Float32Array) : new Float32Array(t.numel)) : null,
      ),
    );
    return { out, grads };
  } finally {
    tensors.forEach((t) => t.dispose());
    setBackend(prev);
  }
}

async function runFD(backend: Backend, c: GradcheckCase): Promise<Omit<SuiteResult, 'ms'>> {
  const prev = setBackend(backend);
  const { hosts, tensors } = inputsFor(backend, c);
  try {
    const rep = await gradcheck(c.fn, tensors, { eps: c.eps, atol: c.atol, rtol: c.rtol });
    const notes: string[] = [];
    let ok = rep.ok;
    let forwardError: number | null = null;
    if (c.forward) {
      const ref = c.forward(...hosts);
      const m = maxErr(rep.output, ref.data, FORWARD_ATOL, FORWARD_RTOL);
      forwardError = m.err;
      if (!m.ok) {
        ok = false;
        notes.push(
          `forward differs from the host reference at element ${m.at}: ${rep.output[m.at]} vs ${ref.data[m.at]}`,
        );
      }
    }
    if (c.expected) {
      const m = maxErr(rep.output, c.expected.output, 0, EXPECTED_RTOL);
      if (!m.ok) {
        ok = false;
        notes.push(`output ${Array.from(rep.output)} != expected ${c.expected.output}`);
      }
      c.expected.grads.forEach((g, i) => {
        if (!g) return;
        const mg = maxErr(rep.analytic[i] ?? [], g, 1e-6, c.rtol ?? EXPECTED_RTOL);
        if (!mg.ok) {
          ok = false;
          notes.push(`grad of input ${i} ${Array.from(rep.analytic[i] ?? [])} != expected ${g}`);
        }
      });
    }
    return {
      name: c.name,
      op: c.op,
      backend: backend.name,
      mode: 'finite-differences',
      ok,
      forwardError,
      gradError: rep.maxAbsError,
      checked: rep.checked,
      detail: [rep.summary, ...notes].join('; '),
    };
  } finally {
    tensors.forEach((t) => t.dispose());
    setBackend(prev);
  }
}

async function runVsReference(
  backend: Backend,
  reference: Backend,
  c: GradcheckCase,
): Promise<Omit<SuiteResult, 'ms'>> {
  const got = await evaluate(backend, c);
  const want = await evaluate(reference, c);
  const atol = c.refAtol ?? REF_ATOL;
  const f = maxErr(got.out, want.out, atol, REF_RTOL);
  const notes: string[] = [];
  if (!f.ok) notes.push(`forward element ${f.at}: ${got.out[f.at]} vs ${reference.name} ${want.out[f.at]}`);
  let gradError = 0;
  let checked = 0;
  let ok = f.ok;
  got.grads.forEach((g, i) => {
    const w = want.grads[i];
    if (!g || !w) return;
    const m = maxErr(g, w, atol, REF_RTOL);
    gradError = Math.max(gradError, m.err);
    checked += g.length;
    if (!m.ok) {
      ok = false;
      notes.push(`grad of input ${i} element ${m.at}: ${g[m.at]} vs ${reference.name} ${w[m.at]}`);
    }
  });
  const detail = ok
    ? `ok: ${checked} gradient elements within ${atol} + ${REF_RTOL}·|ref| of ${reference.name}`
    : `FAILED: ${notes.join('; ')}`;
  return {
    name: c.name,
    op: c.op,
    backend: backend.name,
    mode: 'vs-reference',
    ok,
    forwardError: f.err,
    gradError,
    checked,
    detail,
  };
}

export interface SuiteOptions {
  /** Backend to check (default: a fresh CPU backend). */
  backend?: Backend;
  /** Compare against this backend's results instead of finite differences. */
  reference?: Backend;
  /** Only cases whose name or op includes this string. */
  filter?: string;
  cases?: GradcheckCase[];
}

export async function runGradcheckSuite(opts: SuiteOptions = {}): Promise<SuiteResult[]> {
  opts = parseOptions<SuiteOptions>('runGradcheckSuite', opts, {
    backend: 'object',
    reference: 'object',
    filter: 'string',
    cases: 'array',
  });
  const backend = opts.backend ?? new CpuBackend();
  const cases = (opts.cases ?? gradcheckCases()).filter(
    (c) => !opts.filter || c.name.includes(opts.filter) || c.op === opts.filter,
  );
  const results: SuiteResult[] = [];
  for (const c of cases) {
    const t0 = Date.now();
    let r: Omit<SuiteResult, 'ms'>;
    try {
      r = opts.reference ? await runVsReference(backend, opts.reference, c) : await runFD(backend, c);
    } catch (e) {
      r = {
        name: c.name,
        op: c.op,
        backend: backend.name,
        mode: opts.reference ? 'vs-reference' : 'finite-differences',
        ok: false,
        forwardError: null,
        gradError: NaN,
        checked: 0,
        detail: `threw ${(e as Error).name}: ${(e as Error).message}`,
      };
    }
    results.push({ ...r, ms: Date.now() - t0 });
  }
  return results;
}
