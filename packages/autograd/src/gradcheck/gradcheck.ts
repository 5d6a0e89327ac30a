import { NDArray, ValueError, fmtShape, randomArray } from '@surf/core';
import { noGrad } from '../grad-mode';
import { tidy } from '../scope';
import { Tensor } from '../tensor';

/**
 * Checks analytic gradients against central finite differences.
 *
 * fn's output y is reduced to the scalar L = Σ v·y with a fixed pseudo-random v (so every
 * output element matters and errors cannot cancel by symmetry). For each element x_j of each
 * input that requires grad, the numeric derivative is
 *   (L(x_j + eps) - L(x_j - eps)) / (x⁺_j - x⁻_j)
 * with two float32-specific precautions: the step is divided by the perturbed values as
 * actually stored in float32 (not by 2·eps), and L is summed on the host in float64 from the
 * float32 outputs read back, so only the outputs' own float32 rounding (≈ 6e-8·|y|) is
 * noise, amplified by 1/(2·eps). With the defaults eps = 1e-3, that noise is ≈ 3e-5·|y|
 * while the truncation error of central differences is ≈ eps²·|f'''|/6 ≈ 2e-7·|f'''|;
 * atol = 1e-3 and rtol = 1e-2 sit well above both for inputs of order 1. An element passes
 * when |analytic - numeric| <= atol + rtol·|numeric|.
 */
export interface GradcheckOptions {
  eps?: number;
  atol?: number;
  rtol?: number;
  /** Seed of the cotangent v. */
  seed?: number;
}

export interface GradcheckWorst {
  input: number;
  /** Multi-index of the element within that input. */
  index: number[];
  analytic: number;
  numeric: number;
  absError: number;
}

export interface GradcheckReport {
  ok: boolean;
  /** Largest |analytic - numeric| over all checked elements. */
  maxAbsError: number;
  /** The element with the largest error relative to its tolerance (null when nothing was checked). */
  worst: GradcheckWorst | null;
  /** Number of checked elements. */
  checked: number;
  /** The forward output, read back (for forward checks). */
  output: Float32Array;
  /** Analytic gradients per input (null for inputs that do not require grad). */
  analytic: (Float32Array | null)[];
  numeric: (Float64Array | null)[];
  summary: string;
}

function unravel(i: number, shape: readonly number[]): number[] {
  const idx = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) { idx[d] = i % shape[d]; i = Math.floor(i / shape[d]); }
  return idx;
}

async function readOut(y: Tensor): Promise<Float32Array> {
  if (!(y instanceof Tensor)) throw new ValueError('gradcheck: fn must return a Tensor');
  if (y.dtype !== 'float32') throw new ValueError(`gradcheck: fn returned dtype ${y.dtype}; expected float32`);
  return (await y.data()) as Float32Array;
}

export async function gradcheck(fn: (...xs: Tensor[]) => Tensor, inputs: readonly Tensor[], opts: GradcheckOptions = {}): Promise<GradcheckReport> {
  const eps = opts.eps ?? 1e-3;
  const atol = opts.atol ?? 1e-3;
  const rtol = opts.rtol ?? 1e-2;
  inputs.forEach((x, i) => { if (!(x instanceof Tensor)) throw new ValueError(`gradcheck: input ${i} is not a Tensor`); });

  // Analytic: one backward of L = Σ v·y, with the inputs' previous grads put aside.
  const prevGrads = inputs.map((x) => x._swapGrad(null));
  let output!: Float32Array;
  let v!: Float32Array;
  let analytic: (Float32Array | null)[] = [];
  try {
    const y = fn(...inputs);
    output = await readOut(y);
    v = output.length === 1 ? new Float32Array([1]) : randomArray('uniform', output.length, `gradcheck/${opts.seed ?? 0}`, -1, 1);
    const vt = Tensor.fromNDArray(NDArray.fromData(y.ndarray.backend, v, y.shape));
    y.backward(vt);
    vt.dispose();
    y.dispose();
    analytic = await Promise.all(inputs.map(async (x) => {
      if (!x.requiresGrad) return null;
      if (!x.grad) return new Float32Array(x.numel);
      return (await x.grad.data()) as Float32Array;
    }));
  } finally {
    inputs.forEach((x, i) => { x._swapGrad(prevGrads[i])?.dispose(); });
  }

  // Numeric: perturb one element at a time, evaluate without a graph.
  const host = await Promise.all(inputs.map(async (x) => Float32Array.from((await x.data()) as ArrayLike<number>)));
  const numeric: (Float64Array | null)[] = [];
  let worst: GradcheckWorst | null = null;
  let worstRatio = -1;
  let maxAbsError = 0;
  let checked = 0;
  for (let i = 0; i < inputs.length; i++) {
    const x = inputs[i];
    if (!x.requiresGrad) { numeric.push(null); continue; }
    const num = new Float64Array(x.numel);
    const data = host[i];
    for (let j = 0; j < data.length; j++) {
      const L: number[] = [];
      const stored: number[] = [];
      for (const s of [1, -1]) {
        const p = data.slice();
        p[j] = data[j] + s * eps;
        stored.push(p[j]);
        const y = noGrad(() => tidy(() => {
          const px = Tensor.fromNDArray(NDArray.fromData(x.ndarray.backend, p, x.shape));
          return fn(...inputs.map((t, k) => (k === i ? px : t)));
        }));
        const out = await readOut(y);
        y.dispose();
        let acc = 0;
        for (let k = 0; k < out.length; k++) acc += v[k] * out[k];
        L.push(acc);
      }
      num[j] = (L[0] - L[1]) / (stored[0] - stored[1]);
      const a = analytic[i]![j];
      const err = Math.abs(a - num[j]);
      const tol = atol + rtol * Math.abs(num[j]);
      const ratio = Number.isNaN(err) ? (Number.isNaN(a) && Number.isNaN(num[j]) ? 0 : Infinity) : err / tol;
      if (!Number.isNaN(err)) maxAbsError = Math.max(maxAbsError, err);
      if (ratio > worstRatio) { worstRatio = ratio; worst = { input: i, index: unravel(j, x.shape), analytic: a, numeric: num[j], absError: err }; }
      checked++;
    }
    numeric.push(num);
  }
  const ok = worstRatio <= 1;
  const summary = worst
    ? `${ok ? 'ok' : 'FAILED'}: ${checked} elements, max |error| ${maxAbsError.toExponential(2)}; worst input ${worst.input} ${fmtShape(inputs[worst.input].shape)} at ${fmtShape(worst.index)}: analytic ${worst.analytic}, numeric ${worst.numeric}`
    : 'ok: no input requires grad';
  return { ok, maxAbsError, worst, checked, output, analytic, numeric, summary };
}
