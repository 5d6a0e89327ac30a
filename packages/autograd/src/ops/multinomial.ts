import { DTypeError, E, NDArray, ShapeError, ValueError, fmtShape, parseOptions, sortAlong } from '@surf/core';
import { drawRandom } from '../random';
import { Tensor } from '../tensor';
import { scanArray } from './scan';

/**
 * torch.multinomial: `numSamples` category indices (int32) per row of non-negative weights
 * (1-d [C] or 2-d [rows, C]; they need not sum to 1). The uniforms come from the global seed
 * (manualSeed), drawn on the device by Philox, so a seeded program draws the same samples on
 * every backend.
 *  - with replacement: inverse CDF; a sample is the number of running sums below u·total
 *    (one compare-and-count over [rows, n, C]).
 *  - without replacement: the Gumbel-top-k trick (log w − log(−log u), keep the n largest),
 *    which draws exactly as sequential sampling without replacement does.
 * Weights are not read back: negative or all-zero rows are not detected (they give
 * meaningless samples, where PyTorch raises).
 */
export function multinomial(probs: Tensor, numSamples: number, opts: { replacement?: boolean } = {}): Tensor {
  if (!(probs instanceof Tensor)) throw new ValueError('multinomial: probs must be a Tensor');
  opts = parseOptions<typeof opts>('multinomial', opts, { replacement: 'boolean' });
  const nd0 = probs.nd('multinomial');
  if (nd0.dtype !== 'float32') throw new DTypeError(`multinomial: probs have dtype ${nd0.dtype}; expected float32`);
  if (nd0.ndim !== 1 && nd0.ndim !== 2)
    throw new ShapeError(`multinomial: probs of shape ${fmtShape(nd0.shape)}; expected 1-d [C] or 2-d [rows, C]`);
  const C = nd0.shape[nd0.ndim - 1];
  const replacement = !!opts.replacement;
  if (!Number.isInteger(numSamples) || numSamples <= 0)
    throw new ValueError(`multinomial: numSamples ${numSamples}; expected a positive integer`);
  if (C === 0) throw new ShapeError('multinomial: probs have 0 categories');
  if (!replacement && numSamples > C)
    throw new ValueError(
      `multinomial: cannot draw ${numSamples} samples without replacement from ${C} categories (pass { replacement: true })`,
    );
  const nd = nd0.ndim === 1 ? nd0.reshape([1, C]) : nd0.reshape(nd0.shape);
  const rows = nd.shape[0];
  const n = numSamples;
  let out: NDArray;
  if (replacement) {
    const cdf = scanArray(nd, 1, 'add');
    const total = cdf.crop([
      [0, rows],
      [C - 1, C],
    ]);
    const u = drawRandom('multinomial', [rows, n, 1], { dist: 'uniform' }, nd.backend);
    const c3 = cdf.reshape([rows, 1, C]);
    const t3 = total.reshape([rows, 1, 1]);
    const [below] = NDArray.elementwise(
      [E.cast(E.lt(E.in(0), E.mul(E.in(1), E.in(2))), 'int32')],
      [c3, u, t3],
      'multinomial',
    );
    [cdf, total, u, c3, t3].forEach((a) => a.dispose());
    const count = below.sum(2);
    below.dispose();
    // u·total can round up to the total itself: clamp to the last category.
    out = count.map(E.where(E.lt(E.in(0), E.i(C - 1)), E.in(0), E.i(C - 1)));
    count.dispose();
  } else {
    const u = drawRandom('multinomial', [rows, C], { dist: 'uniform' }, nd.backend);
    // log w − log(−log u); u = 0 would give −inf noise, so it is nudged into (0, 1).
    const uu = E.max(E.in(1), E.f(1e-30));
    const [keys] = NDArray.elementwise([E.sub(E.log(E.in(0)), E.log(E.neg(E.log(uu))))], [nd, u], 'multinomial');
    u.dispose();
    const [v, i] = sortAlong(keys, 1, true);
    keys.dispose();
    v.dispose();
    out = i.crop([
      [0, rows],
      [0, n],
    ]);
    i.dispose();
  }
  nd.dispose();
  if (nd0.ndim === 1) {
    const r = out.reshape([n]);
    out.dispose();
    out = r;
  }
  return new Tensor(out);
}
