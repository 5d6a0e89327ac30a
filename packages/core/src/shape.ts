import { ShapeError, fmtShape } from './errors';
import { typeErr } from './arg-types';

export type Shape = readonly number[];

export function numel(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function contiguousStrides(shape: Shape): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

export function shapesEqual(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export function assertShape(op: string, shape: unknown): number[] {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new ShapeError(`${op}: invalid shape ${JSON.stringify(shape)}; expected an array of non-negative integers`);
  }
  return shape.slice();
}

/** NumPy broadcasting: align on the right; each pair of dims must be equal or one of them 1. */
export function broadcastShapes(op: string, ...shapes: Shape[]): number[] {
  const n = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(n).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const j = n - s.length + i;
      const d = s[i];
      if (out[j] === 1) out[j] = d;
      else if (d !== 1 && d !== out[j]) {
        throw new ShapeError(
          `${op}: shapes ${shapes.map(fmtShape).join(' and ')} cannot broadcast (dim ${j - n} is ${out[j]} vs ${d}; expected equal sizes or 1)`,
        );
      }
    }
  }
  return out;
}

/**
 * The broadcast batch dims of matmul operands of shapes `a` and `b`: all but each one's last
 * two dims (a 1-d operand has none). A mismatch names both operands' full shapes.
 */
export function matmulBatch(op: string, a: Shape, b: Shape): number[] {
  const ba = a.slice(0, Math.max(a.length - 2, 0));
  const bb = b.slice(0, Math.max(b.length - 2, 0));
  const n = Math.max(ba.length, bb.length);
  const out: number[] = [];
  for (let j = 0; j < n; j++) {
    const x = ba[j - n + ba.length] ?? 1;
    const y = bb[j - n + bb.length] ?? 1;
    if (x !== y && x !== 1 && y !== 1) {
      throw new ShapeError(
        `${op}: batch dims ${fmtShape(ba)} of a ${fmtShape(a)} and ${fmtShape(bb)} of b ${fmtShape(b)} cannot broadcast (dim ${j - n - 2} is ${x} vs ${y}; expected equal sizes or 1)`,
      );
    }
    out.push(x === 1 ? y : x);
  }
  return out;
}

/** Resolves a possibly negative axis against ndim. */
export function normAxis(op: string, axis: number, ndim: number): number {
  if (!Number.isInteger(axis))
    throw new ShapeError(`${op}: axis ${axis} is not an integer (expected an integer in -${ndim} <= axis < ${ndim})`);
  if (ndim === 0) throw new ShapeError(`${op}: axis ${axis} given for a 0-d tensor, which has no axes`);
  if (axis < -ndim || axis >= ndim) {
    throw new ShapeError(
      `${op}: axis ${axis} is out of range for a ${ndim}-d tensor (expected -${ndim} <= axis < ${ndim})`,
    );
  }
  return axis < 0 ? axis + ndim : axis;
}

/** Resolves a list of axes (or all axes when undefined), sorted and without repeats. */
export function normAxes(op: string, axes: number | readonly number[] | undefined, ndim: number): number[] {
  if (axes === undefined) return Array.from({ length: ndim }, (_, i) => i);
  if (typeof axes !== 'number' && !Array.isArray(axes))
    throw typeErr(op, 'dim', 'a number, an array of numbers or nothing', axes);
  const list = typeof axes === 'number' ? [axes] : axes;
  const out = list.map((a) => normAxis(op, a, ndim));
  if (new Set(out).size !== out.length) throw new ShapeError(`${op}: repeated axis in ${JSON.stringify(list)}`);
  return out.sort((a, b) => a - b);
}
