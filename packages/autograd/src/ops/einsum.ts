import { ShapeError, ValueError } from '@surf/core';
import { tidy } from '../scope';
import { Tensor, checkTensor } from '../tensor';
import { matmul } from './matmul';
import { sum } from './reduce';
import { diagonal } from './diagonal';
import * as S from './shape';

/**
 * torch.einsum, lowered to ops that already have kernels and gradients: a label repeated
 * inside one operand takes the diagonal, a label that no later operand nor the output needs
 * is summed out at once, and operands are combined left to right, each pair as ONE batched
 * matmul (shared kept labels are the batch, shared dropped labels the contraction, the rest
 * rows and columns), with permutes and reshapes (views where strides allow) around it.
 * '...' stands for the dims not named, broadcast across operands as PyTorch does. Without
 * '->', the output is the ellipsis dims then the labels used once, in alphabetical order.
 */

type Labels = string[];

interface Operand {
  t: Tensor;
  labels: Labels;
}

const LETTER = /^[a-zA-Z]$/;

function parseTerm(eq: string, term: string, what: string): { labels: Labels; ellipsis: number } {
  const labels: Labels = [];
  let ellipsis = -1;
  for (let i = 0; i < term.length; i++) {
    const ch = term[i];
    if (term.startsWith('...', i)) {
      if (ellipsis >= 0) throw new ValueError(`einsum: '${eq}' has two '...' in ${what}; expected at most one`);
      ellipsis = labels.length;
      i += 2;
    } else if (LETTER.test(ch)) labels.push(ch);
    else if (ch !== ' ')
      throw new ValueError(
        `einsum: '${eq}' has the character '${ch}' in ${what}; expected letters a-z, A-Z, '...', ',' and '->'`,
      );
  }
  return { labels, ellipsis };
}

/** Names the dims each operand's '...' covers '.0', '.1', ... right-aligned to the widest. */
function withEllipsis(labels: Labels, ellipsis: number, count: number, width: number): Labels {
  if (ellipsis < 0) return labels;
  const e = Array.from({ length: count }, (_, j) => `.${width - count + j}`);
  return [...labels.slice(0, ellipsis), ...e, ...labels.slice(ellipsis)];
}

export function einsum(equation: string, ...operands: (Tensor | readonly Tensor[])[]): Tensor {
  if (typeof equation !== 'string') throw new ValueError('einsum: the first argument must be the equation string');
  const ts: Tensor[] =
    operands.length === 1 && Array.isArray(operands[0]) ? [...(operands[0] as Tensor[])] : (operands as Tensor[]);
  ts.forEach((t, i) => checkTensor('einsum', t, `operand ${i}`));
  const eq = equation.replace(/\s+/g, '');
  const arrow = eq.indexOf('->');
  const lhs = arrow >= 0 ? eq.slice(0, arrow) : eq;
  const terms = lhs.split(',');
  if (terms.length !== ts.length)
    throw new ValueError(`einsum: '${equation}' names ${terms.length} operands; got ${ts.length} tensors`);
  const parsed = terms.map((term, i) => parseTerm(equation, term, `operand ${i}`));
  const ellipsisDims = parsed.map((p, i) => {
    const n = ts[i].ndim - p.labels.length;
    if (p.ellipsis < 0 ? n !== 0 : n < 0)
      throw new ShapeError(
        `einsum: operand ${i} has ${ts[i].ndim} dims but '${terms[i]}' names ${p.labels.length}${p.ellipsis >= 0 ? ' plus ...' : ''}`,
      );
    return p.ellipsis < 0 ? 0 : n;
  });
  const width = Math.max(0, ...ellipsisDims);
  const ins = parsed.map((p, i) => withEllipsis(p.labels, p.ellipsis, ellipsisDims[i], width));
  const eLabels = Array.from({ length: width }, (_, j) => `.${j}`);
  let out: Labels;
  if (arrow >= 0) {
    const o = parseTerm(equation, eq.slice(arrow + 2), 'the output');
    const seen = new Set<string>();
    for (const l of o.labels) {
      if (seen.has(l)) throw new ValueError(`einsum: '${equation}' repeats '${l}' in the output`);
      if (!ins.some((ls) => ls.includes(l)))
        throw new ValueError(`einsum: '${equation}' has '${l}' in the output but in no operand`);
      seen.add(l);
    }
    // An output without '...' sums the '...' dims away.
    out = withEllipsis(o.labels, o.ellipsis, o.ellipsis >= 0 ? width : 0, width);
  } else {
    const counts = new Map<string, number>();
    ins.forEach((ls) => ls.forEach((l) => !l.startsWith('.') && counts.set(l, (counts.get(l) ?? 0) + 1)));
    const once = [...counts.keys()].filter((l) => counts.get(l) === 1).sort();
    out = [...eLabels, ...once];
  }
  // Each label's size: equal wherever it appears, or 1 (broadcast) for '...' dims.
  const size = new Map<string, number>();
  ins.forEach((ls, i) =>
    ls.forEach((l, d) => {
      const n = ts[i].shape[d];
      const prev = size.get(l);
      if (prev === undefined || prev === 1) size.set(l, n);
      else if (n !== prev && !(n === 1 && l.startsWith('.')))
        throw new ShapeError(
          `einsum: '${equation}': ${l.startsWith('.') ? 'a ... dim' : `label '${l}'`} has size ${prev} in one place and ${n} in operand ${i}`,
        );
    }),
  );
  return tidy(() => {
    let ops: Operand[] = ts.map((t, i) => takeDiagonals({ t, labels: ins[i] }));
    // Drop labels that appear in one operand only and nowhere later.
    const needed = (k: number, l: string) => out.includes(l) || ops.some((o, j) => j !== k && o.labels.includes(l));
    ops = ops.map((o, k) => sumOut(o, (l) => !needed(k, l)));
    let acc = ops[0];
    for (let k = 1; k < ops.length; k++) {
      const later = new Set<string>(out);
      for (let j = k + 1; j < ops.length; j++) ops[j].labels.forEach((l) => later.add(l));
      acc = contract(acc, ops[k], later, size);
    }
    acc = sumOut(acc, (l) => !out.includes(l));
    // Broadcast '...' dims that stayed 1 in every operand are already their size.
    const order = out.map((l) => acc.labels.indexOf(l));
    const r = S.permute(acc.t, order);
    const shape = out.map((l) => size.get(l) ?? 1);
    return shape.every((n, d) => n === r.shape[d]) ? r : S.expand(r, shape, 'einsum');
  });
}

/** Replaces each label repeated within one operand by the diagonal (moved to the end). */
function takeDiagonals(o: Operand): Operand {
  let { t, labels } = o;
  for (;;) {
    const d = labels.findIndex((l, i) => labels.indexOf(l) !== i);
    if (d < 0) return { t, labels };
    const first = labels.indexOf(labels[d]);
    if (t.shape[first] !== t.shape[d])
      throw new ShapeError(
        `einsum: label '${labels[d]}' repeats in one operand over dims of sizes ${t.shape[first]} and ${t.shape[d]}`,
      );
    const l = labels[d];
    t = diagonal(t, 0, first, d);
    labels = [...labels.filter((_, i) => i !== first && i !== d), l];
  }
}

function sumOut(o: Operand, drop: (l: string) => boolean): Operand {
  const axes = o.labels.map((l, i) => (drop(l) ? i : -1)).filter((i) => i >= 0);
  if (!axes.length) return o;
  return { t: sum(o.t, axes, false), labels: o.labels.filter((l) => !drop(l)) };
}

/** One pair as a batched matmul [batch, rows, k] @ [batch, k, cols]. */
function contract(a: Operand, b: Operand, later: Set<string>, size: Map<string, number>): Operand {
  const inA = new Set(a.labels);
  const inB = new Set(b.labels);
  const batch = a.labels.filter((l) => inB.has(l) && later.has(l));
  const red = a.labels.filter((l) => inB.has(l) && !later.has(l));
  const rows = a.labels.filter((l) => !inB.has(l));
  const cols = b.labels.filter((l) => !inA.has(l));
  const n = (ls: Labels) => ls.reduce((p, l) => p * (size.get(l) ?? 1), 1);
  const arrange = (o: Operand, order: Labels, shape: number[]): Tensor => {
    const p = S.permute(
      o.t,
      order.map((l) => o.labels.indexOf(l)),
    );
    const full = order.map((l) => size.get(l) ?? 1);
    const e = full.every((v, d) => v === p.shape[d]) ? p : S.expand(p, full, 'einsum');
    return S.reshape(e, shape);
  };
  const A = arrange(a, [...batch, ...rows, ...red], [n(batch), n(rows), n(red)]);
  const B = arrange(b, [...batch, ...red, ...cols], [n(batch), n(red), n(cols)]);
  const m = matmul(A, B, 'einsum');
  const labels = [...batch, ...rows, ...cols];
  return {
    t: S.reshape(
      m,
      labels.map((l) => size.get(l) ?? 1),
    ),
    labels,
  };
}
