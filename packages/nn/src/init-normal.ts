import { ShapeError, ValueError, fmtShape, withDefaults } from '@surf/core';
import { Tensor, cat, noGrad, rand, randn, tidy } from '@surf/autograd';
import { Nonlinearity, calculateGain, fans, normal } from './init';

/**
 * The normal-family initialisers of PyTorch's nn.init: kaiming_normal_, xavier_normal_,
 * trunc_normal_ and orthogonal_, in place, drawing from the global seed. Computed on the
 * tensor's backend with tensor ops, so no readback is needed.
 */

function fill(t: Tensor, make: () => Tensor): Tensor {
  const r = noGrad(() => tidy(() => make().reshape(t.shape).contiguous()));
  t.assign(r);
  r.dispose();
  return t;
}

/** N(0, std²) with std = gain/√fan: He initialisation (defaults a = 0, mode 'fanIn', 'leakyRelu'). */
export function kaimingNormal(
  t: Tensor,
  opts: { a?: number; mode?: 'fanIn' | 'fanOut'; nonlinearity?: Nonlinearity } = {},
): Tensor {
  const o = withDefaults(
    'init.kaimingNormal',
    opts,
    { a: 'finite', mode: ['fanIn', 'fanOut'], nonlinearity: 'string' },
    { a: 0, mode: 'fanIn' as 'fanIn' | 'fanOut', nonlinearity: 'leakyRelu' as Nonlinearity },
  );
  const [fanIn, fanOut] = fans(t.shape);
  const fan = o.mode === 'fanIn' ? fanIn : fanOut;
  const std = fan === 0 ? 0 : calculateGain(o.nonlinearity, o.a) / Math.sqrt(fan);
  return normal(t, 0, std);
}

/** N(0, std²) with std = gain·√(2/(fanIn + fanOut)): Glorot initialisation. */
export function xavierNormal(t: Tensor, gain = 1): Tensor {
  if (typeof gain !== 'number' || !Number.isFinite(gain))
    throw new ValueError(`init.xavierNormal: gain must be a finite number; got ${String(gain)}`);
  const [fanIn, fanOut] = fans(t.shape);
  return normal(t, 0, gain * Math.sqrt(2 / (fanIn + fanOut)));
}

/** erf(x) on the host (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7): for the truncation bounds. */
function erf(x: number): number {
  const s = Math.sign(x),
    a = Math.abs(x);
  const k = 1 / (1 + 0.3275911 * a);
  const y =
    1 -
    ((((1.061405429 * k - 1.453152027) * k + 1.421413741) * k - 0.284496736) * k + 0.254829592) * k * Math.exp(-a * a);
  return s * y;
}

/** erf⁻¹ of a tensor in (−1, 1): Giles' single-precision approximation, in tensor ops. */
function erfinv(x: Tensor): Tensor {
  const w = x.mul(x).neg().add(1).log().neg();
  const horner = (z: Tensor, cs: number[]) => cs.slice(1).reduce((p, c) => p.mul(z).add(c), z.mul(0).add(cs[0]));
  const small = horner(
    w.sub(2.5),
    [
      2.81022636e-8, 3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 0.00021858087, -0.00125372503, -0.00417768164,
      0.246640727, 1.50140941,
    ],
  );
  const big = horner(
    w.maximum(5).sqrt().sub(3),
    [
      -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
      1.00167406, 2.83297682,
    ],
  );
  return Tensor.where(w.lt(5), small, big).mul(x);
}

/**
 * N(mean, std²) restricted to [a, b] (defaults 0, 1, −2, 2: absolute bounds, as PyTorch's),
 * by PyTorch's method: uniform over the bounds' CDF range, then the inverse normal CDF.
 */
export function truncNormal(t: Tensor, opts: { mean?: number; std?: number; a?: number; b?: number } = {}): Tensor {
  const o = withDefaults(
    'init.truncNormal',
    opts,
    { mean: 'finite', std: 'nonnegative', a: 'number', b: 'number' },
    { mean: 0, std: 1, a: -2, b: 2 },
  );
  if (!(o.b > o.a)) throw new ValueError(`init.truncNormal: b (${o.b}) must be greater than a (${o.a})`);
  const cdf = (v: number) => (1 + erf((v - o.mean) / (o.std * Math.SQRT2))) / 2;
  const lo = 2 * cdf(o.a) - 1,
    hi = 2 * cdf(o.b) - 1;
  return fill(t, () =>
    erfinv(
      rand(t.shape)
        .mul(hi - lo)
        .add(lo)
        .clamp(-1 + 1e-7, 1 - 1e-7),
    )
      .mul(o.std * Math.SQRT2)
      .add(o.mean)
      .clamp(o.a, o.b),
  );
}

/**
 * A (semi-)orthogonal matrix times gain (PyTorch's orthogonal_): the tensor viewed as
 * [rows, rest]; the Q factor of a Gaussian matrix with R's diagonal made positive, as PyTorch
 * does. Q comes from Gram-Schmidt, twice per column (stable to float32 rounding).
 */
export function orthogonal(t: Tensor, gain = 1): Tensor {
  if (t.ndim < 2)
    throw new ShapeError(`init.orthogonal: needs a tensor with at least 2 dims; got shape ${fmtShape(t.shape)}`);
  if (typeof gain !== 'number' || !Number.isFinite(gain))
    throw new ValueError(`init.orthogonal: gain must be a finite number; got ${String(gain)}`);
  const rows = t.shape[0],
    cols = t.numel / rows;
  if (t.numel === 0) return t;
  return fill(t, () => {
    const g = randn([rows, cols]);
    const A = rows < cols ? g.transpose(0, 1) : g; // tall: m >= n
    const n = A.shape[1];
    let Q: Tensor | null = null;
    for (let j = 0; j < n; j++) {
      let v = A.narrow(1, j, 1);
      for (let pass = 0; pass < 2 && Q; pass++) v = v.sub(Q.matmul(Q.transpose(0, 1).matmul(v)));
      v = v.div(v.norm());
      Q = Q ? cat([Q, v], 1) : v;
    }
    return (rows < cols ? Q!.transpose(0, 1) : Q!).mul(gain);
  });
}
