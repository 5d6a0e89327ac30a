import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Params, batchBase, batchDigits, commonParams, launch, operandParams } from './params';
import { LINEAR_WG, MAIN_ARGS, paramsDecl } from '../wgsl';
import type { AttnDims, AttnOperand } from './types';

/**
 * Register-tiled attention for head dims E = Ev = 32 or 64 without a mask (the row-per-thread
 * kernels in attention.ts take every other case). Three kernels of 128 threads; each owns R
 * rows (queries for the forward and dQ, keys for dK/dV) and streams T rows of the other side
 * through workgroup memory per step. A thread holds a 4 x ts block of the R x T score tile
 * (owned rows og + OG·i, streamed rows sg + SG·k, OG = R/4 row groups of SG = 128/OG threads)
 * and a 4 x cv-vec4 block of the R x 64 accumulator, so every score has 4·ts independent FMA
 * chains and each 16-byte workgroup read feeds 4-8 FMAs. Probabilities go from the score
 * layout to the accumulator layout through one small workgroup tile (P, or dS), stored as
 * vec4s over a thread's 4 owned rows. Tiles are swizzled (vec4 column e4 of row r lives at
 * e4 ^ (r & 7)) so that the 8 rows a warp quarter reads fall on distinct banks without padding.
 *
 * Scores are kept in base 2 (q·k·scale·log2 e, exp2), folded into the operand staged first.
 * The forward's running row max is reduced over a row group's SG lanes by subgroup shuffles
 * (the first `shuffle` lanes, a power of two <= the adapter's smallest subgroup) and through
 * workgroup memory for the rest, so an adapter without subgroups reduces entirely through it.
 * Causal: the forward and dQ issue the last (longest) query blocks first, dK/dV starts at the
 * diagonal; fully masked tiles are skipped, the mask test runs on every score (it is ~1% of
 * the FMAs). The next streamed tile is loaded into registers during the current step, and
 * loops run `unroll` steps per iteration: fully unrolled bodies (3-5 k instructions) were
 * 20-35% slower on a datacenter GPU.
 *
 * Each kernel also has an aligned variant (`fixed`): when its tiles divide L and S and the
 * operands are contiguous aligned rows, L and S are compiled in and every bounds test but the
 * causal one goes, with vec4 bindings; as with the matmul's fixed path, the predicates and
 * addresses the general kernel keeps live cost it registers (15-20% on a datacenter GPU).
 */

const WG = 128;
/** Head dims the tiles take (E = Ev). */
const HEAD_DIMS = [32, 64];
const LOG2E = 1.4426950408889634;

/** Owned rows per workgroup (32 or 64) and streamed rows per step. */
export interface AttnTile {
  R: number;
  T: number;
}

export interface AttnTiledConfig {
  fwd: AttnTile;
  dq: AttnTile;
  dkv: AttnTile;
  /** Lanes of the forward's row-max reduction done by subgroup shuffles (1: all in workgroup memory). */
  shuffle: number;
  /** Head-dim and streamed-row steps per loop iteration, a power of two (>= 16 / T: fully unrolled). */
  unroll: number;
  /**
   * Compile L and S in and drop the bounds checks when the tiles divide the problem and every
   * operand is contiguous rows of E floats at 16-byte aligned offsets (vec4 loads and stores).
   */
  fixed: boolean;
}

/** A kernel's layout: tile, row groups, lanes, score block, accumulator vec4 columns, head dim (and its vec4 count hv). */
interface Geo {
  R: number;
  T: number;
  OG: number;
  SG: number;
  ts: number;
  cv: number;
  hd: number;
  hv: number;
}

function geo(t: AttnTile, hd: number): Geo {
  const OG = t.R / 4,
    SG = WG / OG,
    hv = hd / 4;
  return { R: t.R, T: t.T, OG, SG, ts: t.T / SG, cv: hv / SG, hd, hv };
}

function tileOk(t: AttnTile, hd: number): boolean {
  const g = geo(t, hd);
  return (
    (t.R === 32 || t.R === 64) &&
    Number.isInteger(g.ts) &&
    g.ts >= 1 &&
    g.ts <= 4 &&
    Number.isInteger(g.cv) &&
    g.cv >= 1 &&
    (t.T * g.hv) % WG === 0
  );
}

/**
 * The tile a kernel runs at head dim `hd`: the configured one, or (head dim 32, whose 8 vec4
 * columns need 8 lanes per row group) the same streamed rows under 64 owned rows.
 */
function tileFor(t: AttnTile, hd: number): AttnTile {
  return tileOk(t, hd) ? t : { R: 64, T: t.T };
}

/** Workgroup bytes of each kernel (what decides which tiles an adapter can take). */
export function tiledBytes(kind: 'fwd' | 'dq' | 'dkv', t: AttnTile, shuffle: number, hd = 64): number {
  const g = geo(t, hd);
  const v4 = 16,
    hv = g.hv;
  if (kind === 'fwd') return v4 * (t.R * hv + 2 * t.T * hv + t.T * g.OG + (shuffle < g.SG ? WG : 0));
  if (kind === 'dq') return v4 * (2 * t.R * hv + 2 * t.T * hv + (g.OG > hv ? t.T * g.OG : 0)); // dS reuses V's tile when it fits
  return v4 * (2 * t.R * hv + 2 * t.T * hv + 2 * t.T * g.OG);
}

/** Whether the tiled kernels take this problem under `cfg` on an adapter with `maxBytes` of workgroup memory. */
export function tiledFits(dims: AttnDims, masked: boolean, cfg: AttnTiledConfig, maxBytes: number): boolean {
  if (masked || !HEAD_DIMS.includes(dims.E) || dims.Ev !== dims.E || dims.L < 1 || dims.S < 1) return false;
  // Loops step by min(unroll, extent), which must divide the head dim's vec4s and T.
  if (!(cfg.unroll >= 1 && Number.isInteger(Math.log2(cfg.unroll)))) return false;
  return (['fwd', 'dq', 'dkv'] as const).every((k) => {
    const t = tileFor(cfg[k], dims.E);
    return tileOk(t, dims.E) && tiledBytes(k, t, cfg.shuffle, dims.E) <= maxBytes;
  });
}

/** The largest tiles that fit `maxBytes` (48 KiB on Dawn with a discrete GPU; 32 KiB: SwiftShader), or null. */
export function defaultTiledConfig(maxBytes: number, subgroupMin: number): AttnTiledConfig | null {
  const shuffle = Math.min(32, Math.max(1, subgroupMin));
  const pick = (kind: 'fwd' | 'dq' | 'dkv', order: AttnTile[]) =>
    order.find((t) => tiledBytes(kind, t, shuffle) <= maxBytes);
  const fwd = pick('fwd', [
    { R: 64, T: 32 },
    { R: 64, T: 16 },
  ]);
  const dq = pick('dq', [
    { R: 64, T: 32 },
    { R: 64, T: 16 },
    { R: 32, T: 32 },
    { R: 32, T: 16 },
  ]);
  const dkv = pick('dkv', [
    { R: 32, T: 32 },
    { R: 64, T: 16 },
    { R: 32, T: 16 },
  ]);
  return fwd && dq && dkv ? { fwd, dq, dkv, shuffle, unroll: 8, fixed: true } : null;
}

/** The sizes and the operands' offsets and strides (every operand with a column stride). */
function operandsOf(dims: AttnDims, scale: number, ops: Record<string, AttnOperand>): Params {
  const p = commonParams(dims, scale);
  for (const [name, x] of Object.entries(ops)) operandParams(p, name, x, dims.batch.length, true);
  return p;
}

/** The sizes compiled into an aligned kernel, or null for the general one. */
type Fixed = { L: number; S: number } | null;

/** Contiguous rows of `hd` floats at a 16-byte aligned offset and batch strides: readable as vec4 rows. */
function aligned(x: AttnOperand, nb: number, hd: number): boolean {
  return (
    x.strides[nb + 1] === 1 &&
    x.strides[nb] === hd &&
    x.offset % 4 === 0 &&
    x.strides.slice(0, nb).every((st) => st % 4 === 0)
  );
}

/** The aligned path when `cfg.fixed`, the owned and streamed extents divide the tile and every operand is aligned. */
function fixedOf(cfg: AttnTiledConfig, t: AttnTile, dims: AttnDims, owned: 'L' | 'S', ops: AttnOperand[]): Fixed {
  const streamed = owned === 'L' ? dims.S : dims.L;
  const ok =
    cfg.fixed &&
    dims[owned] % t.R === 0 &&
    streamed % t.T === 0 &&
    ops.every((x) => aligned(x, dims.batch.length, dims.E));
  return ok ? { L: dims.L, S: dims.S } : null;
}

/** WGSL: the kernel's storage buffers, read-only ones first, from binding 1 (0 is the parameters); `vec` ones as vec4 arrays. */
function storages(reads: readonly string[], writes: readonly string[], vec: readonly string[] = []): string {
  return [...reads.map((n) => ['read', n]), ...writes.map((n) => ['read_write', n])]
    .map(
      ([a, n], i) =>
        `@group(0) @binding(${i + 1}) var<storage, ${a}> ${n}: array<${vec.includes(n) ? 'vec4<f32>' : 'f32'}>;`,
    )
    .join('\n');
}

/** WGSL: the sizes, and which batch entry `b` a workgroup takes (blocks of R rows along `rows`, L or S). */
function blockStart(p: Params, g: Geo, rows: 'L' | 'S', fx: Fixed): string {
  return `let L = ${fx ? `${fx.L}u` : p.u('L')};
  let S = ${fx ? `${fx.S}u` : p.u('S')};
  let nblk = (${rows} + ${g.R - 1}u) / ${g.R}u;
  let NB = ${p.u('B')};
  if (wg >= NB * nblk) { return; }
  let b = wg % NB;`;
}

/**
 * WGSL: the walk over key tiles of the kernels that own query rows (forward, dQ), up to the
 * diagonal's tile when causal: the next tile staged, then this one's scores s = Q·Kᵀ.
 */
function keyLoop(g: Geo, st: { decl: string; first: string; step: string }, causal: boolean, unroll: number): string {
  return `var kEnd = S;
  ${causal ? `kEnd = min(S, i0 + ${g.R}u);` : ''}
  ${st.decl}
  ${st.first}
  for (var j0 = 0u; j0 < kEnd; j0 += ${g.T}u) {
    workgroupBarrier();
    ${st.step}
    workgroupBarrier();
    ${scores('s', 'Qs', 'Ks', g, unroll)}`;
}

/** WGSL: batch digits of `b` and each operand's batch base `<name>B` (aligned path: also in vec4s, `<name>V`). */
function bases(p: Params, nb: number, names: string[], fx: Fixed): string {
  return [
    batchDigits(p, nb, 'b'),
    ...names.map((n) => batchBase(p, n, nb) + (fx ? ` let ${n}V = u32(${n}B / 4);` : '')),
  ].join('\n  ');
}

/**
 * WGSL: loads rows r0.. of a strided operand (zeros past `limit`) into vec4 registers reg0..
 * (this thread's share of the tile); on the aligned path one unchecked vec4 load each.
 */
function stageLoad(
  p: Params,
  hv: number,
  reg: string,
  rows: number,
  buf: string,
  name: string,
  r0: string,
  limit: string,
  fx: Fixed,
): string {
  const out: string[] = [];
  for (let n = 0; n < (rows * hv) / WG; n++) {
    if (fx) {
      out.push(`${reg}${n} = ${buf}[${name}V + (${r0} + ${(n * WG) / hv}u + lid / ${hv}u) * ${hv}u + lid % ${hv}u];`);
      continue;
    }
    out.push(`{
    let f = lid + ${n * WG}u; let row = ${r0} + f / ${hv}u;
    ${reg}${n} = vec4<f32>(0.0);
    if (row < ${limit}) {
      let cs = ${p.i(`${name}.cs`)};
      let a = ${name}B + i32(row) * ${p.i(`${name}.rs`)} + i32((f % ${hv}u) * 4u) * cs;
      ${reg}${n} = vec4<f32>(${buf}[u32(a)], ${buf}[u32(a + cs)], ${buf}[u32(a + 2 * cs)], ${buf}[u32(a + 3 * cs)]);
    }
  }`);
  }
  return out.join('\n  ');
}

const regDecl = (hv: number, reg: string, rows: number) =>
  range((rows * hv) / WG)
    .map((n) => `var ${reg}${n}: vec4<f32>;`)
    .join(' ');

/** WGSL: stores registers reg0.. into a swizzled vec4 tile (vec4 column e4 of row r at e4 ^ (r & 7)), times `mul`. */
function stageStore(hv: number, tile: string, reg: string, rows: number, mul = ''): string {
  return range((rows * hv) / WG)
    .map(
      (n) =>
        `{ let f = lid + ${n * WG}u; let rr = f / ${hv}u; ${tile}[rr * ${hv}u + ((f % ${hv}u) ^ (rr & 7u))] = ${reg}${n}${mul}; }`,
    )
    .join('\n  ');
}

/** WGSL: a whole tile staged at once (declares its registers in a block of its own). */
function stage(
  p: Params,
  hv: number,
  tile: string,
  rows: number,
  buf: string,
  name: string,
  r0: string,
  limit: string,
  fx: Fixed,
  mul = '',
): string {
  return `{ ${regDecl(hv, 'x', rows)}\n  ${stageLoad(p, hv, 'x', rows, buf, name, r0, limit, fx)}\n  ${stageStore(hv, tile, 'x', rows, mul)} }`;
}

/**
 * WGSL: the streamed tile's staging (loop cursor `r0`, first rows at `start`): registers
 * loaded during the previous step are stored, then the next step's rows are loaded, so the
 * global loads are in flight during this step's FMAs.
 */
function streamStage(
  p: Params,
  hv: number,
  ops: [string, string, string, string][],
  T: number,
  r0: string,
  limit: string,
  start: string,
  fx: Fixed,
): { decl: string; first: string; step: string } {
  // The aligned path has no bounds check: the load after the last tile is skipped instead.
  const next = ops
    .map(([, buf, name, reg]) => stageLoad(p, hv, reg, T, buf, name, `(${r0} + ${T}u)`, limit, fx))
    .join('\n    ');
  return {
    decl: ops.map(([, , , reg]) => regDecl(hv, reg, T)).join(' '),
    first: ops.map(([, buf, name, reg]) => stageLoad(p, hv, reg, T, buf, name, start, limit, fx)).join('\n  '),
    step:
      ops.map(([tile, , , reg]) => stageStore(hv, tile, reg, T)).join('\n    ') +
      '\n    ' +
      (fx ? `if (${r0} + ${T}u < ${limit}) {\n    ${next}\n    }` : next),
  };
}

const I4 = [0, 1, 2, 3];
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const C = 'xyzw';

/** WGSL: s_i_k += A[owned row i] · B[streamed row k] over the head dim (4·ts FMA chains), `un` steps per iteration. */
function scores(s: string, A: string, Bt: string, g: Geo, un: number): string {
  const u = Math.min(un, g.hv);
  const lines = [I4.flatMap((i) => range(g.ts).map((k) => `var ${s}${i}_${k} = 0.0;`)).join(' ')];
  const body: string[] = [];
  for (let e = 0; e < u; e++) {
    const ee = u === g.hv ? `${e}u` : `(e0 + ${e}u)`;
    body.push(
      '{ ' +
        I4.map((i) => `let a${i} = ${A}[o${i} + (${ee} ^ oKey)];`).join(' ') +
        ' ' +
        range(g.ts)
          .map((k) => `let b${k} = ${Bt}[t${k} + (${ee} ^ sKey)];`)
          .join(' '),
    );
    for (const i of I4)
      for (let k = 0; k < g.ts; k++) {
        body.push(
          `  ${s}${i}_${k} = fma(a${i}.w, b${k}.w, fma(a${i}.z, b${k}.z, fma(a${i}.y, b${k}.y, fma(a${i}.x, b${k}.x, ${s}${i}_${k}))));`,
        );
      }
    body.push('}');
  }
  if (u === g.hv) lines.push(...body);
  else lines.push(`for (var e0 = 0u; e0 < ${g.hv}u; e0 += ${u}u) {`, ...body.map((l) => `  ${l}`), '}');
  return lines.join('\n    ');
}

/** WGSL: acc_i_v += W[c][i] · X[c][cols v] over the T streamed rows (W: vec4 over a thread's owned rows), `un` rows per iteration. */
function accumulate(pairs: [string, string, string][], g: Geo, un: number): string {
  const u = Math.min(un, g.T);
  const lines: string[] = [];
  for (let c = 0; c < u; c++) {
    const full = u === g.T;
    const cc = full ? `${c}u` : `(c0 + ${c}u)`;
    const sw = full ? `${c & 7}u` : `sw${c}`;
    if (!full) lines.push(`let sw${c} = ${cc} & 7u;`);
    for (const [acc, W, X] of pairs) {
      lines.push(`{ let w = ${W}[${cc} * ${g.OG}u + (og ^ ${sw})];`);
      for (let v = 0; v < g.cv; v++) {
        lines.push(`  let x${v} = ${X}[${cc} * ${g.hv}u + ((sg + ${g.SG * v}u) ^ ${sw})];`);
        for (const i of I4) lines.push(`  ${acc}${i}_${v} = fma(vec4<f32>(w.${C[i]}), x${v}, ${acc}${i}_${v});`);
      }
      lines.push('}');
    }
  }
  if (u === g.T) return lines.join('\n    ');
  return [`for (var c0 = 0u; c0 < ${g.T}u; c0 += ${u}u) {`, ...lines.map((l) => `  ${l}`), '}'].join('\n    ');
}

/** WGSL: per-thread constants: row group, lane, swizzle keys, owned (o_i) and streamed (t_k) tile bases. */
function layout(g: Geo): string {
  return `let og = lid / ${g.SG}u; let sg = lid % ${g.SG}u; let oKey = og & 7u; let sKey = sg & 7u;
  ${I4.map((i) => `let o${i} = (og + ${g.OG * i}u) * ${g.hv}u;`).join(' ')}
  ${range(g.ts)
    .map((k) => `let t${k} = (sg + ${g.SG * k}u) * ${g.hv}u;`)
    .join(' ')}`;
}

const accDecl = (acc: string, g: Geo) =>
  I4.flatMap((i) => range(g.cv).map((v) => `var ${acc}${i}_${v} = vec4<f32>(0.0);`)).join(' ');

/** WGSL: writes a 4 x ts register block (vec4 over owned rows) into a P-layout tile. */
function storeBlock(tile: string, s: string, g: Geo): string {
  return range(g.ts)
    .map(
      (k) =>
        `${tile}[(sg + ${g.SG * k}u) * ${g.OG}u + (og ^ sKey)] = vec4<f32>(${I4.map((i) => `${s}${i}_${k}`).join(', ')});`,
    )
    .join('\n    ');
}

/** WGSL: stores acc rows (row-major, 64 wide) at out rows `rowExpr(i)` of buffer OUT, times `mul`; aligned path: unchecked vec4 stores. */
function storeAcc(
  OUT: string,
  acc: string,
  g: Geo,
  rowOk: (i: number) => string,
  rowIdx: (i: number) => string,
  mul: (i: number) => string,
  fx: Fixed,
): string {
  if (fx) {
    return I4.map(
      (i) => `{ let r = ${rowIdx(i)};
    ${range(g.cv)
      .map((v) => `${OUT}[r * ${g.hv}u + sg + ${g.SG * v}u] = ${acc}${i}_${v} * ${mul(i)};`)
      .join(' ')} }`,
    ).join('\n  ');
  }
  return I4.map(
    (i) => `if (${rowOk(i)}) {
    let r = ${rowIdx(i)};
    ${range(g.cv)
      .map(
        (v) =>
          `{ let y = ${acc}${i}_${v} * ${mul(i)}; let a = r * ${g.hd}u + (sg + ${g.SG * v}u) * 4u; ${I4.map((c) => `${OUT}[a + ${c}u] = y.${C[c]};`).join(' ')} }`,
      )
      .join('\n    ')}
  }`,
  ).join('\n  ');
}

/** WGSL: reduces vec4 `x` (one value per owned row) over a row group's SG lanes with `op` (max or +). */
function rowReduce(x: string, op: 'max' | 'add', g: Geo, shuffle: number): string {
  const f = (a: string, b: string) => (op === 'max' ? `max(${a}, ${b})` : `(${a} + ${b})`);
  const lines: string[] = [];
  for (let w = 1; w < Math.min(shuffle, g.SG); w *= 2) lines.push(`${x} = ${f(x, `subgroupShuffleXor(${x}, ${w}u)`)};`);
  const step = Math.min(shuffle, g.SG);
  if (step < g.SG) {
    lines.push(`Red[lid] = ${x};`, 'workgroupBarrier();', `${x} = Red[og * ${g.SG}u];`);
    for (let s = step; s < g.SG; s += step) lines.push(`${x} = ${f(x, `Red[og * ${g.SG}u + ${s}u]`)};`);
  }
  return lines.join('\n    ');
}

const MASKED = '-3.0e38';

/**
 * WGSL: whether key `key` is visible from query `query`: inside the streamed extent (`key <
 * extent`, or the test `inside` given) unless the aligned path makes every streamed row real,
 * and at or before the query when causal; '' when always.
 */
function visible(
  key: string,
  extent: string,
  query: string,
  fx: Fixed,
  causal: boolean,
  inside = `${key} < ${extent}`,
): string {
  const tests = [...(fx ? [] : [inside]), ...(causal ? [`${key} <= ${query}`] : [])];
  return tests.join(' && ');
}

const masked = (x: string, ok: string) => (ok ? `select(0.0, ${x}, ${ok})` : x);
const guarded = (fx: Fixed, ok: string, stmt: string) => (fx ? stmt : `if (${ok}) { ${stmt} }`);

export function encodeTiledForward(
  rt: Runtime,
  cfg: AttnTiledConfig,
  dims: AttnDims,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  scale: number,
  causal: boolean,
  out: PooledBuffer,
  lse: PooledBuffer,
): void {
  const g = geo(tileFor(cfg.fwd, dims.E), dims.E);
  const nb = dims.batch.length;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  const shuffle = Math.min(cfg.shuffle, g.SG);
  const p = operandsOf(dims, scale, { q, k, v });
  const fx = fixedOf(cfg, g, dims, 'L', [q, k, v]);
  const st = streamStage(
    p,
    g.hv,
    [
      ['Ks', 'K', 'k', 'pk'],
      ['Vs', 'V', 'v', 'pv'],
    ],
    g.T,
    'j0',
    'kEnd',
    '0u',
    fx,
  );
  const key = `attention tiled|E${g.hd}|nb${nb}|R${g.R}|T${g.T}|sh${shuffle}|u${cfg.unroll}|${causal ? 'causal' : 'full'}|${fx ? `f${fx.L},${fx.S}` : 'g'}|w${p.words}`;
  launch(
    rt,
    key,
    3,
    2,
    WG,
    p,
    () => /* wgsl */ `${shuffle > 1 ? 'enable subgroups;' : ''}
${paramsDecl(p.words)}
${storages(['Q', 'K', 'V'], ['O', 'LSE'], fx ? ['Q', 'K', 'V', 'O'] : [])}
var<workgroup> Qs: array<vec4<f32>, ${g.R * g.hv}>;
var<workgroup> Ks: array<vec4<f32>, ${g.T * g.hv}>;
var<workgroup> Vs: array<vec4<f32>, ${g.T * g.hv}>;
var<workgroup> Ps: array<vec4<f32>, ${g.T * g.OG}>;
${shuffle < g.SG ? `var<workgroup> Red: array<vec4<f32>, ${WG}>;` : ''}
@compute @workgroup_size(${WG})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  ${blockStart(p, g, 'L', fx)}
  let i0 = ${causal ? `(nblk - 1u - wg / NB)` : `(wg / NB)`} * ${g.R}u;
  ${bases(p, nb, ['q', 'k', 'v'], fx)}
  ${layout(g)}
  let qs = ${p.f('scale')} * ${LOG2E};
  ${stage(p, g.hv, 'Qs', g.R, 'Q', 'q', 'i0', 'L', fx, ' * qs')}
  var m = vec4<f32>(-1.0e30);
  var l = vec4<f32>(0.0);
  ${accDecl('acc', g)}
  ${keyLoop(g, st, causal, cfg.unroll)}
    ${I4.flatMap((i) =>
      range(g.ts)
        .map((kk) => visible(`j0 + sg + ${g.SG * kk}u`, 'S', `i0 + og + ${g.OG * i}u`, fx, causal))
        .map((ok, kk) => (ok ? `s${i}_${kk} = select(${MASKED}, s${i}_${kk}, ${ok});` : '')),
    ).join('\n    ')}
    var mx = vec4<f32>(${I4.map((i) => range(g.ts).reduce((a, kk) => (a ? `max(${a}, s${i}_${kk})` : `s${i}_${kk}`), '')).join(', ')});
    ${rowReduce('mx', 'max', g, shuffle)}
    let mn = max(m, mx);
    let cr = exp2(m - mn);
    m = mn;
    l = l * cr;
    ${I4.flatMap((i) => range(g.cv).map((vv) => `acc${i}_${vv} = acc${i}_${vv} * cr.${C[i]};`)).join(' ')}
    ${I4.flatMap((i) => range(g.ts).map((kk) => `s${i}_${kk} = exp2(s${i}_${kk} - m.${C[i]});`)).join(' ')}
    l = l + vec4<f32>(${I4.map((i) =>
      range(g.ts)
        .map((kk) => `s${i}_${kk}`)
        .join(' + '),
    ).join(', ')});
    ${storeBlock('Ps', 's', g)}
    workgroupBarrier();
    ${accumulate([['acc', 'Ps', 'Vs']], g, cfg.unroll)}
  }
  workgroupBarrier();
  ${rowReduce('l', 'add', g, shuffle)}
  let inv = 1.0 / l;
  ${storeAcc(
    'O',
    'acc',
    g,
    (i) => `i0 + og + ${g.OG * i}u < L`,
    (i) => `b * L + i0 + og + ${g.OG * i}u`,
    (i) => `inv.${C[i]}`,
    fx,
  )}
  if (sg == 0u) {
    ${I4.map((i) => guarded(fx, `i0 + og + ${g.OG * i}u < L`, `LSE[b * L + i0 + og + ${g.OG * i}u] = (m.${C[i]} + log2(l.${C[i]})) * ${Math.LN2};`)).join('\n    ')}
  }
}`,
    [q.buf, k.buf, v.buf, out, lse],
    B * Math.ceil(dims.L / g.R),
  );
}

/** dQ_i = scale Σ_j p_ij (dO_i·v_j - D_i) k_j, owned query rows, streamed keys; stats = (lse, D) per row. */
export function encodeTiledDq(
  rt: Runtime,
  cfg: AttnTiledConfig,
  dims: AttnDims,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  gOut: AttnOperand,
  scale: number,
  causal: boolean,
  stats: PooledBuffer,
  dq: PooledBuffer,
): void {
  const g = geo(tileFor(cfg.dq, dims.E), dims.E);
  const nb = dims.batch.length;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  const p = operandsOf(dims, scale, { q, k, v, g: gOut });
  const fx = fixedOf(cfg, g, dims, 'L', [q, k, v, gOut]);
  const st = streamStage(
    p,
    g.hv,
    [
      ['Ks', 'K', 'k', 'pk'],
      ['Vs', 'V', 'v', 'pv'],
    ],
    g.T,
    'j0',
    'kEnd',
    '0u',
    fx,
  );
  // dS (T x OG vec4s) reuses V's tile (T x hv) when it fits: head dim 64 with 64 owned rows.
  const ownDs = g.OG > g.hv,
    ds = ownDs ? 'Ds' : 'Vs';
  const key = `attention tiled dq|E${g.hd}|nb${nb}|R${g.R}|T${g.T}|u${cfg.unroll}|${causal ? 'causal' : 'full'}|${fx ? `f${fx.L},${fx.S}` : 'g'}|w${p.words}`;
  launch(
    rt,
    key,
    5,
    1,
    WG,
    p,
    () => /* wgsl */ `${paramsDecl(p.words)}
${storages(['Q', 'K', 'V', 'G', 'ST'], ['DQ'], fx ? ['Q', 'K', 'V', 'G', 'DQ'] : [])}
var<workgroup> Qs: array<vec4<f32>, ${g.R * g.hv}>;
var<workgroup> Gs: array<vec4<f32>, ${g.R * g.hv}>;
var<workgroup> Ks: array<vec4<f32>, ${g.T * g.hv}>;
var<workgroup> Vs: array<vec4<f32>, ${g.T * g.hv}>;
${ownDs ? `var<workgroup> Ds: array<vec4<f32>, ${g.T * g.OG}>;` : ''}
@compute @workgroup_size(${WG})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  ${blockStart(p, g, 'L', fx)}
  let i0 = ${causal ? `(nblk - 1u - wg / NB)` : `(wg / NB)`} * ${g.R}u;
  ${bases(p, nb, ['q', 'k', 'v', 'g'], fx)}
  ${layout(g)}
  let scale = ${p.f('scale')};
  let qs = scale * ${LOG2E};
  ${stage(p, g.hv, 'Qs', g.R, 'Q', 'q', 'i0', 'L', fx, ' * qs')}
  ${stage(p, g.hv, 'Gs', g.R, 'G', 'g', 'i0', 'L', fx)}
  var lse = vec4<f32>(0.0);
  var D = vec4<f32>(0.0);
  ${I4.map((i) => `{ let row = i0 + og + ${g.OG * i}u; ${guarded(fx, 'row < L', `lse.${C[i]} = ST[2u * (b * L + row)] * ${LOG2E}; D.${C[i]} = ST[2u * (b * L + row) + 1u];`)} }`).join('\n  ')}
  ${accDecl('dq', g)}
  ${keyLoop(g, st, causal, cfg.unroll)}
    ${scores('d', 'Gs', 'Vs', g, cfg.unroll)}
    ${I4.flatMap((i) => range(g.ts).map((kk) => `{ let pr = ${masked(`exp2(s${i}_${kk} - lse.${C[i]})`, visible(`j0 + sg + ${g.SG * kk}u`, 'S', `i0 + og + ${g.OG * i}u`, fx, causal))}; d${i}_${kk} = pr * (d${i}_${kk} - D.${C[i]}); }`)).join('\n    ')}
    ${ownDs ? '' : "// dS goes into V's tile once every thread is done reading V (dP above).\n    workgroupBarrier();"}
    ${storeBlock(ds, 'd', g)}
    workgroupBarrier();
    ${accumulate([['dq', ds, 'Ks']], g, cfg.unroll)}
  }
  ${storeAcc(
    'DQ',
    'dq',
    g,
    (i) => `i0 + og + ${g.OG * i}u < L`,
    (i) => `b * L + i0 + og + ${g.OG * i}u`,
    () => 'scale',
    fx,
  )}
}`,
    [q.buf, k.buf, v.buf, gOut.buf, stats, dq],
    B * Math.ceil(dims.L / g.R),
  );
}

/** dV_j = Σ_i p_ij dO_i, dK_j = scale Σ_i p_ij (dO_i·v_j - D_i) q_i: owned key rows, streamed query rows. */
export function encodeTiledDkv(
  rt: Runtime,
  cfg: AttnTiledConfig,
  dims: AttnDims,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  gOut: AttnOperand,
  scale: number,
  causal: boolean,
  stats: PooledBuffer,
  dk: PooledBuffer,
  dv: PooledBuffer,
): void {
  const g = geo(tileFor(cfg.dkv, dims.E), dims.E);
  const nb = dims.batch.length;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  const p = operandsOf(dims, scale, { q, k, v, g: gOut });
  const fx = fixedOf(cfg, g, dims, 'S', [q, k, v, gOut]);
  const st = streamStage(
    p,
    g.hv,
    [
      ['Qs', 'Q', 'q', 'pq'],
      ['Gs', 'G', 'g', 'pg'],
    ],
    g.T,
    'i0',
    'L',
    'iStart',
    fx,
  );
  const key = `attention tiled dkv|E${g.hd}|nb${nb}|R${g.R}|T${g.T}|u${cfg.unroll}|${causal ? 'causal' : 'full'}|${fx ? `f${fx.L},${fx.S}` : 'g'}|w${p.words}`;
  launch(
    rt,
    key,
    5,
    2,
    WG,
    p,
    () => /* wgsl */ `${paramsDecl(p.words)}
${storages(['Q', 'K', 'V', 'G', 'ST'], ['DK', 'DV'], fx ? ['Q', 'K', 'V', 'G', 'DK', 'DV'] : [])}
var<workgroup> Ks: array<vec4<f32>, ${g.R * g.hv}>;
var<workgroup> Vs: array<vec4<f32>, ${g.R * g.hv}>;
var<workgroup> Qs: array<vec4<f32>, ${g.T * g.hv}>;
var<workgroup> Gs: array<vec4<f32>, ${g.T * g.hv}>;
var<workgroup> Ps: array<vec4<f32>, ${g.T * g.OG}>;
var<workgroup> Ds: array<vec4<f32>, ${g.T * g.OG}>;
@compute @workgroup_size(${WG})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  ${blockStart(p, g, 'S', fx)}
  let j0 = (wg / NB) * ${g.R}u;
  ${bases(p, nb, ['q', 'k', 'v', 'g'], fx)}
  ${layout(g)}
  let scale = ${p.f('scale')};
  let ks = scale * ${LOG2E};
  ${stage(p, g.hv, 'Ks', g.R, 'K', 'k', 'j0', 'S', fx, ' * ks')}
  ${stage(p, g.hv, 'Vs', g.R, 'V', 'v', 'j0', 'S', fx)}
  ${accDecl('dk', g)}
  ${accDecl('dv', g)}
  var iStart = 0u;
  ${causal ? `iStart = (j0 / ${g.T}u) * ${g.T}u;` : ''}
  ${st.decl}
  ${st.first}
  for (var i0 = iStart; i0 < L; i0 += ${g.T}u) {
    workgroupBarrier();
    ${st.step}
    ${range(g.ts)
      .map(
        (kk) =>
          `var lse${kk} = 0.0; var D${kk} = 0.0; { let row = i0 + sg + ${g.SG * kk}u; ${guarded(fx, 'row < L', `lse${kk} = ST[2u * (b * L + row)] * ${LOG2E}; D${kk} = ST[2u * (b * L + row) + 1u];`)} }`,
      )
      .join('\n    ')}
    workgroupBarrier();
    ${scores('s', 'Ks', 'Qs', g, cfg.unroll)}
    ${scores('d', 'Vs', 'Gs', g, cfg.unroll)}
    ${I4.flatMap((i) => range(g.ts).map((kk) => `{ s${i}_${kk} = ${masked(`exp2(s${i}_${kk} - lse${kk})`, visible(`j0 + og + ${g.OG * i}u`, '', `i0 + sg + ${g.SG * kk}u`, fx, causal, `i0 + sg + ${g.SG * kk}u < L`))}; d${i}_${kk} = s${i}_${kk} * (d${i}_${kk} - D${kk}); }`)).join('\n    ')}
    ${storeBlock('Ps', 's', g)}
    ${storeBlock('Ds', 'd', g)}
    workgroupBarrier();
    ${accumulate(
      [
        ['dv', 'Ps', 'Gs'],
        ['dk', 'Ds', 'Qs'],
      ],
      g,
      cfg.unroll,
    )}
  }
  ${storeAcc(
    'DK',
    'dk',
    g,
    (i) => `j0 + og + ${g.OG * i}u < S`,
    (i) => `b * S + j0 + og + ${g.OG * i}u`,
    () => 'scale',
    fx,
  )}
  ${storeAcc(
    'DV',
    'dv',
    g,
    (i) => `j0 + og + ${g.OG * i}u < S`,
    (i) => `b * S + j0 + og + ${g.OG * i}u`,
    () => '1.0',
    fx,
  )}
}`,
    [q.buf, k.buf, v.buf, gOut.buf, stats, dk, dv],
    B * Math.ceil(dims.S / g.R),
  );
}
