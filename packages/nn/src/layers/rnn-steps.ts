import { Tensor, linear } from '@surf/autograd';

/**
 * One time step of each recurrent cell, in PyTorch's gate order, given the input projection
 * `xp` = x·W_ihᵀ + b_ih already computed (for a whole sequence it is one matmul). Each step
 * adds one matmul (the hidden projection); the gate arithmetic after it is elementwise, which
 * autograd's fusion pass turns into few kernels.
 */

export type RnnNonlinearity = 'tanh' | 'relu';

export function rnnStep(xp: Tensor, h: Tensor, whh: Tensor, bhh: Tensor | null, act: RnnNonlinearity): Tensor {
  const pre = xp.add(linear(h, whh, bhh));
  return act === 'tanh' ? pre.tanh() : pre.relu();
}

/** Gates i, f, g, o (input, forget, cell, output) as in torch.nn.LSTM. Returns [h, c]. */
export function lstmStep(xp: Tensor, h: Tensor, c: Tensor, whh: Tensor, bhh: Tensor | null): [Tensor, Tensor] {
  const [i, f, g, o] = xp.add(linear(h, whh, bhh)).chunk(4, -1);
  const c2 = f.sigmoid().mul(c).add(i.sigmoid().mul(g.tanh()));
  return [o.sigmoid().mul(c2.tanh()), c2];
}

/**
 * Gates r, z, n (reset, update, new) as in torch.nn.GRU: the reset gate scales the hidden
 * projection including its bias, n = tanh(x_n + r·(W_hn·h + b_hn)), h' = n + z·(h − n).
 */
export function gruStep(xp: Tensor, h: Tensor, whh: Tensor, bhh: Tensor | null): Tensor {
  const [xr, xz, xn] = xp.chunk(3, -1);
  const [hr, hz, hn] = linear(h, whh, bhh).chunk(3, -1);
  const r = xr.add(hr).sigmoid();
  const z = xz.add(hz).sigmoid();
  const n = xn.add(r.mul(hn)).tanh();
  return n.add(z.mul(h.sub(n)));
}
