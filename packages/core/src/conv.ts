import type { Backend, MatmulEpilogue, Storage, Strided } from './backend';
import { BackendError, DTypeError, ShapeError, ValueError, fmtShape } from './errors';
import type { DType } from './dtype';
import { Expr, exprDType } from './expr';
import { NDArray } from './ndarray';
import { broadcastShapes, shapesEqual } from './shape';
import type { ConvParams } from './conv-params';

export type { ConvParams } from './conv-params';

/**
 * The one convolution of the contract, in XLA's conv_general_dilated form over 1 or 2 spatial
 * dims. x is [N, C, ...in], w is [O, C/groups, ...k], the result [N, O, ...out]:
 *
 *   y[n, o, p] = sum over c in o's group, kk of  xd[n, c, p*stride + kk*dilation - padding.lo] * w[o, c', kk]
 *
 * where xd is x with (lhsDilation - 1) zeros inserted between neighbours ("input dilation")
 * and zero outside [0, (in-1)*lhsDilation + 1). Padding may be negative (it then crops). With
 * lhsDilation the data gradient and the transposed convolution are this same op, and the
 * weight gradient is this op with the roles of batch and channels swapped, so one kernel per
 * backend serves forward, both gradients and convTranspose.
 */

/** Size of one output spatial dim; may be < 1 when the kernel does not fit (checked by callers). */
export function convOutSize(
  inSize: number,
  k: number,
  stride: number,
  pad: readonly [number, number],
  dilation: number,
  lhsDilation: number,
): number {
  const din = inSize === 0 ? 0 : (inSize - 1) * lhsDilation + 1;
  return Math.floor((din + pad[0] + pad[1] - dilation * (k - 1) - 1) / stride) + 1;
}

const posInt = (v: unknown): boolean => Number.isInteger(v) && (v as number) > 0;

/**
 * Checks the operands and parameters of a conv, as every backend does before touching memory,
 * and returns the output shape [N, O, ...out].
 */
export function checkConvArgs(
  x: { view: { shape: readonly number[] }; storage: { dtype: DType } },
  w: { view: { shape: readonly number[] }; storage: { dtype: DType } },
  p: ConvParams,
  op = 'conv',
): number[] {
  const xs = x.view.shape,
    ws = w.view.shape;
  if (x.storage.dtype !== 'float32' || w.storage.dtype !== 'float32')
    throw new DTypeError(
      `${op}: got dtypes ${x.storage.dtype} (input) and ${w.storage.dtype} (weight); expected float32`,
    );
  const sd = xs.length - 2;
  if (sd < 1 || sd > 2)
    throw new ShapeError(
      `${op}: input has shape ${fmtShape(xs)}; expected [N, C, L] or [N, C, H, W] (1 or 2 spatial dims)`,
    );
  if (ws.length !== xs.length)
    throw new ShapeError(
      `${op}: weight has shape ${fmtShape(ws)} for input ${fmtShape(xs)}; expected a ${xs.length}-d weight [O, C/groups, ${sd === 1 ? 'k' : 'kH, kW'}]`,
    );
  for (const [name, v] of [
    ['stride', p.stride],
    ['dilation', p.dilation],
    ['lhsDilation', p.lhsDilation],
  ] as const) {
    if (!Array.isArray(v) || v.length !== sd || !v.every(posInt))
      throw new ValueError(`${op}: ${name} ${JSON.stringify(v)}; expected ${sd} positive integer(s)`);
  }
  if (
    !Array.isArray(p.padding) ||
    p.padding.length !== sd ||
    !p.padding.every((q) => Array.isArray(q) && q.length === 2 && q.every(Number.isInteger))
  ) {
    throw new ValueError(`${op}: padding ${JSON.stringify(p.padding)}; expected ${sd} [low, high] integer pair(s)`);
  }
  const g = p.groups;
  if (!posInt(g)) throw new ValueError(`${op}: groups ${JSON.stringify(g)}; expected a positive integer`);
  const [n, c] = xs;
  const [o, cg] = ws;
  if (c % g !== 0 || o % g !== 0)
    throw new ShapeError(`${op}: input channels ${c} and output channels ${o} must both divide by groups ${g}`);
  if (cg * g !== c)
    throw new ShapeError(
      `${op}: weight ${fmtShape(ws)} has ${cg} input channels per group; expected C/groups = ${c}/${g} = ${c / g} for input ${fmtShape(xs)}`,
    );
  const out = [n, o];
  for (let d = 0; d < sd; d++) {
    const k = ws[2 + d];
    if (k < 1) throw new ShapeError(`${op}: weight ${fmtShape(ws)} has an empty kernel; expected kernel sizes >= 1`);
    const os = convOutSize(xs[2 + d], k, p.stride[d], p.padding[d], p.dilation[d], p.lhsDilation[d]);
    if (os < 1 && xs[2 + d] > 0) {
      throw new ShapeError(
        `${op}: kernel ${fmtShape(ws.slice(2))} (dilation ${fmtShape(p.dilation)}) is larger than the padded input ${fmtShape(xs.slice(2))} (padding ${JSON.stringify(p.padding)}) in spatial dim ${d}`,
      );
    }
    out.push(Math.max(0, os));
  }
  return out;
}

/** The epilogue's inputs must be views with exactly the output shape. */
export function checkConvEpilogue(outShape: readonly number[], ep: MatmulEpilogue | undefined): void {
  if (!ep) return;
  ep.inputs.forEach((x, i) => {
    if (!shapesEqual(x.view.shape, outShape))
      throw new ShapeError(
        `conv epilogue: input ${i + 1} has shape ${fmtShape(x.view.shape)}; expected the output shape ${fmtShape(outShape)}`,
      );
  });
  const dt = exprDType(ep.expr, ['float32', ...ep.inputs.map((x) => x.storage.dtype)], 'conv epilogue');
  if (dt !== 'float32') throw new DTypeError(`conv epilogue: expression gives ${dt}; expected float32`);
}

/**
 * NDArray-level conv: checks arguments, makes masked operands contiguous (backends see no
 * masks), broadcasts epilogue inputs to the output shape, and calls the backend.
 */
export function convNd(
  x: NDArray,
  w: NDArray,
  p: ConvParams,
  epilogue?: { expr: Expr; inputs: readonly NDArray[] },
  op = 'conv',
): NDArray {
  if (x.backend !== w.backend)
    throw new BackendError(
      `${op}: input and weight live on different backends (${x.backend.name} and ${w.backend.name})`,
    );
  const outShape = checkConvArgs(x, w, p, op);
  const temps: NDArray[] = [];
  const plain = (a: NDArray): NDArray => {
    if (!a.view.mask) return a;
    const c = a.contiguous();
    temps.push(c);
    return c;
  };
  const xs = plain(x),
    ws = plain(w);
  let ep: MatmulEpilogue | undefined;
  if (epilogue) {
    ep = {
      expr: epilogue.expr,
      inputs: epilogue.inputs.map((e) => {
        if (e.backend !== x.backend) throw new BackendError('conv epilogue: input lives on another backend');
        const shape = broadcastShapes('conv epilogue', outShape, e.shape);
        if (!shapesEqual(shape, outShape))
          throw new ShapeError(
            `conv epilogue: input of shape ${fmtShape(e.shape)} does not broadcast to the output ${fmtShape(outShape)}`,
          );
        const u = plain(e);
        return { storage: u.storage, view: u.view.expand(outShape) };
      }),
    };
  }
  try {
    const s: Storage = x.backend.conv(xs.strided, ws.strided, p, ep);
    return NDArray.fromStorage(s, outShape);
  } finally {
    temps.forEach((t) => t.dispose());
  }
}
