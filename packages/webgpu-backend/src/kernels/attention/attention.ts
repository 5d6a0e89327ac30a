import { BackendError } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Params, batchBase, batchDigits, commonParams, launch, operandParams } from './params';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl } from '../wgsl';
import { AttnTiledConfig, encodeTiledDkv, encodeTiledDq, encodeTiledForward, tiledFits } from './tiled';
import type { AttnDims, AttnOperand } from './types';

export type { AttnDims, AttnOperand } from './types';

/**
 * FlashAttention-style kernels. Forward: a workgroup owns ROWS query rows (one per thread,
 * its q row and output accumulator in registers) and walks the keys in tiles loaded into
 * workgroup memory, keeping a running max and sum (online softmax), so the L x S scores are
 * never stored; it writes the output and each row's logsumexp. Backward recomputes the
 * probabilities from that logsumexp: a small pass packs (lse, D = dO·out) per row, one kernel
 * owns query rows and accumulates dQ over key tiles, another owns key rows and accumulates
 * dK and dV over query tiles (no atomics; the score recompute is done twice instead).
 * Causal kernels stop (forward, dQ) or start (dK/dV) at the diagonal's tile. These take the
 * shapes that the register-tiled kernels (attention/tiled.ts: head dims 32 and 64, no mask) do not.
 */

/** The tiled kernels' config and the adapter's workgroup memory, or null for row kernels only. */
export interface AttnPlan {
  tiled: AttnTiledConfig | null;
  maxBytes: number;
}

const useTiled = (
  plan: AttnPlan | undefined,
  dims: AttnDims,
  mask: AttnOperand | null,
): plan is AttnPlan & { tiled: AttnTiledConfig } => !!plan?.tiled && tiledFits(dims, !!mask, plan.tiled, plan.maxBytes);

/** Threads per workgroup = rows (query or key) a workgroup owns. */
const ROWS = 64;
/** f32 words of workgroup memory a kernel may use (WebGPU's guaranteed 16 KiB). */
const SHARED_WORDS = 4096;

export type MaskKind = 'none' | 'float' | 'bool';

/** The mask test for (row i, key j) inside a kernel: sets `vis` false or adds to `s`. */
function maskCode(p: Params, kind: MaskKind, i: string, j: string): string {
  if (kind === 'none') return '';
  const at = `M[u32(mB + i32(${i}) * ${p.i('m.rs')} + i32(${j}) * ${p.i('m.cs')})]`;
  if (kind === 'bool') return `if (${at} == 0u) { vis = false; }`;
  return `let mv = ${at}; if (isinf_(mv) && mv < 0.0) { vis = false; } else { s = s + mv; }`;
}

function tileOf(op: string, words: number, dims: AttnDims): number {
  const t = Math.min(32, Math.floor(SHARED_WORDS / Math.max(1, words)));
  if (t < 1)
    throw new BackendError(
      `${op}: head dims E=${dims.E} and Ev=${dims.Ev} are too large for one workgroup's memory (E + Ev + 2 must be at most ${SHARED_WORDS}); use the CPU backend or split the heads`,
    );
  return t;
}

const arr = (n: number) => Math.max(1, n);

/**
 * A head dim as the kernel holds it: vec4 when it divides by 4 (one 16-byte workgroup-memory
 * read and one dot() per 4 elements instead of 4 scalar reads and FMAs), else scalar.
 */
interface Lanes {
  w: 1 | 4;
  n: number;
  ty: string;
}
const lanes = (d: number): Lanes =>
  d > 0 && d % 4 === 0 ? { w: 4, n: d / 4, ty: 'vec4<f32>' } : { w: 1, n: d, ty: 'f32' };

/** WGSL: one lane group of a row read from a strided buffer, starting at element `col`. */
function loadLanes(l: Lanes, buf: string, base: string, colStride: string, col: string): string {
  const at = (c: number) => `${buf}[u32(${base} + i32(${col}${c ? ` + ${c}u` : ''}) * ${colStride})]`;
  return l.w === 1 ? at(0) : `vec4<f32>(${at(0)}, ${at(1)}, ${at(2)}, ${at(3)})`;
}

const dotLanes = (l: Lanes, a: string, b: string) => (l.w === 4 ? `dot(${a}, ${b})` : `(${a} * ${b})`);

/** WGSL: stores a lane group at contiguous elements idx.. of buf. */
function storeLanes(l: Lanes, buf: string, idx: string, val: string): string {
  if (l.w === 1) return `${buf}[${idx}] = ${val};`;
  return `{ let sv = ${val}; ${[0, 1, 2, 3].map((c) => `${buf}[${idx} + ${c}u] = sv.${'xyzw'[c]};`).join(' ')} }`;
}

/** WGSL: all threads fill tile T (rows r0.., `l.n` lane groups each) from rows of X, 0 past `limit`. */
function loadTile(
  l: Lanes,
  tile: string,
  rows: number,
  buf: string,
  base: string,
  rs: string,
  cs: string,
  r0: string,
  limit: string,
): string {
  return `for (var t = lid; t < ${rows * l.n}u; t += ${ROWS}u) {
      let rr = ${r0} + t / ${arr(l.n)}u;
      var x = ${l.ty}(0.0);
      if (rr < ${limit}) { x = ${loadLanes(l, buf, `${base} + i32(rr) * ${rs}`, cs, `(t % ${arr(l.n)}u) * ${l.w}u`)}; }
      ${tile}[t] = x;
    }`;
}

/** Throws the BackendError of tileOf before anything is allocated. */
export function checkAttentionFits(op: string, dims: AttnDims): void {
  tileOf(op, dims.E + dims.Ev + 2, dims);
}

export function encodeAttention(
  rt: Runtime,
  dims: AttnDims,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  mask: AttnOperand | null,
  maskKind: MaskKind,
  scale: number,
  causal: boolean,
  out: PooledBuffer,
  lse: PooledBuffer,
  plan?: AttnPlan,
): void {
  const { L, E, Ev } = dims;
  const nb = dims.batch.length;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  if (B * L === 0) return;
  if (useTiled(plan, dims, mask)) return encodeTiledForward(rt, plan.tiled, dims, q, k, v, scale, causal, out, lse);
  const BC = tileOf('attention', E + Ev, dims);
  const ek = lanes(E),
    ev = lanes(Ev);
  const p = commonParams(dims, scale);
  operandParams(p, 'q', q, nb, true);
  operandParams(p, 'k', k, nb, true);
  operandParams(p, 'v', v, nb, true);
  if (mask) operandParams(p, 'm', mask, nb, true);
  const reads = mask ? 4 : 3;
  const key = `attention|nb${nb}|E${E}|Ev${Ev}|bc${BC}|${causal ? 'causal' : 'full'}|${maskKind}|w${p.words}`;
  const bufs = [q.buf, k.buf, v.buf, ...(mask ? [mask.buf] : []), out, lse];
  launch(
    rt,
    key,
    reads,
    2,
    ROWS,
    p,
    () => /* wgsl */ `${FLOAT_HELPERS}
${paramsDecl(p.words)}
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
${mask ? `@group(0) @binding(4) var<storage, read> M: array<${maskKind === 'bool' ? 'u32' : 'f32'}>;` : ''}
@group(0) @binding(${reads + 1}) var<storage, read_write> O: array<f32>;
@group(0) @binding(${reads + 2}) var<storage, read_write> LSE: array<f32>;
var<workgroup> Ks: array<${ek.ty}, ${BC * arr(ek.n)}>;
var<workgroup> Vs: array<${ev.ty}, ${BC * arr(ev.n)}>;
@compute @workgroup_size(${ROWS})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let L = ${p.u('L')};
  let S = ${p.u('S')};
  let nblk = (L + ${ROWS - 1}u) / ${ROWS}u;
  if (wg >= ${p.u('B')} * nblk) { return; }
  let b = wg / nblk;
  let i0 = (wg % nblk) * ${ROWS}u;
  let i = i0 + lid;
  ${batchDigits(p, nb, 'b')}
  ${batchBase(p, 'q', nb)} ${batchBase(p, 'k', nb)} ${batchBase(p, 'v', nb)} ${mask ? batchBase(p, 'm', nb) : ''}
  let live = i < L;
  let scale = ${p.f('scale')};
  var qr: array<${ek.ty}, ${arr(ek.n)}>;
  var acc: array<${ev.ty}, ${arr(ev.n)}>;
  var sc: array<f32, ${BC}>;
  if (live) {
    for (var e = 0u; e < ${ek.n}u; e++) { qr[e] = ${loadLanes(ek, 'Q', `qB + i32(i) * ${p.i('q.rs')}`, p.i('q.cs'), `e * ${ek.w}u`)} * scale; }
  }
  var m = -3.0e38;
  var l = 0.0;
  // A NaN score: WGSL's max() and the comparisons below would skip it; PyTorch's row is NaN.
  var nanRow = false;
  var kEnd = S;
  ${causal ? `kEnd = min(S, i0 + ${ROWS}u);` : ''}
  for (var j0 = 0u; j0 < kEnd; j0 += ${BC}u) {
    workgroupBarrier();
    ${loadTile(ek, 'Ks', BC, 'K', 'kB', p.i('k.rs'), p.i('k.cs'), 'j0', 'S')}
    ${loadTile(ev, 'Vs', BC, 'V', 'vB', p.i('v.rs'), p.i('v.cs'), 'j0', 'S')}
    workgroupBarrier();
    if (live) {
      var mt = m;
      for (var jj = 0u; jj < ${BC}u; jj++) {
        let j = j0 + jj;
        var vis = j < S${causal ? ' && j <= i' : ''};
        var s = -3.4e38;
        if (vis) {
          s = 0.0;
          for (var e = 0u; e < ${ek.n}u; e++) { s = s + ${dotLanes(ek, 'qr[e]', `Ks[jj * ${ek.n}u + e]`)}; }
          ${maskCode(p, maskKind, 'i', 'j')}
          if (vis) { mt = max(mt, s); if (isnan_(s)) { nanRow = true; } } else { s = -3.4e38; }
        }
        sc[jj] = s;
      }
      if (mt > m) {
        let c = exp(m - mt);
        l = l * c;
        for (var e = 0u; e < ${ev.n}u; e++) { acc[e] = acc[e] * c; }
        m = mt;
      }
      for (var jj = 0u; jj < ${BC}u; jj++) {
        if (sc[jj] > -3.3e38) {
          let pj = exp(sc[jj] - m);
          l = l + pj;
          for (var e = 0u; e < ${ev.n}u; e++) { acc[e] = acc[e] + pj * Vs[jj * ${ev.n}u + e]; }
        }
      }
    }
  }
  if (live) {
    let r = b * L + i;
    if (nanRow) {
      for (var e = 0u; e < ${Ev}u; e++) { O[r * ${Ev}u + e] = nan_(); }
      LSE[r] = nan_();
    } else if (l > 0.0) {
      let inv = 1.0 / l;
      for (var e = 0u; e < ${ev.n}u; e++) { ${storeLanes(ev, 'O', `r * ${Ev}u + e * ${ev.w}u`, 'acc[e] * inv')} }
      LSE[r] = m + log(l);
    } else {
      // Every key hidden: output 0 and logsumexp -inf (PyTorch's safe softmax).
      for (var e = 0u; e < ${Ev}u; e++) { O[r * ${Ev}u + e] = 0.0; }
      LSE[r] = -inf_();
    }
  }
}`,
    bufs,
    B * Math.ceil(L / ROWS),
  );
}

export function encodeAttentionBackward(
  rt: Runtime,
  dims: AttnDims,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  mask: AttnOperand | null,
  maskKind: MaskKind,
  out: AttnOperand,
  lse: AttnOperand,
  gOut: AttnOperand,
  scale: number,
  causal: boolean,
  stats: PooledBuffer,
  dq: PooledBuffer,
  dk: PooledBuffer,
  dv: PooledBuffer,
  plan?: AttnPlan,
): void {
  const { L, S } = dims;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  if (B === 0) return;
  if (B * L > 0) encodeStats(rt, dims, out, lse, gOut, stats);
  if (B * L > 0 && useTiled(plan, dims, mask)) {
    encodeTiledDq(rt, plan.tiled, dims, q, k, v, gOut, scale, causal, stats, dq);
    encodeTiledDkv(rt, plan.tiled, dims, q, k, v, gOut, scale, causal, stats, dk, dv);
    return;
  }
  if (B * L > 0) encodeDq(rt, dims, q, k, v, mask, maskKind, gOut, scale, causal, stats, dq);
  if (B * S > 0) encodeDkv(rt, dims, q, k, v, mask, maskKind, gOut, scale, causal, stats, dk, dv);
}

/** Threads per row of the stats pass. */
const STATS_LANES = 16;

/** stats[2r] = lse_r, stats[2r+1] = D_r = Σ_e dO_re · out_re, per query row r. */
function encodeStats(
  rt: Runtime,
  dims: AttnDims,
  out: AttnOperand,
  lse: AttnOperand,
  gOut: AttnOperand,
  stats: PooledBuffer,
): void {
  const nb = dims.batch.length;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  const p = commonParams(dims, 1);
  operandParams(p, 'o', out, nb, true);
  operandParams(p, 'l', lse, nb, false);
  operandParams(p, 'g', gOut, nb, true);
  const key = `attention stats|nb${nb}|Ev${dims.Ev}|w${p.words}`;
  launch(
    rt,
    key,
    3,
    1,
    ROWS,
    p,
    () => /* wgsl */ `${paramsDecl(p.words)}
@group(0) @binding(1) var<storage, read> O: array<f32>;
@group(0) @binding(2) var<storage, read> LS: array<f32>;
@group(0) @binding(3) var<storage, read> G: array<f32>;
@group(0) @binding(4) var<storage, read_write> ST: array<f32>;
var<workgroup> Red: array<f32, ${ROWS}>;
@compute @workgroup_size(${ROWS})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  // ${STATS_LANES} lanes per row, reading consecutive columns (coalesced), summed through workgroup memory.
  let lane = lid % ${STATS_LANES}u;
  let n = ${p.u('B')} * ${p.u('L')};
  let r0 = wg * ${ROWS / STATS_LANES}u + lid / ${STATS_LANES}u;
  let r = min(r0, n - 1u);
  let L = ${p.u('L')};
  let i = r % L;
  ${batchDigits(p, nb, 'r / L')}
  ${batchBase(p, 'o', nb)} ${batchBase(p, 'l', nb)} ${batchBase(p, 'g', nb)}
  var D = 0.0;
  for (var e = lane; e < ${dims.Ev}u; e += ${STATS_LANES}u) {
    D = D + G[u32(gB + i32(i) * ${p.i('g.rs')} + i32(e) * ${p.i('g.cs')})] * O[u32(oB + i32(i) * ${p.i('o.rs')} + i32(e) * ${p.i('o.cs')})];
  }
  Red[lid] = D;
  workgroupBarrier();
  if (lane == 0u && r0 < n) {
    var t = 0.0;
    for (var k = 0u; k < ${STATS_LANES}u; k++) { t = t + Red[lid + k]; }
    ST[2u * r] = LS[u32(lB + i32(i) * ${p.i('l.rs')})];
    ST[2u * r + 1u] = t;
  }
}`,
    [out.buf, lse.buf, gOut.buf, stats],
    Math.ceil((B * dims.L * STATS_LANES) / ROWS),
  );
}

/** The parameters both backward kernels read: q, k, v, dO (and the mask), and how many buffers they read. */
function backwardParams(
  dims: AttnDims,
  scale: number,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  gOut: AttnOperand,
  mask: AttnOperand | null,
): { p: Params; reads: number } {
  const nb = dims.batch.length;
  const p = commonParams(dims, scale);
  operandParams(p, 'q', q, nb, true);
  operandParams(p, 'k', k, nb, true);
  operandParams(p, 'v', v, nb, true);
  operandParams(p, 'g', gOut, nb, true);
  if (mask) operandParams(p, 'm', mask, nb, true);
  return { p, reads: mask ? 6 : 5 };
}

/** The read bindings of both backward kernels (the order backwardParams counts). */
const backwardReads = (mask: AttnOperand | null, maskKind: MaskKind): string =>
  `@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> G: array<f32>;
@group(0) @binding(5) var<storage, read> ST: array<f32>;
${mask ? `@group(0) @binding(6) var<storage, read> M: array<${maskKind === 'bool' ? 'u32' : 'f32'}>;` : ''}`;

/** dQ_i = scale Σ_j p_ij (dO_i·v_j - D_i) k_j: one thread per query row, keys in tiles. */
function encodeDq(
  rt: Runtime,
  dims: AttnDims,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  mask: AttnOperand | null,
  maskKind: MaskKind,
  gOut: AttnOperand,
  scale: number,
  causal: boolean,
  stats: PooledBuffer,
  dq: PooledBuffer,
): void {
  const { L, E, Ev } = dims;
  const nb = dims.batch.length;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  const BC = tileOf('attention backward', E + Ev, dims);
  const ek = lanes(E),
    ev = lanes(Ev);
  const { p, reads } = backwardParams(dims, scale, q, k, v, gOut, mask);
  const key = `attention dq|nb${nb}|E${E}|Ev${Ev}|bc${BC}|${causal ? 'causal' : 'full'}|${maskKind}|w${p.words}`;
  launch(
    rt,
    key,
    reads,
    1,
    ROWS,
    p,
    () => /* wgsl */ `${FLOAT_HELPERS}
${paramsDecl(p.words)}
${backwardReads(mask, maskKind)}
@group(0) @binding(${reads + 1}) var<storage, read_write> DQ: array<f32>;
var<workgroup> Ks: array<${ek.ty}, ${BC * arr(ek.n)}>;
var<workgroup> Vs: array<${ev.ty}, ${BC * arr(ev.n)}>;
@compute @workgroup_size(${ROWS})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let L = ${p.u('L')};
  let S = ${p.u('S')};
  let nblk = (L + ${ROWS - 1}u) / ${ROWS}u;
  if (wg >= ${p.u('B')} * nblk) { return; }
  let b = wg / nblk;
  let i0 = (wg % nblk) * ${ROWS}u;
  let i = i0 + lid;
  ${batchDigits(p, nb, 'b')}
  ${batchBase(p, 'q', nb)} ${batchBase(p, 'k', nb)} ${batchBase(p, 'v', nb)} ${batchBase(p, 'g', nb)} ${mask ? batchBase(p, 'm', nb) : ''}
  let scale = ${p.f('scale')};
  var lse = 0.0;
  var D = 0.0;
  if (i < L) { lse = ST[2u * (b * L + i)]; D = ST[2u * (b * L + i) + 1u]; }
  // Rows past L and rows with every key hidden (lse = -inf) take part in the tile loads only.
  let live = i < L && !isinf_(lse);
  var qr: array<${ek.ty}, ${arr(ek.n)}>;
  var gr: array<${ev.ty}, ${arr(ev.n)}>;
  var acc: array<${ek.ty}, ${arr(ek.n)}>;
  if (live) {
    for (var e = 0u; e < ${ek.n}u; e++) { qr[e] = ${loadLanes(ek, 'Q', `qB + i32(i) * ${p.i('q.rs')}`, p.i('q.cs'), `e * ${ek.w}u`)} * scale; }
    for (var e = 0u; e < ${ev.n}u; e++) { gr[e] = ${loadLanes(ev, 'G', `gB + i32(i) * ${p.i('g.rs')}`, p.i('g.cs'), `e * ${ev.w}u`)}; }
  }
  var kEnd = S;
  ${causal ? `kEnd = min(S, i0 + ${ROWS}u);` : ''}
  for (var j0 = 0u; j0 < kEnd; j0 += ${BC}u) {
    workgroupBarrier();
    ${loadTile(ek, 'Ks', BC, 'K', 'kB', p.i('k.rs'), p.i('k.cs'), 'j0', 'S')}
    ${loadTile(ev, 'Vs', BC, 'V', 'vB', p.i('v.rs'), p.i('v.cs'), 'j0', 'S')}
    workgroupBarrier();
    if (live) {
      for (var jj = 0u; jj < ${BC}u; jj++) {
        let j = j0 + jj;
        var vis = j < S${causal ? ' && j <= i' : ''};
        if (vis) {
          var s = 0.0;
          for (var e = 0u; e < ${ek.n}u; e++) { s = s + ${dotLanes(ek, 'qr[e]', `Ks[jj * ${ek.n}u + e]`)}; }
          ${maskCode(p, maskKind, 'i', 'j')}
          if (vis) {
            let pj = exp(s - lse);
            var dp = 0.0;
            for (var e = 0u; e < ${ev.n}u; e++) { dp = dp + ${dotLanes(ev, 'gr[e]', `Vs[jj * ${ev.n}u + e]`)}; }
            let ds = pj * (dp - D);
            for (var e = 0u; e < ${ek.n}u; e++) { acc[e] = acc[e] + ds * Ks[jj * ${ek.n}u + e]; }
          }
        }
      }
    }
  }
  if (i < L) {
    let r = b * L + i;
    for (var e = 0u; e < ${ek.n}u; e++) { ${storeLanes(ek, 'DQ', `r * ${E}u + e * ${ek.w}u`, 'acc[e] * scale')} }
  }
}`,
    [q.buf, k.buf, v.buf, gOut.buf, stats, ...(mask ? [mask.buf] : []), dq],
    B * Math.ceil(L / ROWS),
  );
}

/**
 * dV_j = Σ_i p_ij dO_i and dK_j = scale Σ_i p_ij (dO_i·v_j - D_i) q_i: one thread per key row,
 * query rows (with their dO and stats) in tiles.
 */
function encodeDkv(
  rt: Runtime,
  dims: AttnDims,
  q: AttnOperand,
  k: AttnOperand,
  v: AttnOperand,
  mask: AttnOperand | null,
  maskKind: MaskKind,
  gOut: AttnOperand,
  scale: number,
  causal: boolean,
  stats: PooledBuffer,
  dk: PooledBuffer,
  dv: PooledBuffer,
): void {
  const { S, E, Ev } = dims;
  const nb = dims.batch.length;
  const B = dims.batch.reduce((a, c) => a * c, 1);
  const BQ = tileOf('attention backward', E + Ev + 2, dims);
  const ek = lanes(E),
    ev = lanes(Ev);
  const { p, reads } = backwardParams(dims, scale, q, k, v, gOut, mask);
  const key = `attention dkv|nb${nb}|E${E}|Ev${Ev}|bq${BQ}|${causal ? 'causal' : 'full'}|${maskKind}|w${p.words}`;
  launch(
    rt,
    key,
    reads,
    2,
    ROWS,
    p,
    () => /* wgsl */ `${FLOAT_HELPERS}
${paramsDecl(p.words)}
${backwardReads(mask, maskKind)}
@group(0) @binding(${reads + 1}) var<storage, read_write> DK: array<f32>;
@group(0) @binding(${reads + 2}) var<storage, read_write> DV: array<f32>;
var<workgroup> Qs: array<${ek.ty}, ${BQ * arr(ek.n)}>;
var<workgroup> Gs: array<${ev.ty}, ${BQ * arr(ev.n)}>;
var<workgroup> Ss: array<f32, ${BQ * 2}>;
@compute @workgroup_size(${ROWS})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let L = ${p.u('L')};
  let S = ${p.u('S')};
  let nblk = (S + ${ROWS - 1}u) / ${ROWS}u;
  if (wg >= ${p.u('B')} * nblk) { return; }
  let b = wg / nblk;
  let j0 = (wg % nblk) * ${ROWS}u;
  let j = j0 + lid;
  ${batchDigits(p, nb, 'b')}
  ${batchBase(p, 'q', nb)} ${batchBase(p, 'k', nb)} ${batchBase(p, 'v', nb)} ${batchBase(p, 'g', nb)} ${mask ? batchBase(p, 'm', nb) : ''}
  let scale = ${p.f('scale')};
  let live = j < S;
  var kr: array<${ek.ty}, ${arr(ek.n)}>;
  var vr: array<${ev.ty}, ${arr(ev.n)}>;
  var dka: array<${ek.ty}, ${arr(ek.n)}>;
  var dva: array<${ev.ty}, ${arr(ev.n)}>;
  if (live) {
    for (var e = 0u; e < ${ek.n}u; e++) { kr[e] = ${loadLanes(ek, 'K', `kB + i32(j) * ${p.i('k.rs')}`, p.i('k.cs'), `e * ${ek.w}u`)} * scale; }
    for (var e = 0u; e < ${ev.n}u; e++) { vr[e] = ${loadLanes(ev, 'V', `vB + i32(j) * ${p.i('v.rs')}`, p.i('v.cs'), `e * ${ev.w}u`)}; }
  }
  var iStart = 0u;
  ${causal ? `iStart = (j0 / ${BQ}u) * ${BQ}u;` : ''}
  for (var i0 = iStart; i0 < L; i0 += ${BQ}u) {
    workgroupBarrier();
    ${loadTile(ek, 'Qs', BQ, 'Q', 'qB', p.i('q.rs'), p.i('q.cs'), 'i0', 'L')}
    ${loadTile(ev, 'Gs', BQ, 'G', 'gB', p.i('g.rs'), p.i('g.cs'), 'i0', 'L')}
    for (var t = lid; t < ${BQ * 2}u; t += ${ROWS}u) {
      let i = i0 + t / 2u;
      var x = 0.0;
      if (i < L) { x = ST[2u * (b * L + i) + t % 2u]; }
      Ss[t] = x;
    }
    workgroupBarrier();
    if (live) {
      for (var ii = 0u; ii < ${BQ}u; ii++) {
        let i = i0 + ii;
        let lse = Ss[2u * ii];
        var vis = i < L && !isinf_(lse)${causal ? ' && j <= i' : ''};
        if (vis) {
          var s = 0.0;
          for (var e = 0u; e < ${ek.n}u; e++) { s = s + ${dotLanes(ek, `Qs[ii * ${ek.n}u + e]`, 'kr[e]')}; }
          ${maskCode(p, maskKind, 'i', 'j')}
          if (vis) {
            let pj = exp(s - lse);
            var dp = 0.0;
            for (var e = 0u; e < ${ev.n}u; e++) {
              let g = Gs[ii * ${ev.n}u + e];
              dp = dp + ${dotLanes(ev, 'g', 'vr[e]')};
              dva[e] = dva[e] + pj * g;
            }
            let ds = pj * (dp - Ss[2u * ii + 1u]);
            for (var e = 0u; e < ${ek.n}u; e++) { dka[e] = dka[e] + ds * Qs[ii * ${ek.n}u + e]; }
          }
        }
      }
    }
  }
  if (live) {
    let r = b * S + j;
    for (var e = 0u; e < ${ek.n}u; e++) { ${storeLanes(ek, 'DK', `r * ${E}u + e * ${ek.w}u`, 'dka[e] * scale')} }
    for (var e = 0u; e < ${ev.n}u; e++) { ${storeLanes(ev, 'DV', `r * ${Ev}u + e * ${ev.w}u`, 'dva[e]')} }
  }
}`,
    [q.buf, k.buf, v.buf, gOut.buf, stats, ...(mask ? [mask.buf] : []), dk, dv],
    B * Math.ceil(S / ROWS),
  );
}
