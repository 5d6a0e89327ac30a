import { Tensor, cat, stack, where } from '@surf/autograd';
import { InputSpec, randomDType, randomInput, randomShape } from './inputs';
import {
  DT,
  broadcast,
  dimOf,
  dimsOf,
  fmt,
  matmulShape,
  promote,
  reducedShape,
  reshapeTarget,
  scalarDT,
  size,
} from './oracle';
import { Rng } from './rng';

/**
 * The fuzz steps: each draws one public Tensor call with random arguments for the current
 * value, valid or not, and says (from oracle.ts) what must happen: a result of a known shape
 * and dtype, or a SurfError of a known class whose message names the op and the shapes.
 */

/** What the fuzzer knows about the value a step works on. */
export interface Val {
  shape: number[];
  dtype: DT;
  /**
   * True while the value is bit-identical on every backend (inputs, movement, int math,
   * max). Ops that turn a last-bit difference into a large one (comparisons, casts to int,
   * argmax, log, pow, division) are only drawn on exact values, so backends can be compared.
   */
  exact: boolean;
}

export type ErrorType = 'ShapeError' | 'DTypeError' | 'ValueError' | 'SurfTypeError' | 'DisposedError';

export type Expect =
  | { kind: 'ok'; out: Val }
  /** Must raise a SurfError (of `type` when given) whose message contains every `mention`. */
  | { kind: 'error'; mention: string[]; type?: ErrorType }
  /** Either a result or such an error: a corner whose semantics the docs leave open. */
  | { kind: 'either'; mention: string[] };

export interface Step {
  op: string;
  desc: string;
  /** Extra tensors the call uses, built on the backend under test. */
  fresh: InputSpec[];
  apply(x: Tensor, fresh: Tensor[]): Tensor;
  expect: Expect;
}

type Gen = (rng: Rng, x: Val) => Step | null;

const ok = (shape: number[], dtype: DT, exact: boolean): Expect => ({ kind: 'ok', out: { shape, dtype, exact } });
const err = (mention: string[], type?: ErrorType): Expect => ({ kind: 'error', mention, type });
const either = (op: string): Expect => ({ kind: 'either', mention: [op] });
const j = (v: unknown) => JSON.stringify(v);

// ---------------------------------------------------------------- elementwise

const FLOAT_UNARY = [
  'exp',
  'log',
  'sqrt',
  'rsqrt',
  'sin',
  'cos',
  'tanh',
  'sigmoid',
  'softplus',
  'gelu',
  'leakyRelu',
] as const;
const KEEP_UNARY = ['neg', 'abs', 'relu'] as const;
/** Unary ops that magnify a last-bit input difference (or differ on NaN sign): exact inputs only. */
const TOUCHY_UNARY = new Set(['exp', 'log', 'sqrt', 'rsqrt']);

const unary: Gen = (rng, x) => {
  const op = rng.pick([...FLOAT_UNARY, ...KEEP_UNARY]);
  if (TOUCHY_UNARY.has(op) && !x.exact) return null;
  const float = (FLOAT_UNARY as readonly string[]).includes(op);
  // Bad arguments for the ops that take one.
  if (op === 'softplus' && rng.chance(0.2)) {
    return { op, desc: 'softplus(-1)', fresh: [], apply: (t) => t.softplus(-1), expect: err([op], 'ValueError') };
  }
  if (op === 'gelu' && rng.chance(0.2)) {
    return {
      op,
      desc: "gelu('erf')",
      fresh: [],
      apply: (t) => t.gelu('erf' as 'none'),
      expect: err([op], 'ValueError'),
    };
  }
  if (op === 'leakyRelu' && rng.chance(0.2)) {
    return {
      op,
      desc: "leakyRelu('x')",
      fresh: [],
      apply: (t) => t.leakyRelu('x' as unknown as number),
      expect: err([op], 'ValueError'),
    };
  }
  const arg =
    op === 'softplus'
      ? rng.pick([1, 2, 0.5])
      : op === 'gelu'
        ? rng.pick(['none', 'tanh'] as const)
        : op === 'leakyRelu'
          ? rng.pick([0.01, 0.2])
          : undefined;
  const apply = (t: Tensor): Tensor => {
    switch (op) {
      case 'softplus':
        return t.softplus(arg as number);
      case 'gelu':
        return t.gelu(arg as 'none' | 'tanh');
      case 'leakyRelu':
        return t.leakyRelu(arg as number);
      default:
        return (t[op] as () => Tensor).call(t);
    }
  };
  let expect: Expect;
  if (float) expect = ok(x.shape, 'float32', false);
  else if (x.dtype === 'bool') expect = either(op);
  else expect = ok(x.shape, x.dtype, x.exact);
  return { op, desc: `${op}(${arg === undefined ? '' : j(arg)})`, fresh: [], apply, expect };
};

const ARITH = ['add', 'sub', 'mul', 'maximum', 'minimum'] as const;
const FLOAT_BINARY = ['div', 'pow'] as const;
const COMPARE = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;
type BinOp = (typeof ARITH)[number] | (typeof FLOAT_BINARY)[number] | (typeof COMPARE)[number];

/** A shape that broadcasts with `s`: a suffix of it, some dims set to 1, maybe more leading dims. */
function compatibleShape(rng: Rng, s: readonly number[]): number[] {
  let out = s.slice(rng.int(0, s.length));
  out = out.map((d) => (rng.chance(0.3) ? 1 : d));
  // Where s has a 1, the other side may be anything.
  const off = s.length - out.length;
  out = out.map((d, i) => (s[off + i] === 1 && rng.chance(0.3) ? rng.int(2, 3) : d));
  if (rng.chance(0.2) && s.length < 3) out = [rng.int(1, 3), ...s.slice()];
  return out;
}

/** A shape that does not broadcast with `s`, or null when every shape does (s all 1s). */
function incompatibleShape(rng: Rng, s: readonly number[]): number[] | null {
  const dims = s.map((d, i) => i).filter((i) => s[i] !== 1);
  if (!dims.length) return null;
  const i = rng.pick(dims);
  const out = s.slice();
  out[i] = s[i] === 2 ? 3 : 2;
  return out.slice(rng.int(0, i));
}

function binaryDType(op: BinOp, a: DT, b: DT): DT | 'either' {
  if ((COMPARE as readonly string[]).includes(op)) return 'bool';
  if ((FLOAT_BINARY as readonly string[]).includes(op)) return 'float32';
  const dt = promote(a, b);
  return dt === 'bool' ? 'either' : dt;
}

function callBinary(op: BinOp, a: Tensor, b: Tensor | number | boolean): Tensor {
  return (a[op] as (o: Tensor | number | boolean) => Tensor).call(a, b);
}

const binary: Gen = (rng, x) => {
  const op = rng.pick<BinOp>([...ARITH, ...ARITH, ...FLOAT_BINARY, ...COMPARE]);
  const touchy = !(ARITH as readonly string[]).includes(op);
  if (touchy && !x.exact) return null;
  const mode = rng.pick(['same', 'compat', 'compat', 'bad', 'scalar', 'scalar', 'junk']);
  if (mode === 'junk') {
    const junk = rng.pick([null, 'two', undefined, [1, 2]]);
    return {
      op,
      desc: `${op}(${j(junk) ?? 'undefined'})`,
      fresh: [],
      apply: (t) => callBinary(op, t, junk as unknown as number),
      expect: err([op], 'SurfTypeError'),
    };
  }
  if (mode === 'scalar') {
    const v = rng.pick<number | boolean>([2, -1, 0, 0.5, -1.5, true, false]);
    const dt = binaryDType(op, x.dtype, scalarDT(v));
    return {
      op,
      desc: `${op}(${v})`,
      fresh: [],
      apply: (t) => callBinary(op, t, v),
      expect:
        dt === 'either'
          ? either(op)
          : ok(x.shape, dt, x.exact && (dt !== 'float32' || op === 'maximum' || op === 'minimum')),
    };
  }
  let shape: number[] | null =
    mode === 'same'
      ? x.shape.slice()
      : mode === 'compat'
        ? compatibleShape(rng, x.shape)
        : incompatibleShape(rng, x.shape);
  if (!shape) shape = x.shape.slice();
  const odt = rng.chance(0.7) ? x.dtype : randomDType(rng);
  const spec = randomInput(rng, shape, odt);
  const swap = rng.chance(0.3);
  const out = broadcast(x.shape, shape);
  const dt = binaryDType(op, x.dtype, odt);
  const [sa, sb] = swap ? [shape, x.shape] : [x.shape, shape];
  let expect: Expect;
  if (!out) expect = dt === 'either' ? either(op) : err([op, fmt(sa), fmt(sb)], 'ShapeError');
  else if (dt === 'either') expect = either(op);
  else expect = ok(out, dt, x.exact && (dt !== 'float32' || op === 'maximum' || op === 'minimum'));
  return {
    op,
    desc: `${swap ? `${fmt(shape)} ${odt}.${op}(x)` : `x.${op}(${fmt(shape)} ${odt})`}`,
    fresh: [spec],
    apply: (t, [o]) => (swap ? callBinary(op, o, t) : callBinary(op, t, o)),
    expect,
  };
};

const whereGen: Gen = (rng, x) => {
  if (!x.exact && rng.chance(0.5)) return null;
  const cshape = rng.chance(0.8) ? compatibleShape(rng, x.shape) : (incompatibleShape(rng, x.shape) ?? x.shape);
  const cdt: DT = rng.chance(0.85) ? 'bool' : 'int32';
  const cond = randomInput(rng, cshape, cdt, false);
  const useScalar = rng.chance(0.5);
  const other = useScalar
    ? rng.pick([0, 1.5, -2])
    : randomInput(rng, compatibleShape(rng, x.shape), rng.chance(0.7) ? x.dtype : randomDType(rng));
  const odt = typeof other === 'number' ? scalarDT(other) : other.dtype;
  const oshape = typeof other === 'number' ? [] : other.shape;
  const out = broadcast(cshape, x.shape, oshape);
  let expect: Expect;
  if (cdt !== 'bool') expect = err(['where', 'bool'], 'DTypeError');
  else if (!out) expect = err(['where'], 'ShapeError');
  else expect = ok(out, promote(x.dtype, odt), x.exact);
  return {
    op: 'where',
    desc: `where(${fmt(cshape)} ${cdt}, x, ${typeof other === 'number' ? other : `${fmt(oshape)} ${odt}`})`,
    fresh: typeof other === 'number' ? [cond] : [cond, other],
    apply: (t, [c, o]) => where(c, t, o ?? (other as number)),
    expect,
  };
};

const clampGen: Gen = (rng, x) => {
  const lo = rng.pick([undefined, -1, 0, -0.5]);
  const hi = rng.pick([undefined, 1, 2, 0.25]);
  const present = [lo, hi].filter((v): v is number => v !== undefined);
  let expect: Expect;
  if (!present.length) expect = err(['clamp'], 'ValueError');
  else if (x.dtype === 'bool') expect = either('clamp');
  else {
    const dt = promote(x.dtype, ...present.map(scalarDT));
    expect = ok(x.shape, dt, x.exact);
  }
  return { op: 'clamp', desc: `clamp(${lo}, ${hi})`, fresh: [], apply: (t) => t.clamp(lo, hi), expect };
};

const castGen: Gen = (rng, x) => {
  const to = rng.pick<DT | 'float64'>(['float32', 'int32', 'bool', 'float64']);
  if (to !== 'float32' && to !== 'float64' && x.dtype === 'float32' && !x.exact) return null;
  const expect =
    to === 'float64' ? err(['cast', 'float64'], 'DTypeError') : ok(x.shape, to, x.exact || to === 'float32');
  return { op: 'cast', desc: `cast(${to})`, fresh: [], apply: (t) => t.cast(to as DT), expect };
};

// ---------------------------------------------------------------- reductions

/** A dim argument: absent, valid (positive or negative), a list, or one of several bad ones. */
function dimArg(
  rng: Rng,
  n: number,
  allowList: boolean,
): { dim: number | number[] | undefined; dims: number[] | null } {
  const kind = rng.pick(['none', 'one', 'one', 'neg', 'list', 'out', 'repeat', 'frac']);
  let dim: number | number[] | undefined;
  switch (kind) {
    case 'none':
      dim = undefined;
      break;
    case 'one':
      dim = rng.int(0, Math.max(0, n - 1));
      break;
    case 'neg':
      dim = -rng.int(1, Math.max(1, n));
      break;
    case 'list':
      dim = allowList
        ? rng.shuffle(Array.from({ length: n }, (_, i) => i)).slice(0, rng.int(0, n))
        : rng.int(0, Math.max(0, n - 1));
      break;
    case 'out':
      dim = rng.chance(0.5) ? n : -n - 1;
      break;
    case 'repeat':
      dim = allowList && n > 0 ? [0, -n] : n + 2;
      break;
    default:
      dim = 0.5;
  }
  return { dim, dims: dimsOf(dim, n) };
}

const REDUCE = ['sum', 'mean', 'max', 'min', 'var', 'std', 'logsumexp'] as const;

const reduceGen: Gen = (rng, x) => {
  const op = rng.pick(REDUCE);
  const n = x.shape.length;
  const { dim, dims } = dimArg(rng, n, true);
  const keepdim = rng.chance(0.4);
  const correction = rng.pick([0, 1]);
  const apply = (t: Tensor): Tensor => {
    switch (op) {
      case 'var':
        return t.var(dim, keepdim, correction);
      case 'std':
        return t.std(dim, keepdim, correction);
      default: {
        // max/min over dims is amax/amin (a number dim on max/min gives { values, indices }).
        const m = op === 'max' ? 'amax' : op === 'min' ? 'amin' : op;
        return (t[m] as (d?: number | number[], k?: boolean) => Tensor).call(t, dim, keepdim);
      }
    }
  };
  const desc = `${op}(${j(dim)}, ${keepdim}${op === 'var' || op === 'std' ? `, ${correction}` : ''})`;
  let expect: Expect;
  // Ops that reject bool check the dtype before the dims.
  if ((op === 'max' || op === 'min') && x.dtype === 'bool') expect = err([op, 'bool'], 'DTypeError');
  else if (n === 0 && dim !== undefined && (dim === 0 || dim === -1)) expect = either(op);
  else if (!dims) expect = err([op], 'ShapeError');
  else {
    const shape = reducedShape(x.shape, dims, keepdim);
    const empty = dims.some((d) => x.shape[d] === 0);
    if (op === 'max' || op === 'min') {
      if (x.dtype === 'bool') expect = err([op, 'bool'], 'DTypeError');
      else if (empty) expect = err([op], 'ValueError');
      else expect = ok(shape, x.dtype, x.exact);
    } else if (op === 'sum')
      expect = ok(shape, x.dtype === 'float32' ? 'float32' : 'int32', x.exact && x.dtype !== 'float32');
    else if (op === 'logsumexp' && empty) expect = either(op);
    else expect = ok(shape, 'float32', false);
  }
  return { op, desc, fresh: [], apply, expect };
};

const argGen: Gen = (rng, x) => {
  if (!x.exact) return null;
  const op = rng.pick(['argmax', 'argmin'] as const);
  const n = x.shape.length;
  const dim = rng.chance(0.3) ? undefined : rng.chance(0.8) ? rng.int(-n, Math.max(0, n - 1)) : n + 1;
  const keepdim = rng.chance(0.4);
  let expect: Expect;
  const d = dim === undefined ? null : dimOf(dim, n);
  if (x.dtype === 'bool') expect = err([op, 'bool'], 'DTypeError');
  else if (n === 0 && dim !== undefined) expect = either(op);
  else if (dim !== undefined && d === null) expect = err([op], 'ShapeError');
  else if (dim === undefined ? size(x.shape) === 0 : x.shape[d!] === 0) expect = err([op], 'ValueError');
  else if (dim === undefined) expect = ok(keepdim ? x.shape.map(() => 1) : [], 'int32', true);
  else expect = ok(reducedShape(x.shape, [d!], keepdim), 'int32', true);
  return { op, desc: `${op}(${dim}, ${keepdim})`, fresh: [], apply: (t) => t[op](dim, keepdim), expect };
};

const softmaxGen: Gen = (rng, x) => {
  const op = rng.pick(['softmax', 'logSoftmax'] as const);
  const n = x.shape.length;
  const dim = rng.chance(0.85) ? rng.int(-n, Math.max(0, n - 1)) : n;
  let expect: Expect;
  if (n === 0) expect = either(op);
  else if (dimOf(dim, n) === null) expect = err([op], 'ShapeError');
  else expect = ok(x.shape, 'float32', false);
  return { op, desc: `${op}(${dim})`, fresh: [], apply: (t) => t[op](dim), expect };
};

// ---------------------------------------------------------------- movement

const reshapeGen: Gen = (rng, x) => {
  const n = size(x.shape);
  const op = rng.pick(['reshape', 'view'] as const);
  let target: number[];
  const kind = rng.pick(['factor', 'factor', 'infer', 'bad', 'two-infer', 'negative']);
  if (kind === 'factor' || kind === 'infer') {
    // Split n into up to 3 factors.
    const fs: number[] = [];
    let rest = n;
    for (let k = 0; k < rng.int(0, 2) && rest > 1; k++) {
      const divs = Array.from({ length: rest }, (_, i) => i + 1).filter((d) => rest % d === 0);
      const f = rng.pick(divs);
      fs.push(f);
      rest /= f;
    }
    target = rest === 1 && fs.length && rng.chance(0.5) ? fs : [...fs, rest];
    if (n === 0) target = rng.shuffle([0, rng.int(1, 3)]);
    if (kind === 'infer' && target.length) target[rng.int(0, target.length - 1)] = -1;
  } else if (kind === 'bad') target = [n + 1];
  else if (kind === 'two-infer') target = [-1, -1];
  else target = [-2, -n];
  const res = reshapeTarget(target, n);
  const expect = res ? ok(res, x.dtype, x.exact) : err(kind === 'bad' ? [op, fmt(x.shape)] : [op], 'ShapeError');
  return {
    op,
    desc: `${op}(${j(target)})`,
    fresh: [],
    apply: (t) => (op === 'view' ? t.view(target) : t.reshape(target)),
    expect,
  };
};

const permuteGen: Gen = (rng, x) => {
  const n = x.shape.length;
  const kind = rng.pick(['perm', 'perm', 'perm', 'short', 'repeat', 'transpose', 'T']);
  if (kind === 'T') {
    return {
      op: 'T',
      desc: 'T',
      fresh: [],
      apply: (t) => t.T,
      expect: ok(x.shape.slice().reverse(), x.dtype, x.exact),
    };
  }
  if (kind === 'transpose') {
    const a = rng.int(-n - 1, n),
      b = rng.int(-n, Math.max(0, n - 1));
    const da = dimOf(a, n),
      db = dimOf(b, n);
    let expect: Expect;
    if (da === null || db === null) expect = err(['transpose'], 'ShapeError');
    else {
      const s = x.shape.slice();
      [s[da], s[db]] = [s[db], s[da]];
      expect = ok(s, x.dtype, x.exact);
    }
    return { op: 'transpose', desc: `transpose(${a}, ${b})`, fresh: [], apply: (t) => t.transpose(a, b), expect };
  }
  let order = rng.shuffle(Array.from({ length: n }, (_, i) => i)).map((d) => (rng.chance(0.3) ? d - n : d));
  if (kind === 'short') order = order.slice(1).concat(n > 1 ? [] : [0, 1]);
  if (kind === 'repeat' && n >= 2) order[1] = order[0];
  const dims = order.map((d) => dimOf(d, n));
  const valid = order.length === n && dims.every((d) => d !== null) && new Set(dims).size === n;
  const expect = valid
    ? ok(
        dims.map((d) => x.shape[d!]),
        x.dtype,
        x.exact,
      )
    : err(['permute'], 'ShapeError');
  return { op: 'permute', desc: `permute(${j(order)})`, fresh: [], apply: (t) => t.permute(order), expect };
};

const expandGen: Gen = (rng, x) => {
  let target = x.shape.map((d) => (d === 1 && rng.chance(0.6) ? rng.int(2, 3) : rng.chance(0.2) ? -1 : d));
  if (rng.chance(0.3)) target = [rng.int(1, 3), ...target];
  const kind = rng.pick(['ok', 'ok', 'ok', 'bad', 'fewer']);
  if (kind === 'bad') {
    const i = x.shape.findIndex((d) => d !== 1);
    if (i >= 0) target[target.length - x.shape.length + i] = x.shape[i] + 1;
  }
  if (kind === 'fewer' && x.shape.length > 0) target = target.slice(target.length - x.shape.length + 1);
  const lead = target.length - x.shape.length;
  let valid = lead >= 0;
  const out: number[] = [];
  target.forEach((d, i) => {
    const src = i >= lead ? x.shape[i - lead] : null;
    if (src === null) {
      if (d < 0) valid = false;
      out.push(d);
      return;
    }
    const r = d === -1 ? src : d;
    if (!(src === r || src === 1) || r < 0) valid = false;
    out.push(r);
  });
  const op = rng.chance(0.8) ? 'expand' : 'broadcastTo';
  const expect = valid ? ok(out, x.dtype, x.exact) : err([op], 'ShapeError');
  return {
    op,
    desc: `${op}(${j(target)})`,
    fresh: [],
    apply: (t) => (op === 'expand' ? t.expand(target) : t.broadcastTo(target)),
    expect,
  };
};

const padGen: Gen = (rng, x) => {
  const n = x.shape.length;
  let widths: [number, number][] = x.shape.map(() => [rng.int(0, 2), rng.int(0, 2)]);
  const kind = rng.pick(['ok', 'ok', 'ok', 'negative', 'count']);
  if (kind === 'negative' && n > 0) widths[rng.int(0, n - 1)] = [-1, 0];
  if (kind === 'count') widths = widths.concat([[1, 1]]);
  // Negative constant padding crops: valid while the dim keeps a size >= 0.
  const valid = widths.length === n && widths.every(([a, b], i) => x.shape[i] + a + b >= 0);
  // PyTorch's flat order: last dim first.
  const flat = widths
    .slice()
    .reverse()
    .flatMap(([a, b]) => [a, b]);
  const expect = valid
    ? ok(
        x.shape.map((d, i) => d + widths[i][0] + widths[i][1]),
        x.dtype,
        x.exact,
      )
    : err(['pad']);
  return { op: 'pad', desc: `pad(${j(flat)})`, fresh: [], apply: (t) => t.pad(flat), expect };
};

const narrowGen: Gen = (rng, x) => {
  const n = x.shape.length;
  if (n === 0) return null;
  const dim = rng.int(-n, n - 1);
  const d = dimOf(dim, n)!;
  const len = x.shape[d];
  const start = rng.int(-1, len);
  const length = rng.int(0, len + 1);
  const s = start < 0 ? start + len : start;
  const valid = s >= 0 && s + length <= len;
  const shape = x.shape.slice();
  shape[d] = length;
  const expect = valid ? ok(shape, x.dtype, x.exact) : err(['narrow', fmt(x.shape)], 'ShapeError');
  return {
    op: 'narrow',
    desc: `narrow(${dim}, ${start}, ${length})`,
    fresh: [],
    apply: (t) => t.narrow(dim, start, length),
    expect,
  };
};

const flipGen: Gen = (rng, x) => {
  const n = x.shape.length;
  const { dim, dims } = dimArg(rng, n, true);
  const arg = dim ?? [];
  const d2 = dimsOf(arg, n);
  void dims;
  const expect = d2 ? ok(x.shape, x.dtype, x.exact) : n === 0 ? either('flip') : err(['flip'], 'ShapeError');
  return { op: 'flip', desc: `flip(${j(arg)})`, fresh: [], apply: (t) => t.flip(arg), expect };
};

const squeezeGen: Gen = (rng, x) => {
  const n = x.shape.length;
  if (rng.chance(0.5)) {
    const dim = rng.int(-n - 2, n + 1);
    const d = dimOf(dim, n + 1);
    const shape = x.shape.slice();
    if (d !== null) shape.splice(d, 0, 1);
    return {
      op: 'unsqueeze',
      desc: `unsqueeze(${dim})`,
      fresh: [],
      apply: (t) => t.unsqueeze(dim),
      expect: d === null ? err(['unsqueeze'], 'ShapeError') : ok(shape, x.dtype, x.exact),
    };
  }
  const dim = rng.chance(0.3) ? undefined : rng.int(-n - 1, n);
  const dims = dim === undefined ? x.shape.map((_, i) => i) : dimsOf(dim, n);
  const expect =
    dims === null
      ? n === 0
        ? either('squeeze')
        : err(['squeeze'], 'ShapeError')
      : ok(
          x.shape.filter((s, i) => !(s === 1 && dims.includes(i))),
          x.dtype,
          x.exact,
        );
  return { op: 'squeeze', desc: `squeeze(${dim})`, fresh: [], apply: (t) => t.squeeze(dim), expect };
};

const flattenGen: Gen = (rng, x) => {
  const n = x.shape.length;
  const a = rng.int(-n, Math.max(0, n - 1));
  const b = rng.chance(0.3) ? -1 : rng.int(-n, Math.max(0, n));
  let expect: Expect;
  if (n === 0) expect = ok([1], x.dtype, x.exact);
  else {
    const da = dimOf(a, n),
      db = dimOf(b, n);
    if (da === null || db === null) expect = err(['flatten'], 'ShapeError');
    else if (da > db) expect = err(['flatten'], 'ValueError');
    else
      expect = ok(
        [...x.shape.slice(0, da), size(x.shape.slice(da, db + 1)), ...x.shape.slice(db + 1)],
        x.dtype,
        x.exact,
      );
  }
  return { op: 'flatten', desc: `flatten(${a}, ${b})`, fresh: [], apply: (t) => t.flatten(a, b), expect };
};

const copyGen: Gen = (rng, x) => {
  const op = rng.pick(['contiguous', 'clone', 'detach'] as const);
  return { op, desc: `${op}()`, fresh: [], apply: (t) => t[op](), expect: ok(x.shape, x.dtype, x.exact) };
};

// ---------------------------------------------------------------- joins, gather, matmul

const joinGen: Gen = (rng, x) => {
  const op = rng.pick(['cat', 'stack'] as const);
  const n = x.shape.length;
  const k = rng.int(0, 2);
  const dim = op === 'cat' ? rng.int(-n, Math.max(0, n - 1)) : rng.int(-n - 1, n);
  const bad = rng.chance(0.2);
  const d = dimOf(dim, op === 'cat' ? n : n + 1);
  const specs: InputSpec[] = [];
  for (let i = 0; i < k; i++) {
    const shape = x.shape.slice();
    if (op === 'cat' && d !== null) shape[d] = rng.int(0, 3);
    if (bad && i === k - 1 && shape.length) shape[0] += 1;
    specs.push(randomInput(rng, shape, rng.chance(0.8) ? x.dtype : randomDType(rng)));
  }
  const shapes = [x.shape, ...specs.map((s) => s.shape)];
  let expect: Expect;
  if (op === 'cat' && n === 0) expect = err(['cat']);
  else if (d === null) expect = err([op], 'ShapeError');
  else {
    const okShapes =
      op === 'cat'
        ? shapes.every((s) => s.length === n && s.every((v, i) => i === d || v === x.shape[i]))
        : shapes.every((s) => s.length === n && s.every((v, i) => v === x.shape[i]));
    const dt = promote(x.dtype, ...specs.map((s) => s.dtype));
    if (!okShapes) expect = err([op, fmt(x.shape)], 'ShapeError');
    else if (op === 'cat') {
      const out = x.shape.slice();
      out[d] = shapes.reduce((a, s) => a + s[d], 0);
      expect = ok(out, dt, x.exact);
    } else {
      const out = x.shape.slice();
      out.splice(d, 0, k + 1);
      expect = ok(out, dt, x.exact);
    }
  }
  return {
    op,
    desc: `${op}([x, ${specs.map((s) => `${fmt(s.shape)} ${s.dtype}`).join(', ')}], ${dim})`,
    fresh: specs,
    apply: (t, fr) => (op === 'cat' ? cat([t, ...fr], dim) : stack([t, ...fr], dim)),
    expect,
  };
};

const indexGen: Gen = (rng, x) => {
  const n = x.shape.length;
  if (n === 0) return null;
  const dim = rng.int(-n, n - 1);
  const d = dimOf(dim, n)!;
  const len = x.shape[d];
  const kind = rng.pick(['list', 'list', 'tensor', 'out', 'float', 'twod']);
  const idx = Array.from({ length: rng.int(0, 4) }, () => rng.int(0, Math.max(0, len - 1)));
  const shape = x.shape.slice();
  shape[d] = kind === 'twod' ? -1 : idx.length;
  if (kind === 'list' || kind === 'out') {
    const list = kind === 'out' ? [...idx, rng.pick([len, -1])] : idx;
    const valid = list.every((v) => v >= 0 && v < len);
    shape[d] = list.length;
    return {
      op: 'indexSelect',
      desc: `indexSelect(${dim}, ${j(list)})`,
      fresh: [],
      apply: (t) => t.indexSelect(dim, list),
      expect: valid ? ok(shape, x.dtype, x.exact) : err(['indexSelect', fmt(x.shape)], 'ValueError'),
    };
  }
  // Tensor indices stay in range here: an out-of-range one is an error raised at once on the
  // CPU but at the next readback on WebGPU (a device-side check), so its message differs by
  // backend; packages/nn/test/values/index-range.test.ts covers it on both.
  const dt: DT = kind === 'float' ? 'float32' : 'int32';
  const ishape = kind === 'twod' ? [1, idx.length] : [idx.length];
  const spec: InputSpec = {
    shape: ishape,
    dtype: dt,
    values: idx.map((v) => (rng.chance(0.1) ? len - 1 - v : v)),
    requiresGrad: false,
  };
  let expect: Expect;
  if (kind === 'float') expect = err(['indexSelect', 'float32'], 'DTypeError');
  else if (kind === 'twod') expect = err(['indexSelect', fmt(ishape)], 'ShapeError');
  else expect = ok(shape, x.dtype, x.exact);
  return {
    op: 'indexSelect',
    desc: `indexSelect(${dim}, ${fmt(ishape)} ${dt} tensor ${j(spec.values)})`,
    fresh: [spec],
    apply: (t, [i]) => t.indexSelect(dim, i),
    expect,
  };
};

const matmulGen: Gen = (rng, x) => {
  const s = x.shape;
  const k = s.length ? s[s.length - 1] : 2;
  const kind = rng.pick(['vec', 'mat', 'mat', 'batch', 'badk', 'int', 'dot']);
  let shape: number[];
  if (kind === 'vec' || kind === 'dot') shape = [k];
  else if (kind === 'mat') shape = [k, rng.int(1, 3)];
  else if (kind === 'batch') shape = [rng.pick([1, 2]), k, rng.int(1, 3)];
  else if (kind === 'badk') shape = [k + 1, 2];
  else shape = [k, 2];
  const odt: DT = kind === 'int' ? 'int32' : 'float32';
  const spec = randomInput(rng, shape, odt);
  const op = kind === 'dot' ? 'dot' : 'matmul';
  let expect: Expect;
  if (kind === 'dot') {
    if (s.length !== 1) expect = err(['dot', fmt(s)], 'ShapeError');
    else expect = x.dtype === 'float32' ? ok([], 'float32', false) : err(['dot'], 'DTypeError');
  } else if (x.dtype !== 'float32' || odt !== 'float32') expect = err(['matmul', 'float32'], 'DTypeError');
  else {
    const out = matmulShape(s, shape);
    expect = out ? ok(out, 'float32', false) : err(['matmul', fmt(s), fmt(shape)], 'ShapeError');
  }
  return {
    op,
    desc: `${op}(${fmt(shape)} ${odt})`,
    fresh: [spec],
    apply: (t, [o]) => (op === 'dot' ? t.dot(o) : t.matmul(o)),
    expect,
  };
};

/** Using a disposed tensor must name the op and the tensor's shape. */
const disposedGen: Gen = (rng, x) => {
  const use = rng.pick(['add', 'sum', 'reshape', 'matmul'] as const);
  const apply = (t: Tensor): Tensor => {
    t.dispose();
    switch (use) {
      case 'add':
        return t.add(1);
      case 'sum':
        return t.sum();
      case 'reshape':
        return t.reshape(-1);
      default:
        return t.matmul(t);
    }
  };
  return {
    op: use,
    desc: `dispose() then ${use}`,
    fresh: [],
    apply,
    expect: err([use, fmt(x.shape)], 'DisposedError'),
  };
};

/** Generators with their weights. */
export const GENERATORS: readonly [Gen, number][] = [
  [unary, 6],
  [binary, 10],
  [whereGen, 2],
  [clampGen, 1],
  [castGen, 2],
  [reduceGen, 6],
  [argGen, 2],
  [softmaxGen, 2],
  [reshapeGen, 3],
  [permuteGen, 3],
  [expandGen, 2],
  [padGen, 2],
  [narrowGen, 2],
  [flipGen, 1],
  [squeezeGen, 2],
  [flattenGen, 1],
  [copyGen, 1],
  [joinGen, 2],
  [indexGen, 2],
  [matmulGen, 4],
  [disposedGen, 0.5],
];

export function randomStep(rng: Rng, x: Val): Step {
  const total = GENERATORS.reduce((a, [, w]) => a + w, 0);
  for (;;) {
    let r = rng.next() * total;
    for (const [g, w] of GENERATORS) {
      r -= w;
      if (r < 0) {
        const s = g(rng, x);
        if (s) return s;
        break;
      }
    }
  }
}

export { randomShape };
