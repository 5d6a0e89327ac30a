import {
  DType,
  NDArray,
  ShapeError,
  TypedArray,
  OptionSpec,
  ValueError,
  arrayFor,
  assertDType,
  assertShape,
  castScalar,
  checkInt32,
  numel,
  parseOptions,
} from '@surf/core';
import { getBackend } from './context';
import { scalarDType } from './dtypes';
import { checkInt32Values, checkSize } from './creation-limits';
import { NestedArray, Tensor, checkTensor } from './tensor';

/** Creation functions: data is made on the host (or as a constant kernel) on the current backend. */
export interface TensorOptions {
  dtype?: DType;
  requiresGrad?: boolean;
}

type ShapeArg = number | readonly number[];

function toShape(op: string, s: ShapeArg): number[] {
  const sh = assertShape(op, typeof s === 'number' ? [s] : s);
  checkSize(op, numel(sh), 'float32');
  return sh;
}

/** A dtype Surf has; anything else is a DTypeError naming the dtypes. */
function dtypeRule(v: unknown, where: string): void {
  assertDType(where, v as DType);
}

const TENSOR_OPTIONS: OptionSpec<TensorOptions> = { dtype: dtypeRule, requiresGrad: 'boolean' };

/** Every creation op's options go through the strict parser: `{ dtpye: 'int32' }` is an error. */
function checkOpts(op: string, opts: unknown): TensorOptions {
  return parseOptions(op, opts, TENSOR_OPTIONS);
}

function make(nd: NDArray, opts: TensorOptions): Tensor {
  return new Tensor(nd, { requiresGrad: opts.requiresGrad });
}

/** Walks nested arrays, checking they are rectangular, and collects shape and values. */
function flattenNested(data: NestedArray): { shape: number[]; values: (number | boolean)[] } {
  const shape: number[] = [];
  let probe: NestedArray = data;
  while (Array.isArray(probe)) {
    shape.push(probe.length);
    probe = probe[0] as NestedArray;
    if (probe === undefined) break;
  }
  const values: (number | boolean)[] = [];
  const walk = (v: NestedArray, d: number, path: number[]) => {
    if (d === shape.length) {
      if (typeof v !== 'number' && typeof v !== 'boolean')
        throw new ValueError(
          `tensor: element at ${JSON.stringify(path)} is ${Array.isArray(v) ? 'an array' : typeof v}; expected a number or boolean (ragged nesting?)`,
        );
      values.push(v);
      return;
    }
    if (!Array.isArray(v) || v.length !== shape[d]) {
      throw new ShapeError(
        `tensor: nested arrays are ragged: at ${JSON.stringify(path)} expected ${shape[d]} elements, got ${Array.isArray(v) ? v.length : 'a scalar'}`,
      );
    }
    v.forEach((x, i) => walk(x as NestedArray, d + 1, [...path, i]));
  };
  walk(data, 0, []);
  return { shape, values };
}

/**
 * A tensor from nested arrays, a number/boolean (0-d), or a typed array (1-d). The dtype, when
 * not given (TF.js's rule, since JS cannot tell 1.0 from 1): JS numbers are float32, booleans
 * bool; an Int32Array (or another integer typed array) is int32, a Uint8Array bool, a
 * Float32Array/Float64Array float32. Integer class labels come from `{ dtype: 'int32' }` or an
 * Int32Array.
 */
export function tensor(
  data: NestedArray | TypedArray | Float64Array | ArrayLike<number>,
  options: TensorOptions = {},
): Tensor {
  if (data instanceof Tensor) throw new ValueError('tensor: got a Tensor; use t.clone() or t.detach()');
  const opts = checkOpts('tensor', options);
  let shape: number[];
  let values: ArrayLike<number | boolean>;
  let inferred: DType;
  if (ArrayBuffer.isView(data)) {
    const ta = data as unknown as ArrayLike<number>;
    shape = [ta.length];
    values = ta;
    inferred =
      data instanceof Uint8Array
        ? 'bool'
        : data instanceof Float32Array || data instanceof Float64Array
          ? 'float32'
          : 'int32';
  } else {
    const f = flattenNested(data as NestedArray);
    shape = f.shape;
    values = f.values;
    const kinds = new Set(f.values.map((v) => scalarDType(v)));
    if (kinds.has('bool') && kinds.size > 1)
      throw new ValueError('tensor: mixes booleans and numbers; expected one kind');
    inferred = kinds.has('bool') ? 'bool' : 'float32';
  }
  // Integer data that is to require grad is meant as floats (tensor(new Int32Array(...), { requiresGrad: true })).
  const dtype = opts.dtype ?? (opts.requiresGrad && inferred === 'int32' ? 'float32' : inferred);
  checkSize('tensor', values.length, dtype);
  if (dtype === 'int32') checkInt32Values('tensor', values);
  const arr = arrayFor(dtype, values.length);
  for (let i = 0; i < values.length; i++) arr[i] = castScalar(Number(values[i]), dtype);
  return make(NDArray.fromData(getBackend(), arr, shape, dtype), opts);
}

function fill(op: string, shape: readonly number[], value: number | boolean, dtype: DType, opts: TensorOptions) {
  if (typeof value !== 'number' && typeof value !== 'boolean')
    throw new ValueError(`${op}: fill value must be a number or boolean; got ${typeof value}`);
  if (dtype === 'int32') checkInt32(op, Number(value), 'fill value');
  return make(NDArray.full(getBackend(), shape, Number(value), dtype), opts);
}

/** A tensor of `value`: float32 for a number, bool for a boolean, unless `dtype` is given. */
export function full(shape: ShapeArg, value: number | boolean, options: TensorOptions = {}): Tensor {
  const opts = checkOpts('full', options);
  const dtype = opts.dtype ?? (typeof value === 'boolean' ? 'bool' : 'float32');
  return fill('full', toShape('full', shape), value, dtype, opts);
}
export const zeros = (shape: ShapeArg, options: TensorOptions = {}) => {
  const opts = checkOpts('zeros', options);
  return fill('zeros', toShape('zeros', shape), 0, opts.dtype ?? 'float32', opts);
};
export const ones = (shape: ShapeArg, options: TensorOptions = {}) => {
  const opts = checkOpts('ones', options);
  return fill('ones', toShape('ones', shape), 1, opts.dtype ?? 'float32', opts);
};
export const zerosLike = (t: Tensor, options: TensorOptions = {}) => {
  const opts = checkOpts('zerosLike', options);
  checkTensor('zerosLike', t, 'the input');
  return fill('zerosLike', t.shape, 0, opts.dtype ?? t.dtype, opts);
};
export const onesLike = (t: Tensor, options: TensorOptions = {}) => {
  const opts = checkOpts('onesLike', options);
  checkTensor('onesLike', t, 'the input');
  return fill('onesLike', t.shape, 1, opts.dtype ?? t.dtype, opts);
};
/** A tensor like `t` filled with `value` (its dtype unless `dtype` is given). */
export const fullLike = (t: Tensor, value: number | boolean, options: TensorOptions = {}) => {
  const opts = checkOpts('fullLike', options);
  checkTensor('fullLike', t, 'the input');
  return fill('fullLike', t.shape, value, opts.dtype ?? t.dtype, opts);
};

/**
 * [start, end) by step; int32 when all arguments are integers (PyTorch gives int64, which
 * Surf does not have), else float32, unless `dtype` is given.
 */
export function arange(start: number, end?: number, step = 1, options: TensorOptions = {}): Tensor {
  const opts = checkOpts('arange', options);
  if (end === undefined) {
    end = start;
    start = 0;
  }
  if (![start, end, step].every(Number.isFinite) || step === 0)
    throw new ValueError(
      `arange: got start ${start}, end ${end}, step ${step}; expected finite numbers and a non-zero step`,
    );
  const n = Math.max(0, Math.ceil((end - start) / step));
  const dtype = opts.dtype ?? ([start, end, step].every(Number.isInteger) ? 'int32' : 'float32');
  checkSize('arange', n, dtype);
  if (dtype === 'int32' && n > 0) checkInt32Values('arange', [start, start + (n - 1) * step]);
  const arr = arrayFor(dtype, n);
  for (let i = 0; i < n; i++) arr[i] = castScalar(start + i * step, dtype);
  return make(NDArray.fromData(getBackend(), arr, [n], dtype), opts);
}

/** `steps` evenly spaced float32 values from start to end, both included. */
export function linspace(start: number, end: number, steps: number, options: TensorOptions = {}): Tensor {
  const opts = checkOpts('linspace', options);
  if (!Number.isInteger(steps) || steps < 0)
    throw new ValueError(`linspace: steps must be a non-negative integer; got ${steps}`);
  checkSize('linspace', steps, 'float32');
  const arr = new Float32Array(steps);
  for (let i = 0; i < steps; i++)
    arr[i] = steps === 1 ? start : i === steps - 1 ? end : start + (i * (end - start)) / (steps - 1);
  const dtype = opts.dtype ?? 'float32';
  return make(
    NDArray.fromData(
      getBackend(),
      dtype === 'float32' ? arr : Array.from(arr, (v) => castScalar(v, dtype)),
      [steps],
      dtype,
    ),
    opts,
  );
}

export function eye(n: number, m = n, options: TensorOptions = {}): Tensor {
  const opts = checkOpts('eye', options);
  const shape = assertShape('eye', [n, m]);
  checkSize('eye', n * m, opts.dtype ?? 'float32');
  const dtype = opts.dtype ?? 'float32';
  const arr = arrayFor(dtype, n * m);
  for (let i = 0; i < Math.min(n, m); i++) arr[i * m + i] = 1;
  return make(NDArray.fromData(getBackend(), arr, shape, dtype), opts);
}
