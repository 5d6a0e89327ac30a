import { NDArray, ValueError, fmtShape, parseOptions, randomArray } from '@surf/core';
import { noGrad } from '../grad-mode';
import { tidy } from '../scope';
import { Tensor } from '../tensor';

/**
 * Checks analytic gradients against central finite differences.
 *
 * fn's output y is reduced to the scalar L = Σ v·y with a fixed pseudo-random v (so every
 * output element matters and errors cannot cancel by symmetry). For each element x_j of each
 * input that requires grad, the numeric derivative is
 *   (L(x_j + h_j) - L(x_j - h_j)) / (x⁺_j - x⁻_j)
 * with two float32-specific precautions: the step is divided by the perturbed values as
 * actually stored in float32 (not by 2·h), and L is summed on the host in float64 from the
 * float32 outputs read back.
 *
 * Both the step and the tolerance follow the magnitudes involved, so a correct function
 * passes at the defaults whether its values are near 1e2 or 1e-2:
 * - step h_j = eps·min(1, max(|x_j|, min(1, 10·max|x|))) over that input: eps (1e-3) for
 *   inputs of order 1 or larger, and smaller for inputs that are all small (so log(x) at
 *   x = 5e-3 is not stepped across its singularity);
 * - tolerance atol + rtol·|numeric| + noise_j, where noise_j = 2·2⁻²⁴·Σ_k |v_k|·max|y_k| /
 *   (x⁺_j - x⁻_j) bounds what float32 rounding of the outputs alone does to the quotient
 *   (for an output of 156 it is ≈ 1e-2, above atol; for outputs of order 1, ≈ 1e-4).
 * An element passes when |analytic - numeric| <= that tolerance. Explicit `eps` fixes h_j = eps.
 */
export interface GradcheckOptions {
  /** A fixed finite-difference step for every element (default: scaled, see above). */
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
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = i % shape[d];
    i = Math.floor(i / shape[d]);
  }
  return idx;
}

async function readOut(y: Tensor): Promise<Float32Array> {
  if (!(y instanceof Tensor)) throw new ValueError('gradcheck: fn must return a Tensor');
  if (y.dtype !== 'float32') throw new ValueError(`gradcheck: fn returned dtype ${y.dtype}; expected float32`);
  return (await y.data()) as Float32Array;
}

export async function gradcheck(
  fn: (...xs: Tensor[]) => Tensor,
  inputs: readonly Tensor[],
  opts: GradcheckOptions = {},
): Promise<GradcheckReport> {
  opts = parseOptions<GradcheckOptions>('gradcheck', opts, {
    eps: 'positive',
    atol: 'nonnegative',
    rtol: 'nonnegative',
    seed: 'int',
  });
  const eps0 = opts.eps ?? 1e-3;
  const fixedStep = opts.eps !== undefined;
  const atol = opts.atol ?? 1e-3;
  const rtol = opts.rtol ?? 1e-2;
  inputs.forEach((x, i) => {
    if (!(x instanceof Tensor)) throw new ValueError(`gradcheck: input ${i} is not a Tensor`);
  });

  // Analytic: one backward of L = Σ v·y, with the inputs' previous grads put aside.
  const prevGrads = inputs.map((x) => x._swapGrad(null));
  let output!: Float32Array;
  let v!: Float32Array;
  let analytic: (Float32Array | null)[] = [];
  try {
    const y = fn(...inputs);
    output = await readOut(y);
    v =
      output.length === 1
        ? new Float32Array([1])
        : randomArray('uniform', output.length, `gradcheck/${opts.seed ?? 0}`, -1, 1);
    const vt = Tensor.fromNDArray(NDArray.fromData(y.ndarray.backend, v, y.shape));
    y.backward(vt);
    vt.dispose();
    y.dispose();
    analytic = await Promise.all(
      inputs.map(async (x) => {
        if (!x.requiresGrad) return null;
        if (!x.grad) return new Float32Array(x.numel);
        return (await x.grad.data()) as Float32Array;
      }),
    );
  } finally {
    inputs.forEach((x, i) => {
      x._swapGrad(prevGrads[i])?.dispose();
    });
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
    if (!x.requiresGrad) {
      numeric.push(null);
      continue;
    }
    const num = new Float64Array(x.numel);
    const data = host[i];
    let maxAbs = 0;
    for (let j = 0; j < data.length; j++) maxAbs = Math.max(maxAbs, Math.abs(data[j]));
    const floor = Math.min(1, 10 * maxAbs) || 1;
    for (let j = 0; j < data.length; j++) {
      const L: number[] = [];
      const stored: number[] = [];
      // Never larger than eps: a larger step would cross the rounding boundaries that cases
      // place eps away from their inputs (round, floor); smaller for inputs that are all small.
      const h = fixedStep ? eps0 : eps0 * Math.min(1, Math.max(Math.abs(data[j]), floor));
      // Σ|v|·max|y| over both evaluations: the scale of the outputs' float32 rounding.
      let mag = 0;
      const absOut = new Float64Array(output.length);
      for (const s of [1, -1]) {
        const p = data.slice();
        p[j] = data[j] + s * h;
        stored.push(p[j]);
        const y = noGrad(() =>
          tidy(() => {
            const px = Tensor.fromNDArray(NDArray.fromData(x.ndarray.backend, p, x.shape));
            return fn(...inputs.map((t, k) => (k === i ? px : t)));
          }),
        );
        const out = await readOut(y);
        y.dispose();
        let acc = 0;
        for (let k = 0; k < out.length; k++) {
          acc += v[k] * out[k];
          absOut[k] = Math.max(absOut[k], Math.abs(out[k]));
        }
        L.push(acc);
      }
      for (let k = 0; k < output.length; k++) mag += Math.abs(v[k]) * Math.max(absOut[k], Math.abs(output[k]));
      num[j] = (L[0] - L[1]) / (stored[0] - stored[1]);
      const a = analytic[i]![j];
      const err = Math.abs(a - num[j]);
      const noise = (2 * 2 ** -24 * mag) / Math.abs(stored[0] - stored[1]);
      const tol = atol + rtol * Math.abs(num[j]) + (Number.isFinite(noise) ? noise : 0);
      const ratio = Number.isNaN(err) ? (Number.isNaN(a) && Number.isNaN(num[j]) ? 0 : Infinity) : err / tol;
      if (!Number.isNaN(err)) maxAbsError = Math.max(maxAbsError, err);
      if (ratio > worstRatio) {
        worstRatio = ratio;
        worst = { input: i, index: unravel(j, x.shape), analytic: a, numeric: num[j], absError: err };
      }
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
