import { E, Expr } from './node';
import { BINARY_TABLE, UNARY_TABLE } from './table';

/**
 * Reverse-mode differentiation of an expression by the op table's rules (tinygrad's
 * gradient.py idea): the gradient of every input the output depends on through
 * differentiable nodes, given the upstream gradient `g`. A composite elementwise op can then
 * state only its forward expression; a hand-written rule is worth keeping only where it is
 * cheaper (reading the saved output, or a simpler closed form).
 *
 * Comparisons and bitwise ops have no rule, so a `where` condition carries no gradient;
 * casts pass the gradient through (only float32 operands are ever asked for theirs); zero
 * rules (floor, sign, ...) prune their subtree. Shared subtrees are walked once per use,
 * each use adding its share, as the chain rule says.
 */
export function deriveExpr(e: Expr, g: Expr): Map<number, Expr> {
  const acc = new Map<number, Expr>();
  const isZero = (x: Expr | null) => x === null || (x.kind === 'const' && x.value === 0);
  const visit = (node: Expr, gn: Expr): void => {
    switch (node.kind) {
      case 'input': {
        const prev = acc.get(node.index);
        acc.set(node.index, prev ? E.add(prev, gn) : gn);
        return;
      }
      case 'const':
        return;
      case 'cast':
        visit(node.a, gn);
        return;
      case 'unary': {
        const rule = UNARY_TABLE[node.op].grad;
        if (!rule) return;
        const [ga] = rule(gn, [node.a], node);
        if (!isZero(ga)) visit(node.a, ga!);
        return;
      }
      case 'binary': {
        const rule = BINARY_TABLE[node.op].grad;
        if (!rule) return;
        const [ga, gb] = rule(gn, [node.a, node.b], node);
        if (!isZero(ga)) visit(node.a, ga!);
        if (!isZero(gb)) visit(node.b, gb!);
        return;
      }
      case 'where':
        visit(node.a, E.where(node.c, gn, E.f(0)));
        visit(node.b, E.where(node.c, E.f(0), gn));
        return;
    }
  };
  visit(e, g);
  return acc;
}
