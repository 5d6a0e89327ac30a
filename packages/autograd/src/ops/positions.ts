import { E, Expr, NDArray, ShapeError, fmtShape } from '@surf/core';
import { X } from './fuse';

/**
 * Flat positions for the gather/scatter family: the contract gathers 1-d and scatters at
 * row-major flat positions, so every "pick along a dim" op computes, in one elementwise
 * kernel, the flat position in x of each element it reads or writes. Dims other than `dim`
 * use the element's own coordinate (an iota input per dim), dim `dim` uses the index value.
 * Positions outside x come out as -1, which the contract reads as 0 and skips when scattering.
 */
export function flatPositions(
  op: string,
  xShape: readonly number[],
  dim: number,
  idx: NDArray,
  outShape: readonly number[],
  opts: { wrap?: boolean } = {},
): NDArray {
  const nd = xShape.length;
  if (outShape.length !== nd)
    throw new ShapeError(
      `${op}: index shape ${fmtShape(outShape)} has ${outShape.length} dims; expected ${nd} like the input ${fmtShape(xShape)}`,
    );
  const strides = new Array<number>(nd);
  let s = 1;
  for (let d = nd - 1; d >= 0; d--) {
    strides[d] = s;
    s *= xShape[d];
  }
  const n = xShape[dim];
  const inputs: NDArray[] = [
    idx.shape.length === outShape.length && idx.shape.every((v, i) => v === outShape[i])
      ? idx.reshape(outShape)
      : idx.expand(outShape),
  ];
  let raw: Expr = E.in(0);
  // As PyTorch's indexing (not its gather): -1 is the last entry.
  if (opts.wrap) raw = E.where(E.lt(raw, E.i(0)), E.add(raw, E.i(n)), raw);
  let pos: Expr = E.mul(raw, E.i(strides[dim]));
  for (let d = 0; d < nd; d++) {
    if (d === dim || outShape[d] === 1 || strides[d] === 0) continue;
    const shape = outShape.map((v, i) => (i === d ? v : 1));
    inputs.push(
      NDArray.fromData(
        idx.backend,
        Int32Array.from({ length: outShape[d] }, (_, i) => i),
        shape,
      ),
    );
    pos = E.add(pos, E.mul(E.in(inputs.length - 1), E.i(strides[d])));
  }
  const ok = X.and(X.not(E.lt(raw, E.i(0))), E.lt(raw, E.i(n)));
  const [out] = NDArray.elementwise([E.where(ok, pos, E.i(-1))], inputs, op);
  inputs.forEach((a) => a.dispose());
  return out;
}

/** Checks that index dims fit the source dims (except along `dim`), as torch.gather does. */
export function checkIndexFits(
  op: string,
  what: string,
  xShape: readonly number[],
  dim: number,
  iShape: readonly number[],
): void {
  if (iShape.length !== xShape.length || iShape.some((v, d) => d !== dim && v > xShape[d])) {
    throw new ShapeError(
      `${op}: index of shape ${fmtShape(iShape)} does not fit ${what} of shape ${fmtShape(xShape)}; expected the same number of dims and index.shape[d] <= ${what}.shape[d] for every d != dim ${dim}`,
    );
  }
}
