import { DType, Expr } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Emitter } from './elementwise';
import { exprsInfo } from './plan-cache';
import { opHelpersFor } from '../wgsl-ops';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl, pU, storageType, valueType } from '../wgsl';
import { Program, Uniforms } from '../program';

/**
 * Several independent elementwise evaluations of one expression structure in ONE dispatch
 * (Backend.elementwiseGroups; jit merges an optimizer's per-parameter updates into it).
 * Each group ("segment") keeps its own buffers, sizes, offsets and constants in its own run of
 * the parameter block; the workgroups are split between the segments by ranges whose starts
 * are parameters too, so one pipeline serves any sizes. Only the fast layout is taken: every
 * input a dense run of its buffer (contiguous, offset allowed) or one element broadcast to
 * every position (`scalar`: clipGradNorm's scale reads the joint norm so), float32 or int32.
 */
export interface GroupSegment {
  readonly outs: readonly Expr[];
  readonly inputs: readonly { buf: PooledBuffer; dtype: DType; offset: number; scalar?: boolean }[];
  readonly total: number;
  readonly outBufs: readonly PooledBuffer[];
}

/** What a segment binds: its distinct input buffers (unused inputs are not bound) and outputs. */
export function segmentBindings(outs: readonly Expr[], inputs: readonly { buf: PooledBuffer }[]): number {
  const used = exprsInfo(outs).used;
  return new Set(inputs.filter((_, i) => used[i]).map((x) => x.buf)).size + outs.length;
}

const seg = (s: number, f: string) => `s${s}${f}`;
const vtype = (vec: boolean, dt: DType) => (vec ? `vec4<${storageType(dt)}>` : storageType(dt));

/** Records one dispatch evaluating every segment (same expression structure, see the caller). */
export function encodeElementwiseGroups(
  rt: Runtime,
  segs: readonly GroupSegment[],
  outDT: readonly DType[],
  wgSize: number,
): void {
  const infos = segs.map((g) => exprsInfo(g.outs));
  const layouts = segs.map((g, s) => {
    const used = infos[s].used;
    const bindOf: number[] = [];
    const bound: PooledBuffer[] = [];
    g.inputs.forEach((x, i) => {
      if (!used[i]) return;
      let j = bound.indexOf(x.buf);
      if (j < 0) j = bound.push(x.buf) - 1;
      bindOf[i] = j;
    });
    // vec4 reads, unless a buffer is read both as a scalar and as a run (one binding, one type).
    const mixed = g.inputs.some(
      (x, i) => used[i] && x.scalar && g.inputs.some((y, k) => used[k] && !y.scalar && y.buf === x.buf),
    );
    const vec = !mixed && g.total % 4 === 0 && g.inputs.every((x, i) => !used[i] || x.scalar || x.offset % 4 === 0);
    return { used, bindOf, bound, vec, groups: Math.ceil(g.total / ((vec ? 4 : 1) * wgSize)) };
  });
  const inDT = segs[0].inputs.map((x) => x.dtype);
  // Per segment: vec4 or not, each input's binding, and which inputs are broadcast scalars.
  const scalars = (g: GroupSegment) => g.inputs.map((x) => (x.scalar ? 'c' : '')).join('');
  const key = `ewg|${infos[0].key}|${inDT.join(',')}|${outDT.join(',')}|${layouts.map((l, s) => `${l.vec ? 'v' : 's'}${l.bindOf.map((j) => j ?? '_').join('')}${scalars(segs[s])}`).join(';')}|wg${wgSize}`;
  const prog: Program = {
    key,
    workgroupSize: wgSize,
    reads: layouts.reduce((n, l) => n + l.bound.length, 0),
    writes: segs.length * outDT.length,
    uniforms: () => {
      const u = new Uniforms();
      segs.forEach((g, s) => {
        u.u32(seg(s, 'start')).u32(seg(s, 'total'));
        g.inputs.forEach((_, i) => {
          if (layouts[s].used[i]) u.u32(seg(s, `in${i}`));
        });
        u.u32(seg(s, 'consts'), infos[s].consts.length);
      });
      return u;
    },
    wgsl: (u) => {
      const decl: string[] = [];
      const fns: string[] = [];
      // The runtime's layouts bind every read buffer, then every written one.
      let binding = 1;
      segs.forEach((_, s) => {
        const l = layouts[s];
        l.bound.forEach((_, j) => {
          const i = l.bindOf.indexOf(j);
          // A buffer read as a broadcast scalar is bound element-wise (it may be read only so).
          const scalarOnly = segs[s].inputs.every((x, k) => l.bindOf[k] !== j || x.scalar);
          decl.push(
            `@group(0) @binding(${binding++}) var<storage, read> ${seg(s, `b${j}`)}: array<${vtype(l.vec && !scalarOnly, inDT[i])}>;`,
          );
        });
      });
      segs.forEach((_, s) =>
        outDT.forEach((dt, o) =>
          decl.push(
            `@group(0) @binding(${binding++}) var<storage, read_write> ${seg(s, `o${o}`)}: array<${vtype(layouts[s].vec, dt)}>;`,
          ),
        ),
      );
      segs.forEach((g, s) => {
        const l = layouts[s];
        const vty = (dt: DType) => vtype(l.vec, dt);
        const body: string[] = [];
        const lanes = l.vec ? 4 : 1;
        g.inputs.forEach((x, i) => {
          if (!l.used[i]) return;
          const off = pU(u.word(seg(s, `in${i}`)));
          if (x.scalar) body.push(`let q${i} = ${seg(s, `b${l.bindOf[i]}`)}[${off}];`);
          else body.push(`let q${i} = ${seg(s, `b${l.bindOf[i]}`)}[${l.vec ? `${off} / 4u` : off} + i];`);
        });
        outDT.forEach((dt, o) => body.push(`var r${o}: ${vty(dt)};`));
        for (let lane = 0; lane < lanes; lane++) {
          const lines: string[] = [];
          const vals = g.inputs.map((x, i) => {
            const zero = x.dtype === 'float32' ? '0.0' : '0';
            lines.push(
              `let v${i}: ${valueType(x.dtype)} = ${l.used[i] ? (l.vec && !x.scalar ? `q${i}[${lane}]` : `q${i}`) : zero};`,
            );
            return `v${i}`;
          });
          const em = new Emitter(inDT, vals, u.slot(seg(s, 'consts')).at);
          const results = g.outs.map((e) => em.emit(e).v);
          lines.push(...em.lines);
          results.forEach((v, o) => lines.push(l.vec ? `r${o}[${lane}] = ${v};` : `r${o} = ${v};`));
          // A block per lane: the emitter's temporaries repeat their names in each.
          body.push(`{\n    ${lines.join('\n    ')}\n  }`);
        }
        outDT.forEach((_, o) => body.push(`${seg(s, `o${o}`)}[i] = r${o};`));
        fns.push(`fn seg${s}(i: u32) {
  if (i >= ${u.ref(seg(s, 'total'))}${l.vec ? ' / 4u' : ''}) { return; }
  ${body.join('\n  ')}
}`);
      });
      const branches = segs.map((_, s) => {
        const call = `seg${s}((wg - ${u.ref(seg(s, 'start'))}) * ${wgSize}u + lid);`;
        return s + 1 < segs.length ? `if (wg < ${u.ref(seg(s + 1, 'start'))}) { ${call} return; }` : call;
      });
      const code = fns.join('\n');
      return `${paramsDecl(u.words)}
${decl.join('\n')}
${FLOAT_HELPERS}
${opHelpersFor(code)}
${code}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  ${branches.join('\n  ')}
}`;
    },
  };
  const k = rt.program(prog);
  const w = rt.block(k);
  let start = 0;
  const bufs: PooledBuffer[] = [];
  segs.forEach((g, s) => {
    const l = layouts[s];
    w.set(seg(s, 'start'), start).set(seg(s, 'total'), g.total);
    g.inputs.forEach((x, i) => {
      if (l.used[i]) w.set(seg(s, `in${i}`), x.offset);
    });
    w.setConsts(seg(s, 'consts'), infos[s].consts);
    start += l.groups;
    bufs.push(...l.bound);
  });
  for (const g of segs) bufs.push(...g.outBufs);
  rt.dispatch(k, bufs, w.base, start);
}
