import { Tensor, tensor } from '@surf/autograd';
import { DT, size } from './oracle';
import { Rng } from './rng';

/** A tensor described on the host, so the same case can be built on any backend. */
export interface InputSpec {
  shape: number[];
  dtype: DT;
  values: number[];
  requiresGrad: boolean;
}

/** Shapes of rank 0-3 with small dims and, rarely, a 0 (empty tensors). */
export function randomShape(rng: Rng, maxRank = 3): number[] {
  const rank = rng.int(0, maxRank);
  return Array.from({ length: rank }, () => (rng.chance(0.04) ? 0 : rng.int(1, 4)));
}

export function randomDType(rng: Rng): DT {
  return rng.pick<DT>(['float32', 'float32', 'float32', 'int32', 'bool']);
}

/**
 * Floats are multiples of 1/16 in [-3, 3] (many exact results, ties for max/argmax, zeros for
 * log/div), ints are in [-4, 4], bools 0/1.
 */
export function randomInput(rng: Rng, shape: readonly number[], dtype: DT, gradOk = true): InputSpec {
  const n = size(shape);
  const values = Array.from({ length: n }, () =>
    dtype === 'float32'
      ? rng.chance(0.1)
        ? 0
        : rng.int(-48, 48) / 16
      : dtype === 'int32'
        ? rng.int(-4, 4)
        : rng.int(0, 1),
  );
  return { shape: shape.slice(), dtype, values, requiresGrad: gradOk && dtype === 'float32' && rng.chance(0.5) };
}

/** Builds the spec as a leaf tensor on the current backend. */
export function materialize(spec: InputSpec): Tensor {
  const data =
    spec.dtype === 'float32'
      ? Float32Array.from(spec.values)
      : spec.dtype === 'int32'
        ? Int32Array.from(spec.values)
        : Uint8Array.from(spec.values);
  const flat = tensor(data, { dtype: spec.dtype });
  const t = flat.reshape(spec.shape);
  flat.dispose();
  if (spec.requiresGrad) t.requiresGrad_(true);
  return t;
}
