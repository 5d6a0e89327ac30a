import { BackendError, DTypeError, NDArray, ShapeError, ValueError, fmtShape } from '@surf/core';
import { GradEpilogue, alias, fromOp } from '../node';
import { PendingResult, matmulKernel } from '../fusion/pending';
import { matmulGrad } from '../fusion/grad-epilogue';
import { Tensor, checkTensor } from '../tensor';
import { relu } from './activations';

/**
 * A fully connected layer: y = act(x·Wᵀ + b), W [out, in] as PyTorch's. It is x·Wᵀ as its
 * own node, then the public add and relu: the fusion pass (fusion/fold.ts) folds the bias and
 * the activation into the product's epilogue, so the forward is one kernel, exactly as for
 * `x.matmul(W).add(b).relu()` written by hand. What the node adds over matmul:
 * - x of any rank folds into rows (one 2-d product, no batch dims to sum back in backward);
 * - the weight gradient is computed directly in W's [out, in] layout (no transpose copy);
 * - the input gradient only when x requires grad, taking the backward of the op that made x
 *   (an MLP's hidden ReLU mask) into its epilogue when the engine offers it.
 */
export type LinearActivation = 'none' | 'relu';

export function linear(x: Tensor, w: Tensor, b: Tensor | null = null, activation: LinearActivation = 'none'): Tensor {
  checkTensor('linear', x, 'the input');
  checkTensor('linear', w, 'the weight');
  if (b !== null) checkTensor('linear', b, 'the bias');
  if (activation !== 'none' && activation !== 'relu')
    throw new ValueError(`linear: activation must be 'none' or 'relu'; got ${JSON.stringify(activation)}`);
  const xn = x.nd('linear'),
    wn = w.nd('linear'),
    bn = b ? b.nd('linear') : null;
  for (const [what, a] of [
    ['input', xn],
    ['weight', wn],
    ['bias', bn],
  ] as const) {
    if (a && a.dtype !== 'float32')
      throw new DTypeError(`linear: the ${what} has dtype ${a.dtype}; expected float32 (cast with .float())`);
  }
  if (wn.ndim !== 2) throw new ShapeError(`linear: weight has shape ${fmtShape(wn.shape)}; expected [out, in]`);
  const [outF, inF] = wn.shape;
  if (xn.ndim < 1 || xn.shape[xn.ndim - 1] !== inF)
    throw new ShapeError(
      `linear: input has shape ${fmtShape(xn.shape)}; expected the last dim to be in = ${inF} (weight ${fmtShape(wn.shape)})`,
    );
  if (bn && (bn.ndim !== 1 || bn.shape[0] !== outF))
    throw new ShapeError(`linear: bias has shape ${fmtShape(bn.shape)}; expected [${outF}]`);
  for (const o of [wn, bn]) {
    if (o && o.backend !== xn.backend)
      throw new BackendError(`linear: the input lives on backend ${xn.backend.name}, a parameter on ${o.backend.name}`);
  }
  const y = product(x, w, xn, wn);
  if (!b && activation === 'none') return y;
  // Intermediates are folded into their consumer and never read: free them now.
  let out = y;
  if (b) {
    out = out.add(b);
    y.dispose();
  }
  if (activation === 'relu') {
    const z = relu(out);
    out.dispose();
    out = z;
  }
  return out;
}

/** x·Wᵀ as one pending node (fusion/pending.ts). */
function product(x: Tensor, w: Tensor, xn: NDArray, wn: NDArray): Tensor {
  const [outF, inF] = wn.shape;
  const lead = xn.shape.slice(0, -1);
  const rows = lead.reduce((a, d) => a * d, 1);
  const xShape = xn.shape;
  xn.backend.checkOutput?.('linear', 'float32', rows * outF);
  const x2 = xn.ndim === 2 ? alias(xn) : xn.reshape([rows, inF]);
  const wt = wn.permute([1, 0]);
  const pending = new PendingResult(matmulKernel, [alias(x2), wt], null, [], [...lead, outF], [rows, outF]);
  // Save only what the wanted gradients read.
  const wSaved = x.requiresGrad ? alias(wn) : null;
  const xSaved = w.requiresGrad ? x2 : null;
  if (!xSaved) x2.dispose();
  const backwardWith = (g: NDArray, epis: readonly (GradEpilogue | undefined)[]): (NDArray | null)[] => {
    const gz = g.ndim === 2 ? alias(g) : g.reshape([rows, outF]);
    const res: (NDArray | null)[] = [null, null];
    if (x.requiresGrad)
      res[0] = matmulGrad(gz, wSaved!, epis[0], xShape, (gx) => {
        const r = gx.reshape(xShape);
        gx.dispose();
        return r;
      });
    if (w.requiresGrad) {
      const gt = gz.permute([1, 0]);
      res[1] = gt.matmul(xSaved!);
      gt.dispose();
    }
    gz.dispose();
    return res;
  };
  const t = fromOp(
    'linear',
    pending,
    [x, w],
    (g) => backwardWith(g, []),
    [wSaved, xSaved].filter((s): s is NDArray => s !== null),
  );
  if (t._node) t._node.backwardWith = backwardWith;
  return t;
}
