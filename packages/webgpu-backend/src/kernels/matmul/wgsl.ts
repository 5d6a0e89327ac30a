import type { DType } from '@surf/core';
import { Emitter } from '../elementwise/elementwise';
import { EpiloguePlan, MatmulEpilogueDesc, MatmulPlan, epiNames } from './plan';
import type { Uniforms } from '../program';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl, storageType, valueType } from '../wgsl';

/**
 * One operand's side of the tile loader. Both staged tiles are k-major (a k-row of A's tile
 * holds tileM values of m, one of B's tileN values of n), so A and B differ only in names,
 * extents and which of the operand's strides walks k.
 */
interface TileSide {
  /** Global buffer ('A' or 'B'; 'A4' when read as vec4) and its batch base variable. */
  name: string;
  base: string;
  /** WGSL lvalue of the staged element at (k-row kk, x), and of the vec4 at (kk, x..x+3) when vecStaged. */
  elem: (kk: string, x: string) => string;
  vec: (kk: string, x: string) => string;
  /** vec4 global loads; vec4 staged tile. */
  vecGlobal: boolean;
  vecStaged: boolean;
  /** The operand is contiguous along k (else along its other dim, x). */
  kContig: boolean;
  /** Extent of x in the tile (tileM for A, tileN for B). */
  xExtent: number;
  /** x's local and global index names, the tile origin along x, and x's bound. */
  x: string;
  gx: string;
  origin: string;
  bound: string;
  /** x is the operand's row (A) or column (B). */
  xIsRow: boolean;
  rowStride: string;
  colStride: string;
  /** Loads need no bounds check (the aligned fast path: the tile never leaves the operand). */
  inside: boolean;
}

/**
 * What loadTile emits: 'both' moves global to workgroup memory through a local; with double
 * buffering 'fetch' only reads global into the thread's registers `reg<it>` (declared by
 * tileRegs) and 'put' later stores those registers into the staged tile.
 */
type LoadPart = 'both' | 'fetch' | 'put';

/** The registers a double-buffered operand fetch fills (one per unit the thread moves). */
function tileRegs(s: TileSide, TK: number, NT: number, reg: string): string[] {
  const units = (s.xExtent * TK) / (s.vecGlobal ? 4 : 1);
  return Array.from(
    { length: Math.ceil(units / NT) },
    (_, it) => `var ${reg}${it}: ${s.vecGlobal ? 'vec4<f32>' : 'f32'};`,
  );
}

/** WGSL moving one operand's tile for step k0 into workgroup memory: ceil(elems/NT) elements (or vec4s) per thread. */
function loadTile(s: TileSide, TK: number, NT: number, K: string, part: LoadPart = 'both', reg = 'v'): string[] {
  const out: string[] = [];
  const along = s.kContig ? TK : s.xExtent; // contiguous extent in the tile
  const vw = s.vecGlobal ? 4 : 1;
  const units = (s.xExtent * TK) / vw;
  const put = (kk: string, x: string, val: string) => `${s.elem(kk, x)} = ${val};`;
  const [ri, ci] = s.xIsRow ? [s.gx, 'gk'] : ['gk', s.gx];
  const addr = `u32(${s.base} + i32(${ri}) * ${s.rowStride} + i32(${ci}) * ${s.colStride})`;
  const cond = `${s.gx} < ${s.bound} && gk < ${K}`;
  for (let it = 0; it < Math.ceil(units / NT); it++) {
    const guard = (it + 1) * NT > units;
    const e = `(lid + ${it * NT}u)`;
    const v = part === 'both' ? 'v' : `${reg}${it}`;
    const lines: string[] = [];
    lines.push(`let e = ${e};`);
    lines.push(`let inner = (e % ${along / vw}u) * ${vw}u; let outer = e / ${along / vw}u;`);
    lines.push(s.kContig ? `let ${s.x} = outer; let kk = inner;` : `let ${s.x} = inner; let kk = outer;`);
    if (part !== 'put') {
      lines.push(`let ${s.gx} = ${s.origin} + ${s.x}; let gk = k0 + kk;`);
      const load = `${s.name}${s.vecGlobal ? '4' : ''}[${addr}${s.vecGlobal ? ' / 4u' : ''}]`;
      if (s.inside) lines.push(part === 'both' ? `let v = ${load};` : `${v} = ${load};`);
      else {
        if (part === 'both') lines.push(`var v = ${s.vecGlobal ? 'vec4<f32>(0.0)' : '0.0'};`);
        else lines.push(`${v} = ${s.vecGlobal ? 'vec4<f32>(0.0)' : '0.0'};`);
        lines.push(`if (${cond}) { ${v} = ${load}; }`);
      }
    }
    if (part !== 'fetch') {
      if (!s.vecGlobal) lines.push(put('kk', s.x, v));
      else if (!s.kContig && s.vecStaged) lines.push(`${s.vec('kk', s.x)} = ${v};`);
      else
        for (let q = 0; q < 4; q++)
          lines.push(s.kContig ? put(`(kk + ${q}u)`, s.x, `${v}[${q}]`) : put('kk', `(${s.x} + ${q}u)`, `${v}[${q}]`));
    }
    out.push(
      guard
        ? `if (${e} < ${units}u) {\n      ${lines.join('\n      ')}\n    }`
        : `{\n      ${lines.join('\n      ')}\n    }`,
    );
  }
  return out;
}

/** The matmul shader for plan `p`, reading its parameters through `u` (see MatmulProgram.uniforms). */
export function matmulWgsl(p: MatmulPlan, u: Uniforms): string {
  const { TM, TN, TK, RM, RN, TX, NT, br, vecA, vecB, TMP, inter, after, cVec, epi, eIdx, rows } = p;
  const L: string[] = [];
  // The aligned fast path compiles sizes and strides in (the driver's compiler then folds the
  // address arithmetic) and drops every bounds check; else they are parameters.
  const F = p.fixed;
  const M = F ? `${p.m}u` : u.ref('m'),
    N = F ? `${p.n}u` : u.ref('n'),
    K = F ? `${p.k}u` : u.ref('k');
  const stride = (name: string, v: number) => (F ? `${v}i` : u.ref(name));
  const tilesN = F ? `${p.n / TN}u` : u.ref('tilesN'),
    tilesM = F ? `${p.m / TM}u` : u.ref('tilesM');
  // Split k: workgroups past the batch's tiles take later k-chunks and store partial sums.
  const S = p.splits > 1;
  const kChunk = S ? (F ? `${p.chunkSteps * TK}u` : u.ref('kChunk')) : '';
  // Guards a statement by a bound (kept only in the general kernel).
  const inb = (cond: string, body: string) => (F ? body : `if (${cond}) { ${body} }`);
  // Staged-tile addressing. Flat: As[kk][row] with pitch TMP, Bs[kk][col]. Rows: As[ty][kk][i]
  // (row = ty*RM + i) and Bs[tx][kk][q] (column group q of thread tx), so the inner loop reads
  // through one pointer per thread at constant indices.
  const flat = (name: string, pitch: number, vec: boolean) => ({
    elem: (kk: string, x: string) =>
      vec
        ? `${name}4[(${kk} * ${pitch}u + ${x}) / 4u][(${kk} * ${pitch}u + ${x}) % 4u]`
        : `${name}[${kk} * ${pitch}u + ${x}]`,
    vec: (kk: string, x: string) => `${name}4[(${kk} * ${pitch}u + ${x}) / 4u]`,
  });
  // Thread and column group owning tile column c (the same mapping as colOf below).
  const bOwner = (c: string): [string, string] =>
    inter ? [`(${c} / 4u) % ${TX}u`, `(${c} / 4u) / ${TX}u`] : [`${c} / ${RN}u`, `(${c} % ${RN}u) / 4u`];
  // Slot of A's k-row kk in a staged row (MatmulConfig.swizzleA): a WGSL expression, or a
  // number for the unrolled inner loop's constant reads.
  const aK = (kk: string) => (p.swizzleA ? `(${kk} ^ ((${kk} >> 2u) & 3u))` : kk);
  const aKc = (kk: number) => (p.swizzleA ? kk ^ ((kk >> 2) & 3) : kk);
  // Rows of buffer `buf` (double buffering) start at buf*TY (A) and buf*TX (B).
  const aSlots = (buf: number) =>
    rows
      ? {
          elem: (kk: string, x: string) =>
            `As4[${buf ? `${buf * p.TY}u + ` : ''}${x} / ${RM}u][${aK(kk)} * ${RM / 4}u + (${x} % ${RM}u) / 4u][${x} % 4u]`,
          vec: (kk: string, x: string) =>
            `As4[${buf ? `${buf * p.TY}u + ` : ''}${x} / ${RM}u][${aK(kk)} * ${RM / 4}u + (${x} % ${RM}u) / 4u]`,
        }
      : flat('As', TMP, vecA);
  const bSlots = (buf: number) =>
    rows
      ? {
          elem: (kk: string, x: string) => {
            const [t, q] = bOwner(x);
            return `Bs4[${buf ? `${buf * TX}u + ` : ''}${t}][${kk} * ${RN / 4}u + ${q}][${x} % 4u]`;
          },
          vec: (kk: string, x: string) => {
            const [t, q] = bOwner(x);
            return `Bs4[${buf ? `${buf * TX}u + ` : ''}${t}][${kk} * ${RN / 4}u + ${q}]`;
          },
        }
      : flat('Bs', TN, vecB);
  const sideA = (buf: number): TileSide => ({
    name: 'A',
    base: 'aBase',
    ...aSlots(buf),
    vecGlobal: p.aVec,
    vecStaged: vecA,
    kContig: p.aKMajor,
    xExtent: TM,
    x: 'row',
    gx: 'gr',
    origin: 'tileRow',
    bound: M,
    xIsRow: true,
    rowStride: stride('aRowStride', p.aStrides[0]),
    colStride: stride('aColStride', p.aStrides[1]),
    inside: F,
  });
  const sideB = (buf: number): TileSide => ({
    name: 'B',
    base: 'bBase',
    ...bSlots(buf),
    vecGlobal: p.bVec,
    vecStaged: vecB,
    kContig: !p.bNMajor,
    xExtent: TN,
    x: 'col',
    gx: 'gc',
    origin: 'tileCol',
    bound: N,
    xIsRow: false,
    rowStride: stride('bRowStride', p.bStrides[0]),
    colStride: stride('bColStride', p.bStrides[1]),
    inside: F,
  });
  const loadA = loadTile(sideA(0), TK, NT, K);
  const loadB = loadTile(sideB(0), TK, NT, K);
  // Register tile: acc{i}_{q} is row i, column group q (4 columns, vec4) or column q (scalar).
  const cols = vecB ? RN / 4 : RN;
  const accT = vecB ? 'vec4<f32>' : 'f32';
  // Column of group q (or scalar column q) of this thread, relative to the tile.
  const colOf = (q: number) =>
    inter ? `${q * TX * 4}u + tx * 4u` : vecB ? `tx * ${RN}u + ${q * 4}u` : `tx * ${RN}u + ${q}u`;
  const bIdx = (q: number) => (inter ? `${q * TX}u + tx` : `tx * ${RN / 4}u + ${q}u`);
  const decl: string[] = [];
  for (let i = 0; i < RM; i++) for (let q = 0; q < cols; q++) decl.push(`var acc${i}_${q} = ${accT}(0.0);`);
  const unroll = p.unroll;
  // The register-tile multiply-adds of one k-step, reading staged buffer `buf` (rows only; else 0).
  const innerOf = (buf: number): string[] => {
    const inner: string[] = [];
    const pa = `pa${buf || ''}`,
      pb = `pb${buf || ''}`;
    for (let kk = 0; kk < (unroll ? TK : 1); kk++) {
      // Unrolled: constant offsets per step; rolled: one loop body over kk.
      const aRow = unroll ? `${kk * TMP}u` : `kk * ${TMP}u`;
      const aRow4 = unroll ? `${(kk * TMP) / 4}u` : `kk * ${TMP / 4}u`;
      const bRow = unroll ? `${(kk * TN) / 4}u` : `kk * ${TN / 4}u`;
      const bRowS = unroll ? `${kk * TN}u` : `kk * ${TN}u`;
      inner.push(unroll ? '{' : `for (var kk = 0u; kk < ${TK}u; kk++) {`);
      const aR = unroll
        ? (g: number) => `${aKc(kk) * (RM / 4) + g}`
        : (g: number) => `${aK('kk')} * ${RM / 4}u + ${g}u`;
      const bR = unroll ? (q: number) => `${kk * (RN / 4) + q}` : (q: number) => `kk * ${RN / 4}u + ${q}u`;
      if (rows) {
        for (let g = 0; g < RM / 4; g++) inner.push(`let a4_${g} = (*${pa})[${aR(g)}];`);
        for (let i = 0; i < RM; i++) inner.push(`let a${i} = a4_${i >> 2}[${i & 3}];`);
      } else if (vecA) {
        for (let g = 0; g < RM / 4; g++) inner.push(`let a4_${g} = As4[${aRow4} + ty * ${RM / 4}u + ${g}u];`);
        for (let i = 0; i < RM; i++) inner.push(`let a${i} = a4_${i >> 2}[${i & 3}];`);
      } else {
        for (let i = 0; i < RM; i++) inner.push(`let a${i} = As[${aRow} + ty * ${RM}u + ${i}u];`);
      }
      for (let q = 0; q < cols; q++) {
        inner.push(
          rows
            ? `let b${q} = (*${pb})[${bR(q)}];`
            : vecB
              ? `let b${q} = Bs4[${bRow} + ${bIdx(q)}];`
              : `let b${q} = Bs[${bRowS} + ${colOf(q)}];`,
        );
      }
      for (let i = 0; i < RM; i++)
        for (let q = 0; q < cols; q++)
          inner.push(`acc${i}_${q} = fma(${vecB ? `vec4<f32>(a${i})` : `a${i}`}, b${q}, acc${i}_${q});`);
      inner.push('}');
    }
    return inner;
  };
  const inner = innerOf(0);
  // Store, through the epilogue when there is one.
  const fin = (v: string, r: string, c: string) => (epi && !after ? `epi_(${v}, ${r}, ${c})` : v);
  const store: string[] = [];
  for (let i = 0; i < RM; i++) {
    store.push(`{ let r = tileRow + ty * ${RM}u + ${i}u;`);
    store.push(F ? '  {' : `  if (r < ${M}) {`);
    for (let q = 0; q < cols; q++) {
      const c0 = `tileCol + ${colOf(q)}`;
      if (vecB) {
        if (cVec) {
          const v =
            epi && !after
              ? `vec4<f32>(${[0, 1, 2, 3].map((j) => fin(`acc${i}_${q}[${j}]`, 'r', `c0 + ${j}u`)).join(', ')})`
              : `acc${i}_${q}`;
          store.push(`    { let c0 = ${c0}; ${inb(`c0 < ${N}`, `C4[(cBase + r * ${N} + c0) / 4u] = ${v};`)} }`);
        } else {
          store.push(`    { let c0 = ${c0};`);
          for (let j = 0; j < 4; j++)
            store.push(
              `      ${inb(`c0 + ${j}u < ${N}`, `C[cBase + r * ${N} + c0 + ${j}u] = ${fin(`acc${i}_${q}[${j}]`, 'r', `c0 + ${j}u`)};`)}`,
            );
          store.push(`    }`);
        }
      } else {
        store.push(
          `    { let c = ${c0}; ${inb(`c < ${N}`, `C[cBase + r * ${N} + c] = ${fin(`acc${i}_${q}`, 'r', 'c')};`)} }`,
        );
      }
    }
    store.push(`  } }`);
  }
  if (after) {
    // Re-read this thread's own stores (same invocation: ordered) and apply the epilogue.
    const g = vecB ? 4 : 1;
    const col = inter ? `q * ${TX * 4}u + tx * 4u` : `tx * ${RN}u + q * ${g}u`;
    store.push(`for (var i = 0u; i < ${RM}u; i++) {
    let r = tileRow + ty * ${RM}u + i;
    ${F ? '' : `if (r >= ${M}) { break; }`}
    for (var q = 0u; q < ${RN / g}u; q++) {
      let c0 = tileCol + ${col};
      ${
        cVec
          ? inb(
              `c0 < ${N}`,
              `let ci = (cBase + r * ${N} + c0) / 4u; let v = C4[ci]; C4[ci] = vec4<f32>(epi_(v.x, r, c0), epi_(v.y, r, c0 + 1u), epi_(v.z, r, c0 + 2u), epi_(v.w, r, c0 + 3u));`,
            )
          : Array.from({ length: g }, (_, j) =>
              inb(`c0 + ${j}u < ${N}`, `let ci = cBase + r * ${N} + c0 + ${j}u; C[ci] = epi_(C[ci], r, c0 + ${j}u);`),
            ).join('\n      ')
      }
    }
  }`);
  }
  // Batch offsets from the collapsed batch index (A, B and each epilogue view).
  const bat = batchBases(u, br, eIdx, [
    ['aBase', 'aOffset', 'aBatchStrides'],
    ['bBase', 'bOffset', 'bBatchStrides'],
  ]);
  /**
   * Double buffering: step t computes from buffer t%2 while the next step's tiles, fetched
   * into registers before the compute, are stored into the other buffer after it; one barrier
   * per step. The loop does two steps per iteration so each names its buffer's pointers at
   * compile time (a runtime buffer index would put index arithmetic back in the inner loop).
   */
  const doubleBuffered = (): string => {
    const fetch = [...loadTile(sideA(0), TK, NT, K, 'fetch', 'ra'), ...loadTile(sideB(0), TK, NT, K, 'fetch', 'rb')];
    const put = (buf: number) => [
      ...loadTile(sideA(buf), TK, NT, K, 'put', 'ra'),
      ...loadTile(sideB(buf), TK, NT, K, 'put', 'rb'),
    ];
    const regs = [...tileRegs(sideA(0), TK, NT, 'ra'), ...tileRegs(sideB(0), TK, NT, 'rb')];
    const j = (x: string[], ind: string) => x.join(`\n${ind}`);
    // Fixed shape with an even step count: the first half's fetch always happens, so its
    // checks go (the matmul lab's loop).
    const even = F && !S && (p.k / TK) % 2 === 0;
    const if1 = (body: string) => (even ? `{\n      ${body}\n    }` : `if (more1) {\n      ${body}\n    }`);
    return `let pa1 = &As4[${p.TY}u + ty];
  let pb1 = &Bs4[${TX}u + tx];
  ${j(regs, '  ')}
  let nk = ${S ? `(ke - kb + ${TK - 1}u) / ${TK}u` : F ? `${p.k / TK}u` : `(${K} + ${TK - 1}u) / ${TK}u`};
  var k0 = ${S ? 'kb' : '0u'};
  ${j(fetch, '  ')}
  ${j(put(0), '  ')}
  workgroupBarrier();
  for (var t = 0u; t < nk; t += 2u) {
    ${even ? '' : 'let more1 = t + 1u < nk;'}
    ${if1(`k0 = ${S ? 'kb + ' : ''}(t + 1u) * ${TK}u;\n      ${j(fetch, '      ')}`)}
    ${j(innerOf(0), '    ')}
    ${if1(j(put(1), '      '))}
    workgroupBarrier();
    ${even ? '' : 'if (!more1) { break; }'}
    let more2 = t + 2u < nk;
    if (more2) {
      k0 = ${S ? 'kb + ' : ''}(t + 2u) * ${TK}u;
      ${j(fetch, '      ')}
    }
    ${j(innerOf(1), '    ')}
    if (more2) {
      ${j(put(0), '      ')}
    }
    workgroupBarrier();
  }`;
  };
  L.push(paramsDecl(u.words));
  L.push(`@group(0) @binding(1) var<storage, read> ${p.aVec ? 'A4: array<vec4<f32>>' : 'A: array<f32>'};`);
  L.push(`@group(0) @binding(2) var<storage, read> ${p.bVec ? 'B4: array<vec4<f32>>' : 'B: array<f32>'};`);
  L.push(...epilogueBindings(p, 3));
  L.push(
    `@group(0) @binding(${3 + p.eBufs.length}) var<storage, read_write> ${cVec ? 'C4: array<vec4<f32>>' : 'C: array<f32>'};`,
  );
  if (rows) {
    const nb = p.dbuf ? 2 : 1;
    L.push(`var<workgroup> As4: array<array<vec4<f32>, ${p.aRowLen}>, ${nb * p.TY}>;`);
    L.push(`var<workgroup> Bs4: array<array<vec4<f32>, ${p.bRowLen}>, ${nb * TX}>;`);
  } else {
    L.push(
      vecA ? `var<workgroup> As4: array<vec4<f32>, ${(TMP * TK) / 4}>;` : `var<workgroup> As: array<f32, ${TMP * TK}>;`,
    );
    L.push(
      vecB ? `var<workgroup> Bs4: array<vec4<f32>, ${(TK * TN) / 4}>;` : `var<workgroup> Bs: array<f32, ${TK * TN}>;`,
    );
  }
  if (epi) L.push(...epilogueFn(epi, p, u));
  L.push(`@compute @workgroup_size(${NT})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  if (wg >= ${u.ref('total')}) { return; }
  let tn = wg % ${tilesN};
  let rest = wg / ${tilesN};
  let tm = rest % ${tilesM};
  ${
    S
      ? `let sb = rest / ${tilesM};
  let split = sb / ${u.ref('batchN')};
  let bt = sb % ${u.ref('batchN')};
  let kb = split * ${kChunk};
  let ke = min(${K}, kb + ${kChunk});`
      : `let bt = rest / ${tilesM};`
  }
  let tileRow = tm * ${TM}u;
  let tileCol = tn * ${TN}u;
  ${threadXY(p)}
  ${bat.join('\n  ')}
  let cBase = ${S ? `(split * ${u.ref('batchN')} + bt)` : 'bt'} * ${M} * ${N};
  ${decl.join('\n  ')}${rows ? '\n  let pa = &As4[ty];\n  let pb = &Bs4[tx];' : ''}
  ${
    p.dbuf
      ? doubleBuffered()
      : `for (var k0 = ${S ? 'kb' : '0u'}; k0 < ${S ? 'ke' : K}; k0 += ${TK}u) {
    ${loadA.join('\n    ')}
    ${loadB.join('\n    ')}
    workgroupBarrier();
    ${inner.join('\n    ')}
    workgroupBarrier();
  }`
  }
  ${store.join('\n  ')}
}`);
  return L.join('\n');
}

/**
 * This thread's column and row of register tiles (`tx`, `ty`). Linear by default; with
 * `warpCols` a warp is a block of 32/warpCols rows by warpCols columns, and the tile's warps
 * are numbered row-major (MatmulConfig.warpCols).
 */
function threadXY(p: MatmulPlan): string {
  const W = p.warpCols;
  if (!W) return `let tx = lid % ${p.TX}u;\n  let ty = lid / ${p.TX}u;`;
  const across = p.TX / W;
  return `let lane = lid % 32u; let warp = lid / 32u;
  let tx = (warp % ${across}u) * ${W}u + lane % ${W}u;
  let ty = (warp / ${across}u) * ${32 / W}u + lane / ${W}u;`;
}

/** The storage bindings of an epilogue's distinct buffers, from binding `first` on. */
export function epilogueBindings(p: Pick<EpiloguePlan, 'eDT'>, first: number): string[] {
  return p.eDT.map((dt, q) => `@group(0) @binding(${first + q}) var<storage, read> E${q}: array<${storageType(dt)}>;`);
}

/**
 * The epilogue as a WGSL function `epi_(product, row, col)`: the elementwise emitter over
 * reads of the strided views at this thread's batch bases `eb<j>` (private; batchBases sets
 * them in main). The parameters are read through `u` by epiNames and 'consts'.
 */
export function epilogueFn(epi: MatmulEpilogueDesc, p: Pick<EpiloguePlan, 'eIdx' | 'eBind'>, u: Uniforms): string[] {
  const inDT: DType[] = ['float32', ...epi.inputs.map((x) => x.dtype)];
  const vals = inDT.map((_, i) => `v${i}`);
  const reads: string[] = [];
  for (const j of p.eIdx) {
    const x = epi.inputs[j];
    const idx = `u32(eb${j} + i32(r) * ${u.ref(epiNames(j).RowStride)} + i32(c) * ${u.ref(epiNames(j).ColStride)})`;
    const ld = x.dtype === 'bool' ? `(E${p.eBind[j]}[${idx}] != 0u)` : `E${p.eBind[j]}[${idx}]`;
    reads.push(`let v${j + 1}: ${valueType(x.dtype)} = ${ld};`);
  }
  const em = new Emitter(inDT, vals, u.slot('consts').at);
  const res = em.emit(epi.expr).v;
  const L = [FLOAT_HELPERS, em.helpers()]; // helpers of the op table's ops the epilogue uses
  for (const j of p.eIdx) L.push(`var<private> eb${j}: i32;`);
  L.push(`fn epi_(v0: f32, r: u32, c: u32) -> f32 {\n  ${[...reads, ...em.lines].join('\n  ')}\n  return ${res};\n}`);
  return L;
}

/**
 * Base offsets of batch `bt` (a u32 in scope): for each [variable, offset word, batch-strides
 * words] a `var`, and each epilogue view's private `eb<j>`, walking the collapsed batch digits.
 */
export function batchBases(
  u: Uniforms,
  br: number,
  eIdx: readonly number[],
  ops: readonly [string, string, string][],
): string[] {
  const bat: string[] = [ops.map(([v, off]) => `var ${v} = ${u.ref(off)};`).join(' ')];
  for (const j of eIdx) bat.push(`eb${j} = ${u.ref(epiNames(j).Offset)};`);
  if (br) {
    bat.push(`var bq = bt;`);
    for (let d = br - 1; d >= 0; d--) {
      const dig = d > 0 ? `bq % ${u.ref('batchShape', d)}` : 'bq';
      const own = ops.map(([v, , st]) => ` ${v} += dg * ${u.ref(st, d)};`).join('');
      const eb = eIdx.map((j) => ` eb${j} += dg * ${u.ref(epiNames(j).BatchStrides, d)};`).join('');
      bat.push(`{ let dg = i32(${dig});${own}${eb}${d > 0 ? ` bq = bq / ${u.ref('batchShape', d)};` : ''} }`);
    }
  }
  return bat;
}
