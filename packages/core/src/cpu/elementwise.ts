import { DType, castScalar } from '../dtype';
import { Expr, exprKey } from '../expr';
import { lowerViews } from '../ops/lower';
import { foldExpr } from '../ops/visit';
import { JS_BINARY, JS_HELPERS, JS_UNARY } from './js-ops';
import { View } from '../view';
import { transposeInto } from './transpose';
import { WasmElementwise } from './wasm/elementwise';

// Below this many elements the copies in and out of wasm memory cost more than they save.
const WASM_MIN_ELEMENTS = 4096;
// The least elements per outer index for a 3-d loop to run as 2-d SIMD slices.
const WASM_MIN_SLICE = 1024;

/**
 * Compiles an elementwise expression into a JS loop with `new Function` (the CPU twin of the
 * WGSL code generator): one function per (expression structure, dtypes, rank, masks, layout),
 * cached. The loop walks the output in row-major order, keeping each input's buffer offset
 * with an odometer over the outer dims and a stride step along the last dim, so strided,
 * broadcast, flipped and padded inputs cost no index division. Dims that all inputs walk
 * alike are merged first, and the inner loop is specialized per input for unit stride and
 * stride 0 (read once per row), so contiguous work is one flat loop.
 */
type Kernel = (
  outs: unknown[],
  ins: unknown[],
  offs: number[],
  strides: number[][],
  masks: (number[][] | null)[],
  shape: number[],
  consts: number[],
) => void;

const cache = new Map<string, Kernel>();

/** The JS expression for each output: a fold over the tree, spelled by js-ops.ts. */
function emit(e: Expr, inDT: readonly DType[], vals: string[], counter: { next: number }): string {
  return foldExpr<string>(
    e,
    inDT,
    {
      input: (i) => vals[i],
      const: (_, __, slot) => `C${slot}`,
      cast: (a, from, to) => {
        if (to === from) return a;
        if (to === 'bool') return `((${a}) !== 0 ? 1 : 0)`;
        if (to === 'int32') return from === 'float32' ? `toI32(${a})` : `(${a})`;
        return `Math.fround(${a})`;
      },
      unary: (op, a, dt) => JS_UNARY[op](a, dt),
      binary: (op, a, b, dt) => JS_BINARY[op](a, b, dt),
      where: (c, a, b) => `((${c})!==0?(${a}):(${b}))`,
    },
    counter,
  ).value;
}

/**
 * How an input steps along the last dim: 'u' unit stride (a plain indexed read), 'z' stride 0
 * (read once per row, outside the inner loop), 'g' any other stride. Masked inputs are 'g'.
 */
type Step = 'u' | 'z' | 'g';

function compile(
  outs: readonly Expr[],
  inDT: readonly DType[],
  nd: number,
  masked: boolean[],
  steps: readonly Step[],
): Kernel {
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
  lines.push(
    `const rows = inner === 0 ? 0 : total / inner; const idx = new Int32Array(${Math.max(nd - 1, 1)}); let o = 0;`,
  );
  lines.push(`for (let r = 0; r < rows; r++) {`);
  for (let i = 0; i < n; i++) {
    lines.push(`  let b${i} = offs[${i}];${masked[i] ? ` let ok${i} = true;` : ''}`);
    lines.push(
      `  for (let d = 0; d < ${last}; d++) { b${i} += idx[d] * st${i}[d];${masked[i] ? ` if (idx[d] < m${i}[d][0] || idx[d] >= m${i}[d][1]) ok${i} = false;` : ''} }`,
    );
  }
  const rowStart = lines.length;
  lines.push(`  for (let j = 0; j < inner; j++, o++) {`);
  const vals: string[] = [];
  for (let i = 0; i < n; i++) {
    if (masked[i])
      lines.push(`    const v${i} = (ok${i} && j >= lo${i} && j < hi${i}) ? in${i}[b${i} + j * s${i}] : 0;`);
    else if (steps[i] === 'u') lines.push(`    const v${i} = in${i}[b${i} + j];`);
    else if (steps[i] === 'g') lines.push(`    const v${i} = in${i}[b${i} + j * s${i}];`);
    else lines.splice(rowStart, 0, `  const v${i} = in${i}[b${i}];`);
    vals.push(`v${i}`);
  }
  const counter = { next: 0 };
  outs.forEach((e, k) => lines.push(`    out${k}[o] = ${emit(e, inDT, vals, counter)};`));
  // Constants live in locals: the optimizer keeps them in registers across the loop.
  for (let c = 0; c < counter.next; c++) lines.splice(1, 0, `const C${c} = C[${c}];`);
  lines.push(`  }`);
  lines.push(`  for (let d = ${last - 1}; d >= 0; d--) { if (++idx[d] < shape[d]) break; idx[d] = 0; }`);
  lines.push(`}`);
  const body = lines.join('\n');
  const names = Object.keys(JS_HELPERS);
  // Math comes in as a parameter, not the global: under jest (a vm context) each global
  // lookup in the loop costs ~500x a local one, and the tests run these kernels a lot.
  const make = new Function(
    ...names,
    'Math',
    `return function kernel(outs, ins, offs, strides, masks, shape, C) {\n${body}\n};`,
  );
  return make(...names.map((n) => JS_HELPERS[n as keyof typeof JS_HELPERS]), Math) as Kernel;
}

const numelOf = (sh: readonly number[]) => sh.reduce((a, b) => a * b, 1);

export function runElementwise(
  outs: readonly Expr[],
  outArrays: unknown[],
  inputs: { data: unknown; dtype: DType; view: View }[],
  shape: readonly number[],
): void {
  const inDT = inputs.map((x) => x.dtype);
  // The shared lowering (ops/lower.ts): dims every input walks alike merge, so contiguous
  // work runs as one flat loop; a 0-d tensor runs as one element of a 1-d loop.
  const low = lowerViews(
    shape,
    inputs.map((x) => x.view),
    1,
  );
  const sh = low.shape;
  const views = inputs.map((x) => x.view);
  const masked = low.ops.map((o) => o.mask !== null);
  const strides = low.ops.map((o) => o.strides);
  const steps: Step[] = low.ops.map((o) => (o.inner === 'u' ? 'u' : o.inner === '0' ? 'z' : 'g'));
  const consts: { value: number; dtype: DType }[] = [];
  const key = `${outs.map((e) => exprKey(e, consts)).join(';')}|${inDT.join(',')}|${sh.length}|${masked.map(Number).join('')}|${steps.join('')}`;
  const constVals = consts.map((c) => castScalar(c.value, c.dtype));
  // A plain copy of a transposed 2-d view (contiguous() of a .T) runs as a tiled transpose.
  if (
    outs.length === 1 &&
    outs[0].kind === 'input' &&
    outs[0].index === 0 &&
    sh.length === 2 &&
    steps[0] === 'g' &&
    !masked[0] &&
    strides[0][0] === 1
  ) {
    transposeInto(
      inputs[0].data as ArrayLike<number>,
      views[0].offset,
      sh[0],
      sh[1],
      strides[0][1],
      outArrays[0] as { [i: number]: number },
    );
    return;
  }
  // Large float32 work (optimizer updates, activations, bias adds) runs on WebAssembly SIMD
  // when the expression has a SIMD form and every input is contiguous along its rows, a row
  // broadcast down them, one value per row or a scalar; the results are bit-identical to the
  // JS kernel's.
  if (sh.length <= 2 && !steps.includes('g') && numelOf(sh) >= WASM_MIN_ELEMENTS) {
    const w = WasmElementwise.get();
    const two = sh.length === 2;
    const ops = inputs.map((x, i) => ({
      data: x.data as Float32Array,
      off: views[i].offset,
      rs: two ? strides[i][0] : 0,
      cs: strides[i][sh.length - 1],
    }));
    if (w && w.run(key, outs, outArrays as Float32Array[], ops, inDT, two ? sh[0] : 1, sh[sh.length - 1], constVals))
      return;
  }
  // Three dims (a per-channel operand over [N, C, H·W]: batch norm) run as one 2-d SIMD loop
  // per outer index, when each slice is big enough to pay for a call.
  if (
    sh.length === 3 &&
    !steps.includes('g') &&
    !masked.includes(true) &&
    sh[1] * sh[2] >= WASM_MIN_SLICE &&
    numelOf(sh) >= WASM_MIN_ELEMENTS &&
    runSlices(key, outs, outArrays as Float32Array[], inputs, views, strides, inDT, sh, constVals)
  )
    return;
  let k = cache.get(key);
  if (!k) {
    k = compile(outs, inDT, sh.length, masked, steps);
    cache.set(key, k);
  }
  k(
    outArrays,
    inputs.map((x) => x.data),
    views.map((v) => v.offset),
    strides,
    low.ops.map((o) => o.mask),
    sh,
    constVals,
  );
}

/** A 3-d loop as one 2-d SIMD call per outer index: inputs offset by their outer stride, outputs as the matching row-major slice. */
function runSlices(
  key: string,
  outs: readonly Expr[],
  outArrays: Float32Array[],
  inputs: { data: unknown }[],
  views: readonly View[],
  strides: readonly number[][],
  inDT: readonly DType[],
  sh: readonly number[],
  consts: number[],
): boolean {
  const w = WasmElementwise.get();
  if (!w) return false;
  const slice = sh[1] * sh[2];
  for (let o = 0; o < sh[0]; o++) {
    const ops = inputs.map((x, i) => ({
      data: x.data as Float32Array,
      off: views[i].offset + o * strides[i][0],
      rs: strides[i][1],
      cs: strides[i][2],
    }));
    const targets = outArrays.map((a) => a.subarray(o * slice, (o + 1) * slice));
    // A refusal (no SIMD form, or memory that cannot grow) hands the whole loop to the JS
    // kernel, which writes every element again.
    if (!w.run(key, outs, targets, ops, inDT, sh[1], sh[2], consts)) return false;
  }
  return true;
}
