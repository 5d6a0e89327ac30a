import {
  DType,
  NDArray,
  ShapeError,
  TypedArray,
  ValueError,
  arrayFor,
  assertDType,
  assertShape,
  castScalar,
  checkInt32,
  numel,
  randomArray,
  randomInts,
} from '@surf/core';
import { getBackend } from './context';
import { scalarDType } from './dtypes';
import { nextSeed } from './seed';
import { checkInt32Values, checkRandintRange, checkSize } from './creation-limits';
import { dynamicData } from './jit/hooks'; // jit: fresh random numbers on every replay
import { NestedArray, Tensor } from './tensor';

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

// nnapi: an options argument that is not an object (tensor(data, 'float32')) is an error, not
// silently the defaults.
function checkOpts(op: string, opts: unknown): void {
  if (opts !== undefined && (opts === null || typeof opts !== 'object' || Array.isArray(opts))) {
    throw new ValueError(
      `${op}: the options argument must be an object { dtype?, requiresGrad? }; got ${opts === null ? 'null' : Array.isArray(opts) ? 'an array' : `${typeof opts} ${JSON.stringify(opts)}`}`,
    );
  }
}

function make(nd: NDArray, opts: TensorOptions): Tensor {
  checkOpts('tensor creation', opts);
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

/** A tensor from nested arrays, a number/boolean (0-d), or a typed array (1-d). */
export function tensor(
  data: NestedArray | TypedArray | Float64Array | ArrayLike<number>,
  opts: TensorOptions = {},
): Tensor {
  if (data instanceof Tensor) throw new ValueError('tensor: got a Tensor; use t.clone() or t.detach()');
  checkOpts('tensor', opts);
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
    if (data instanceof Uint8Array && !opts.dtype) inferred = 'bool';
  } else {
    const f = flattenNested(data as NestedArray);
    shape = f.shape;
    values = f.values;
    const kinds = new Set(f.values.map((v) => scalarDType(v)));
    if (kinds.has('bool') && kinds.size > 1)
      throw new ValueError('tensor: mixes booleans and numbers; expected one kind');
    inferred = kinds.has('float32') ? 'float32' : kinds.has('int32') ? 'int32' : kinds.has('bool') ? 'bool' : 'float32';
  }
  // Integer data that is to require grad is meant as floats (tensor([1, 2], { requiresGrad: true })).
  const dtype = opts.dtype
    ? assertDType('tensor', opts.dtype)
    : opts.requiresGrad && inferred === 'int32'
      ? 'float32'
      : inferred;
  checkSize('tensor', values.length, dtype);
  if (dtype === 'int32') checkInt32Values('tensor', values);
  const arr = arrayFor(dtype, values.length);
  for (let i = 0; i < values.length; i++) arr[i] = castScalar(Number(values[i]), dtype);
  return make(NDArray.fromData(getBackend(), arr, shape, dtype), opts);
}

export function full(shape: ShapeArg, value: number | boolean, opts: TensorOptions = {}): Tensor {
  if (typeof value !== 'number' && typeof value !== 'boolean')
    throw new ValueError(`full: fill value must be a number or boolean; got ${typeof value}`);
  const dtype = opts.dtype ?? scalarDType(value);
  if (dtype === 'int32') checkInt32('full', Number(value), 'fill value');
  return make(NDArray.full(getBackend(), toShape('full', shape), Number(value), dtype), opts);
}
export const zeros = (shape: ShapeArg, opts: TensorOptions = {}) => {
  checkOpts('zeros', opts);
  return full(shape, 0, { dtype: 'float32', ...opts });
};
export const ones = (shape: ShapeArg, opts: TensorOptions = {}) => {
  checkOpts('ones', opts);
  return full(shape, 1, { dtype: 'float32', ...opts });
};
export const zerosLike = (t: Tensor, opts: TensorOptions = {}) => {
  checkOpts('zerosLike', opts);
  return full(t.shape, 0, { dtype: t.dtype, ...opts });
};
export const onesLike = (t: Tensor, opts: TensorOptions = {}) => {
  checkOpts('onesLike', opts);
  return full(t.shape, 1, { dtype: t.dtype, ...opts });
};

/** [start, end) by step; int32 when all arguments are integers, else float32 (torch.arange). */
export function arange(start: number, end?: number, step = 1, opts: TensorOptions = {}): Tensor {
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
export function linspace(start: number, end: number, steps: number, opts: TensorOptions = {}): Tensor {
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

export function eye(n: number, m = n, opts: TensorOptions = {}): Tensor {
  const shape = assertShape('eye', [n, m]);
  checkSize('eye', n * m, opts.dtype ?? 'float32');
  const dtype = opts.dtype ?? 'float32';
  const arr = arrayFor(dtype, n * m);
  for (let i = 0; i < Math.min(n, m); i++) arr[i * m + i] = 1;
  return make(NDArray.fromData(getBackend(), arr, shape, dtype), opts);
}

/** Uniform [0, 1) float32, from the global seed (manualSeed): the same on every backend. */
export function rand(shape: ShapeArg, opts: TensorOptions = {}): Tensor {
  const sh = toShape('rand', shape);
  return make(
    NDArray.fromData(
      getBackend(),
      dynamicData(() => randomArray('uniform', numel(sh), nextSeed())),
      sh,
    ),
    opts,
  );
}

/** Standard normal float32 (Box-Muller on the host). */
export function randn(shape: ShapeArg, opts: TensorOptions = {}): Tensor {
  const sh = toShape('randn', shape);
  return make(
    NDArray.fromData(
      getBackend(),
      dynamicData(() => randomArray('normal', numel(sh), nextSeed(), 0, 1)),
      sh,
    ),
    opts,
  );
}

/** Uniform int32 integers in [low, high). */
export function randint(low: number, high: number, shape: ShapeArg): Tensor {
  const sh = toShape('randint', shape);
  checkRandintRange(low, high);
  return new Tensor(
    NDArray.fromData(
      getBackend(),
      dynamicData(() => randomInts(numel(sh), low, high, nextSeed())),
      sh,
      'int32',
    ),
  );
}
