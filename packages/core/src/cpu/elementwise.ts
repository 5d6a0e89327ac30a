import { DType, castScalar } from '../dtype';
import { BinaryOp, Expr, UnaryOp, exprDType, exprKey } from '../expr';
import { View } from '../view';
import { collapseDims } from './collapse';
import { transposeInto } from './transpose';
import { WasmElementwise } from './wasm/elementwise';

// Below this many elements the copies in and out of wasm memory cost more than they save.
const WASM_MIN_ELEMENTS = 4096;

/**
 * Compiles an elementwise expression into a JS loop with `new Function` (the CPU twin of the
 * WGSL code generator): one function per (expression structure, dtypes, rank, masks, layout),
 * cached. The loop walks the output in row-major order, keeping each input's buffer offset
 * with an odometer over the outer dims and a stride step along the last dim, so strided,
 * broadcast, flipped and padded inputs cost no index division. Dims that all inputs walk
 * alike are merged first, and the inner loop is specialized per input for unit stride and
 * stride 0 (read once per row), so contiguous work is one flat loop.
 */
type Kernel = (outs: unknown[], ins: unknown[], offs: number[], strides: number[][], masks: (number[][] | null)[], shape: number[], consts: number[]) => void;

const cache = new Map<string, Kernel>();

// Per-dtype JS for each op. Float math is IEEE f32 as on the GPU: every float node is
// rounded with Math.fround (JS computes in doubles, and rounding only on store would make
// eq/lt/casts of intermediates disagree with the GPU). int32 math wraps like i32 (|0, imul).
function emit(e: Expr, inDT: readonly DType[], vals: string[], consts: { value: number; dtype: DType }[]): string {
  const dt = (x: Expr) => exprDType(x, inDT);
  switch (e.kind) {
    case 'input': return vals[e.index];
    case 'const': consts.push({ value: e.value, dtype: e.dtype }); return `C${consts.length - 1}`;
    case 'cast': {
      const a = emit(e.a, inDT, vals, consts);
      const from = dt(e.a);
      if (e.dtype === from) return a;
      if (e.dtype === 'bool') return `((${a}) !== 0 ? 1 : 0)`;
      if (e.dtype === 'int32') return from === 'float32' ? `toI32(${a})` : `(${a})`;
      return `Math.fround(${a})`;
    }
    case 'unary': return unaryJs(e.op, emit(e.a, inDT, vals, consts), dt(e.a) === 'int32');
    case 'binary': {
      const a = emit(e.a, inDT, vals, consts);
      return binaryJs(e.op, a, emit(e.b, inDT, vals, consts), dt(e.a) === 'int32');
    }
    case 'where': {
      const c = emit(e.c, inDT, vals, consts);
      const a = emit(e.a, inDT, vals, consts);
      return `((${c})!==0?(${a}):(${emit(e.b, inDT, vals, consts)}))`;
    }
  }
}

function unaryJs(op: UnaryOp, a: string, isInt: boolean): string {
  switch (op) {
    case 'neg': return isInt ? `((-(${a}))|0)` : `(-(${a}))`;
    case 'exp': return `F(Math.exp(${a}))`;
    case 'log': return `F(Math.log(${a}))`;
    case 'sqrt': return `F(Math.sqrt(${a}))`;
    case 'recip': return `F(1/(${a}))`;
    case 'sin': return `F(Math.sin(${a}))`;
  }
}

function binaryJs(op: BinaryOp, a: string, b: string, isInt: boolean): string {
  switch (op) {
    case 'add': return isInt ? `((${a}+${b})|0)` : `F(${a}+${b})`;
    case 'sub': return isInt ? `((${a}-${b})|0)` : `F(${a}-${b})`;
    case 'mul': return isInt ? `Math.imul(${a},${b})` : `F(${a}*${b})`;
    case 'div': return isInt ? `idiv(${a},${b})` : `F(${a}/${b})`;
    case 'pow': return `F(Math.pow(${a},${b}))`;
    case 'max': return `Math.max(${a},${b})`;
    case 'eq': return `((${a})===(${b})?1:0)`;
    case 'lt': return `((${a})<(${b})?1:0)`;
  }
}

/**
 * How an input steps along the last dim: 'u' unit stride (a plain indexed read), 'z' stride 0
 * (read once per row, outside the inner loop), 'g' any other stride. Masked inputs are 'g'.
 */
type Step = 'u' | 'z' | 'g';

function compile(outs: readonly Expr[], inDT: readonly DType[], nd: number, masked: boolean[], steps: readonly Step[]): Kernel {
  const n = inDT.length;
  const last = nd - 1;
  const lines: string[] = [];
  lines.push(`const I = ins, O = outs, F = Math.fround;`);
  for (let i = 0; i < n; i++) {
    lines.push(`const in${i} = I[${i}], st${i} = strides[${i}], s${i} = st${i}[${last}];`);
    if (masked[i]) lines.push(`const m${i} = masks[${i}], lo${i} = m${i}[${last}][0], hi${i} = m${i}[${last}][1];`);
  }
  outs.forEach((_, k) => lines.push(`const out${k} = O[${k}];`));
  lines.push(`const inner = shape[${last}]; let total = 1; for (let d = 0; d < ${nd}; d++) total *= shape[d];`);
  lines.push(`const rows = inner === 0 ? 0 : total / inner; const idx = new Int32Array(${Math.max(nd - 1, 1)}); let o = 0;`);
  lines.push(`for (let r = 0; r < rows; r++) {`);
  for (let i = 0; i < n; i++) {
    lines.push(`  let b${i} = offs[${i}];${masked[i] ? ` let ok${i} = true;` : ''}`);
    lines.push(`  for (let d = 0; d < ${last}; d++) { b${i} += idx[d] * st${i}[d];${masked[i] ? ` if (idx[d] < m${i}[d][0] || idx[d] >= m${i}[d][1]) ok${i} = false;` : ''} }`);
  }
  const rowStart = lines.length;
  lines.push(`  for (let j = 0; j < inner; j++, o++) {`);
  const vals: string[] = [];
  for (let i = 0; i < n; i++) {
    if (masked[i]) lines.push(`    const v${i} = (ok${i} && j >= lo${i} && j < hi${i}) ? in${i}[b${i} + j * s${i}] : 0;`);
    else if (steps[i] === 'u') lines.push(`    const v${i} = in${i}[b${i} + j];`);
    else if (steps[i] === 'g') lines.push(`    const v${i} = in${i}[b${i} + j * s${i}];`);
    else lines.splice(rowStart, 0, `  const v${i} = in${i}[b${i}];`);
    vals.push(`v${i}`);
  }
  const consts: { value: number; dtype: DType }[] = [];
  outs.forEach((e, k) => lines.push(`    out${k}[o] = ${emit(e, inDT, vals, consts)};`));
  // Constants live in locals: the optimizer keeps them in registers across the loop.
  consts.forEach((_, c) => lines.splice(1, 0, `const C${c} = C[${c}];`));
  lines.push(`  }`);
  lines.push(`  for (let d = ${last - 1}; d >= 0; d--) { if (++idx[d] < shape[d]) break; idx[d] = 0; }`);
  lines.push(`}`);
  const body = lines.join('\n');
  const make = new Function('toI32', 'idiv', `return function kernel(outs, ins, offs, strides, masks, shape, C) {\n${body}\n};`);
  return make(toI32, idiv) as Kernel;
}

const numelOf = (sh: readonly number[]) => sh.reduce((a, b) => a * b, 1);

function toI32(v: number): number { return castScalar(v, 'int32'); }
// Integer division truncates toward zero; division by zero gives 0 on every backend.
function idiv(a: number, b: number): number { return b === 0 ? 0 : (a / b) | 0; }

export function runElementwise(outs: readonly Expr[], outArrays: unknown[], inputs: { data: unknown; dtype: DType; view: View }[], shape: readonly number[]): void {
  const inDT = inputs.map((x) => x.dtype);
  // A 0-d tensor runs as one element of a 1-d loop.
  let sh = shape.length === 0 ? [1] : shape.slice();
  const views = inputs.map((x) => (shape.length === 0 ? new View([1], [0], x.view.offset, null) : x.view));
  const masked = views.map((v) => v.mask !== null);
  let strides = views.map((v) => v.strides as number[]);
  if (!masked.some((m) => m)) {
    // Unmasked: merge dims the inputs walk alike, so contiguous work runs as one flat loop.
    const c = collapseDims(sh, strides);
    sh = c.shape;
    strides = c.strides;
  }
  const steps: Step[] = strides.map((s, i) => (masked[i] ? 'g' : s[sh.length - 1] === 1 ? 'u' : s[sh.length - 1] === 0 ? 'z' : 'g'));
  const consts: { value: number; dtype: DType }[] = [];
  const key = `${outs.map((e) => exprKey(e, consts)).join(';')}|${inDT.join(',')}|${sh.length}|${masked.map(Number).join('')}|${steps.join('')}`;
  const constVals = consts.map((c) => castScalar(c.value, c.dtype));
  // A plain copy of a transposed 2-d view (contiguous() of a .T) runs as a tiled transpose.
  if (outs.length === 1 && outs[0].kind === 'input' && outs[0].index === 0 && sh.length === 2 && steps[0] === 'g' && !masked[0] && strides[0][0] === 1) {
    transposeInto(inputs[0].data as ArrayLike<number>, views[0].offset, sh[0], sh[1], strides[0][1], outArrays[0] as { [i: number]: number });
    return;
  }
  // Large float32 work (optimizer updates, activations, bias adds) runs on WebAssembly SIMD
  // when the expression has a SIMD form and every input is contiguous along its rows, a row
  // broadcast down them, one value per row or a scalar; the results are bit-identical to the
  // JS kernel's.
  if (sh.length <= 2 && !steps.includes('g') && numelOf(sh) >= WASM_MIN_ELEMENTS) {
    const w = WasmElementwise.get();
    const two = sh.length === 2;
    const ops = inputs.map((x, i) => ({ data: x.data as Float32Array, off: views[i].offset, rs: two ? strides[i][0] : 0, cs: strides[i][sh.length - 1] }));
    if (w && w.run(key, outs, outArrays as Float32Array[], ops, inDT, two ? sh[0] : 1, sh[sh.length - 1], constVals)) return;
  }
  let k = cache.get(key);
  if (!k) {
    k = compile(outs, inDT, sh.length, masked, steps);
    cache.set(key, k);
  }
  k(outArrays, inputs.map((x) => x.data), views.map((v) => v.offset), strides,
    views.map((v) => (v.mask ? v.mask.map((m) => [m[0], m[1]]) : null)), sh, constVals);
}
