import { DType, TypedArray, fmtShape } from '@surf/core';

/**
 * Tensor printing as PyTorch's repr: `tensor([[ 0.5000, -1.2500], [ 2.0000,  3.0000]])` with
 * one number format for the whole tensor (integers as `1.`, fixed with 4 decimals, or
 * scientific when magnitudes span more than 1e3 or leave [1e-4, 1e8)), columns aligned, long
 * rows wrapped at 80 characters, and tensors over 1,000 elements summarised to their first
 * and last 3 entries per dim with `...`. dtype is noted when not float32, then requiresGrad
 * and the op that made it.
 */

const PRECISION = 4;
const THRESHOLD = 1000;
const EDGE = 3;
const LINE = 80;

export interface FormatInfo {
  requiresGrad?: boolean;
  /** The op that made the tensor (non-leaves). */
  gradFn?: string | null;
}

type Fmt = (v: number) => string;

function expo(v: number): string {
  // JS writes 1.2345e-5; PyTorch (C printf) writes 1.2345e-05.
  return v.toExponential(PRECISION).replace(/e([+-])(\d)$/, 'e$10$2');
}

function special(v: number): string | null {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return null;
}

/** One formatter for every element shown, chosen from their magnitudes (PyTorch's _Formatter). */
function numberFormat(values: number[], dtype: DType): Fmt {
  if (dtype === 'bool') return (v) => (v ? 'true' : 'false');
  if (dtype === 'int32') return (v) => String(v);
  const finite = values.filter((v) => Number.isFinite(v));
  const nonzero = finite.map(Math.abs).filter((v) => v > 0);
  if (finite.every((v) => Number.isInteger(v))) {
    const big = nonzero.length > 0 && Math.max(...nonzero) > 1e8;
    return (v) => special(v) ?? (big ? expo(v) : `${Object.is(v, -0) ? '-0' : v.toFixed(0)}.`);
  }
  const max = nonzero.length ? Math.max(...nonzero) : 0;
  const min = nonzero.length ? Math.min(...nonzero) : 0;
  const sci = nonzero.length > 0 && (max / min > 1e3 || max > 1e8 || min < 1e-4);
  return (v) => special(v) ?? (sci ? expo(v) : v.toFixed(PRECISION));
}

/** The flat indices shown along one dim of size n. */
function shown(n: number, summarise: boolean): (number | null)[] {
  if (!summarise || n <= 2 * EDGE) return Array.from({ length: n }, (_, i) => i);
  return [...Array.from({ length: EDGE }, (_, i) => i), null, ...Array.from({ length: EDGE }, (_, i) => n - EDGE + i)];
}

/** The values printed (for choosing the format), in order. */
function collect(data: TypedArray, shape: readonly number[], summarise: boolean): number[] {
  const out: number[] = [];
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
  const walk = (d: number, off: number) => {
    if (d === shape.length) {
      out.push(data[off]);
      return;
    }
    for (const i of shown(shape[d], summarise)) if (i !== null) walk(d + 1, off + i * strides[d]);
  };
  walk(0, 0);
  return out;
}

/** The bracketed body, e.g. `[[1., 2.],\n        [3., 4.]]`, with `indent` columns before continuation lines. */
export function formatValues(data: TypedArray, shape: readonly number[], dtype: DType, indent: number): string {
  const size = shape.reduce((a, b) => a * b, 1);
  const summarise = size > THRESHOLD;
  const fmt = numberFormat(collect(data, shape, summarise), dtype);
  if (shape.length === 0) return fmt(data[0]);
  const width = Math.max(...collect(data, shape, summarise).map((v) => fmt(v).length), 1);
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
  const walk = (d: number, off: number, col: number): string => {
    const idx = shown(shape[d], summarise);
    if (d === shape.length - 1) {
      const items = idx.map((i) => (i === null ? ' ...' : fmt(data[off + i]).padStart(width)));
      // Wrap the last dim so a line stays within 80 columns.
      const perLine = Math.max(1, Math.floor((LINE - col - 1) / (width + 2)));
      const lines: string[] = [];
      for (let k = 0; k < items.length; k += perLine) lines.push(items.slice(k, k + perLine).join(', '));
      return `[${lines.join(`,\n${' '.repeat(col + 1)}`)}]`;
    }
    const parts = idx.map((i) => (i === null ? '...' : walk(d + 1, off + i * strides[d], col + 1)));
    const sep = `,${'\n'.repeat(shape.length - d - 1)}${' '.repeat(col + 1)}`;
    return `[${parts.join(sep)}]`;
  };
  return walk(0, 0, indent);
}

/** PyTorch's repr: `tensor(<values>[, dtype=…][, requiresGrad=true][, gradFn=<op>])`. */
export function formatTensor(data: TypedArray, shape: readonly number[], dtype: DType, info: FormatInfo = {}): string {
  const body = formatValues(data, shape, dtype, 'tensor('.length);
  const notes: string[] = [];
  // An empty tensor shows its shape, as PyTorch's `tensor([], size=(0, 3))`.
  if (shape.some((d) => d === 0) && shape.length > 1) notes.push(`size=${fmtShape(shape)}`);
  if (dtype !== 'float32') notes.push(`dtype=${dtype}`);
  if (info.gradFn) notes.push(`gradFn=<${info.gradFn}>`);
  else if (info.requiresGrad) notes.push('requiresGrad=true');
  return `tensor(${body}${notes.map((n) => `, ${n}`).join('')})`;
}

/** What String(t) says for a tensor whose values are not on the host (a GPU tensor). */
export function formatPlaceholder(
  shape: readonly number[],
  dtype: DType,
  device: string,
  info: FormatInfo = {},
): string {
  const notes = [`shape=${fmtShape(shape)}`, `dtype=${dtype}`, `device=${device}`];
  if (info.gradFn) notes.push(`gradFn=<${info.gradFn}>`);
  else if (info.requiresGrad) notes.push('requiresGrad=true');
  return `tensor(<values on the ${device} device: await t.print() or await t.toStringAsync() to read them>, ${notes.join(', ')})`;
}

/** The largest tensor toJSON() writes values for; larger ones give shape and dtype only. */
export const JSON_MAX_ELEMENTS = THRESHOLD;
