import { Backend, NDArray, randomArray } from '@surf/core';
import { Tensor } from '../tensor';
import { Host, build, at } from './host';

/**
 * How a suite case's inputs are made: values (seeded, or explicit) and a memory layout, so
 * every op is also checked on non-contiguous operands: a transposed view (strides swapped),
 * a flipped view (negative stride and offset), or a slice of a wider buffer (row stride >
 * row length, non-zero offset). The values are the same whatever the layout.
 */
export type Values = 'normal' | 'positive' | 'unit' | number[];
export type Layout = 'contiguous' | 'transposed' | 'flipped' | 'sliced';

export interface InputSpec {
  shape: number[];
  values?: Values;
  layout?: Layout;
  /** Default true for float32 inputs. */
  requiresGrad?: boolean;
  dtype?: 'float32' | 'int32';
}

export function hostValues(spec: InputSpec, seed: string): Host {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  const v = spec.values ?? 'normal';
  let data: number[];
  if (Array.isArray(v)) data = v.slice();
  else if (v === 'normal') data = Array.from(randomArray('normal', n, seed, 0, 1));
  else if (v === 'positive') data = Array.from(randomArray('uniform', n, seed, 0.5, 2));
  else data = Array.from(randomArray('uniform', n, seed, -0.9, 0.9));
  if (data.length !== n) throw new Error(`suite input: ${data.length} values for shape [${spec.shape}]`);
  // The backend stores float32: the host reference must see the same numbers.
  return { data: spec.dtype === 'int32' ? data : Array.from(Float32Array.from(data)), shape: spec.shape.slice() };
}

export function makeInput(backend: Backend, spec: InputSpec, h: Host): Tensor {
  const dtype = spec.dtype ?? 'float32';
  const layout = spec.layout ?? 'contiguous';
  const shape = spec.shape;
  const nd = shape.length;
  const up = (x: Host) =>
    NDArray.fromData(backend, dtype === 'int32' ? Int32Array.from(x.data) : Float32Array.from(x.data), x.shape, dtype);
  let arr: NDArray;
  if (layout === 'transposed' && nd >= 2) {
    // Store the transpose contiguously, then view it transposed back.
    const tShape = shape.slice();
    [tShape[nd - 2], tShape[nd - 1]] = [tShape[nd - 1], tShape[nd - 2]];
    const stored = up(
      build(tShape, (idx) => {
        const j = idx.slice();
        [j[nd - 2], j[nd - 1]] = [j[nd - 1], j[nd - 2]];
        return at(h, j);
      }),
    );
    const order = [...shape.keys()];
    [order[nd - 2], order[nd - 1]] = [order[nd - 1], order[nd - 2]];
    arr = stored.permute(order);
    stored.dispose();
  } else if (layout === 'flipped' && nd >= 1) {
    const stored = up(
      build(shape, (idx) =>
        at(
          h,
          idx.map((v, i) => (i === 0 ? shape[0] - 1 - v : v)),
        ),
      ),
    );
    arr = stored.flip(0);
    stored.dispose();
  } else if (layout === 'sliced' && nd >= 1) {
    const wide = shape.slice();
    wide[nd - 1] += 3;
    const stored = up(
      build(wide, (idx) =>
        idx[nd - 1] >= 1 && idx[nd - 1] <= shape[nd - 1]
          ? at(
              h,
              idx.map((v, i) => (i === nd - 1 ? v - 1 : v)),
            )
          : 1e6,
      ),
    );
    arr = stored.crop(wide.map((d, i) => (i === nd - 1 ? [1, 1 + shape[nd - 1]] : [0, d]) as [number, number]));
    stored.dispose();
  } else {
    arr = up(h);
  }
  return Tensor.fromNDArray(arr, { requiresGrad: dtype === 'float32' && spec.requiresGrad !== false });
}
