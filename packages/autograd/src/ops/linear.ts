import { DTypeError, E, Expr, NDArray, ShapeError, ValueError, fmtShape } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';

/**
 * A fully connected layer as ONE op: y = act(x·Wᵀ + b), W [out, in] as PyTorch's. The bias
 * and the activation ride in the matmul's epilogue, so the forward is one kernel where the
 * backend fuses epilogues, instead of matmul + add + relu. The backward is written by hand:
 * - the ReLU mask comes from the saved output (relu(z) > 0 exactly where z > 0);
 * - the weight gradient is computed directly in W's [out, in] layout (no transpose copy);
 * - the bias gradient is one column sum; the input gradient only when x requires grad;
 * - when x is itself the output of a ReLU linear (an MLP's hidden layer), the input
 *   gradient applies that layer's mask in its matmul epilogue and is marked, so that layer's
 *   backward skips its own mask kernel. A gradient summed from several uses is a new array,
 *   not marked, and gets masked as usual.
 */
export type LinearActivation = 'none' | 'relu';

/** The saved ReLU output of each live 'linear' node with activation 'relu', by output tensor. */
const reluOutputs = new WeakMap<Tensor, NDArray>();
/** Input gradients already multiplied by the ReLU mask of the tensor they flow into. */
const premasked = new WeakMap<NDArray, Tensor>();

const MASK = (out: Expr): Expr => E.where(E.lt(E.f(0), E.in(1)), out, E.f(0));

export function linear(x: Tensor, w: Tensor, b: Tensor | null = null, activation: LinearActivation = 'none'): Tensor {
  checkTensor('linear', x, 'the input');
  checkTensor('linear', w, 'the weight');
  if (b !== null) checkTensor('linear', b, 'the bias');
  if (activation !== 'none' && activation !== 'relu') throw new ValueError(`linear: activation must be 'none' or 'relu'; got ${JSON.stringify(activation)}`);
  const xn = x.nd('linear'), wn = w.nd('linear'), bn = b ? b.nd('linear') : null;
  for (const [what, a] of [['input', xn], ['weight', wn], ['bias', bn]] as const) {
    if (a && a.dtype !== 'float32') throw new DTypeError(`linear: the ${what} has dtype ${a.dtype}; expected float32 (cast with .float())`);
  }
  if (wn.ndim !== 2) throw new ShapeError(`linear: weight has shape ${fmtShape(wn.shape)}; expected [out, in]`);
  const [outF, inF] = wn.shape;
  if (xn.ndim < 1 || xn.shape[xn.ndim - 1] !== inF) throw new ShapeError(`linear: input has shape ${fmtShape(xn.shape)}; expected the last dim to be in = ${inF} (weight ${fmtShape(wn.shape)})`);
  if (bn && (bn.ndim !== 1 || bn.shape[0] !== outF)) throw new ShapeError(`linear: bias has shape ${fmtShape(bn.shape)}; expected [${outF}]`);
  const relu = activation === 'relu';
  const lead = xn.shape.slice(0, -1);
  const rows = lead.reduce((a, d) => a * d, 1);
  const xShape = xn.shape;
  const x2 = xn.ndim === 2 ? alias(xn) : xn.reshape([rows, inF]);
  const wt = wn.permute([1, 0]);
  let expr: Expr | null = bn ? E.add(E.in(0), E.in(1)) : null;
  if (relu) expr = E.max(expr ?? E.in(0), E.f(0));
  const y2 = x2.matmul(wt, expr ? { expr, inputs: bn ? [bn] : [] } : undefined);
  wt.dispose();
  const out = y2.reshape([...lead, outF]);
  // Save only what the wanted gradients read.
  const wSaved = x.requiresGrad ? alias(wn) : null;
  const xSaved = w.requiresGrad ? x2 : null;
  if (!xSaved) x2.dispose();
  const ySaved = relu ? y2 : null;
  if (!ySaved) y2.dispose();
  const parents = b ? [x, w, b] : [x, w];
  const wantB = b !== null && b.requiresGrad;
  const self: { t: Tensor | null } = { t: null };
  const t = fromOp(relu ? 'linear(relu)' : 'linear', out, parents, (g) => {
    let gz = g.ndim === 2 ? alias(g) : g.reshape([rows, outF]);
    if (relu && premasked.get(g) !== self.t) {
      const [m] = NDArray.elementwise([MASK(E.in(0))], [gz, ySaved!], 'linear backward');
      gz.dispose();
      gz = m;
    }
    const res: (NDArray | null)[] = [null, null, null];
    if (x.requiresGrad) {
      const prevY = reluOutputs.get(x);
      const fuseMask = prevY !== undefined && !prevY.disposed;
      const gx = fuseMask ? gz.matmul(wSaved!, { expr: MASK(E.in(0)), inputs: [prevY] }) : gz.matmul(wSaved!);
      const gxs = gx.reshape(xShape);
      gx.dispose();
      if (fuseMask) premasked.set(gxs, x);
      res[0] = gxs;
    }
    if (w.requiresGrad) {
      const gt = gz.permute([1, 0]);
      res[1] = gt.matmul(xSaved!);
      gt.dispose();
    }
    if (wantB) res[2] = gz.sum(0);
    gz.dispose();
    return b ? res : res.slice(0, 2);
  }, [wSaved, xSaved, ySaved].filter((s): s is NDArray => s !== null));
  if (t._node && ySaved) {
    self.t = t;
    reluOutputs.set(t, ySaved);
  }
  return t;
}
