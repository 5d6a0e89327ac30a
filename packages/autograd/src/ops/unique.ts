import { NDArray, parseOptions } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';

export interface UniqueOptions {
  /** Accepted for PyTorch parity; the values always come back sorted ascending. */
  sorted?: boolean;
  /** Also return, for each input element, the position of its value in `values` (input's shape). */
  returnInverse?: boolean;
  /** Also return how often each value occurs. */
  returnCounts?: boolean;
}

export interface UniqueResult {
  /** The distinct values, ascending, 1-d, the input's dtype. */
  values: Tensor;
  /** int32, the input's shape (with returnInverse). */
  inverse?: Tensor;
  /** int32, like `values` (with returnCounts). */
  counts?: Tensor;
}

/**
 * torch.unique over all elements (no `dim`). It runs on the host: the output's length depends
 * on the data, so the values are read back (hence a Promise) and the results uploaded to the
 * input's backend. NaN is never equal to NaN, so each NaN is its own value (sorted last), as
 * PyTorch's CPU kernel. No gradient.
 */
export async function unique(x: Tensor, opts: UniqueOptions = {}): Promise<UniqueResult> {
  checkTensor('unique', x, 'input');
  const o = parseOptions<UniqueOptions>('unique', opts, {
    sorted: 'boolean',
    returnInverse: 'boolean',
    returnCounts: 'boolean',
  });
  const nd = x.nd('unique');
  const dtype = nd.dtype;
  const backend = nd.backend;
  const data = await x.data();
  const order = Array.from({ length: data.length }, (_, i) => i).sort((i, j) => {
    const a = data[i],
      b = data[j];
    if (Number.isNaN(a)) return Number.isNaN(b) ? i - j : 1;
    if (Number.isNaN(b)) return -1;
    return a - b || i - j;
  });
  const values: number[] = [];
  const counts: number[] = [];
  const inverse = new Int32Array(data.length);
  for (const i of order) {
    const v = data[i];
    if (values.length && values[values.length - 1] === v) counts[counts.length - 1]++;
    else {
      values.push(v);
      counts.push(1);
    }
    inverse[i] = values.length - 1;
  }
  const r: UniqueResult = {
    values: new Tensor(NDArray.fromData(backend, values, [values.length], dtype)),
  };
  if (o.returnInverse) r.inverse = new Tensor(NDArray.fromData(backend, inverse, nd.shape, 'int32'));
  if (o.returnCounts)
    r.counts = new Tensor(NDArray.fromData(backend, Int32Array.from(counts), [counts.length], 'int32'));
  return r;
}
