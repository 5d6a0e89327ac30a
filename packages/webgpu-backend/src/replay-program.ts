import { BackendError, DType, ReplayProgram, ReplayRecipe, Storage, TypedArray } from '@surf/core';
import type { Runtime } from './runtime';
import type { PooledBuffer } from './pool';
import type { GPUStorage } from './storage';
import { CaptureMismatch, CapturedOp, StepCapture } from './replay-capture';

/** What the backend lends a compiled replay. */
export interface ProgramHost {
  readonly rt: Runtime;
  /** A new live storage of the backend (a pooled buffer the caller owns). */
  newStorage(dtype: DType, size: number): GPUStorage;
  /** The live buffer of a storage of this backend (a clear error otherwise). */
  bufferOf(op: string, s: Storage): PooledBuffer;
  /** Collects the storages the backend makes until called with null. */
  watch(list: GPUStorage[] | null): void;
  /** Drops a storage from the backend's books, keeping its buffer (now the program's). */
  forget(s: GPUStorage): void;
  /** Bytes and buffers a program holds (0 when it is freed), for memory(). */
  account(p: object, bytes: number, buffers: number): void;
}

type ProgramOp =
  | { readonly k: 'dispatch'; readonly pipeline: GPUComputePipeline; readonly bg: GPUBindGroup; readonly offsets: readonly number[]; readonly x: number; readonly y: number }
  | { readonly k: 'copy'; readonly src: GPUBuffer; readonly srcOff: number; readonly dst: GPUBuffer; readonly bytes: number };

// Probe values for the dynamic constants: float32 bit patterns no kernel parameter holds by
// chance in both dry runs at the same word (shapes and offsets are small integers).
const probe = (run: number, k: number): number => new Float32Array(new Uint32Array([(run === 1 ? 0x3e9a5000 : 0x3f6b3000) + k * 7]).buffer)[0];
const probeData = (t: TypedArray, run: number): TypedArray => {
  const a = new (t.constructor as new (n: number) => TypedArray)(t.length);
  a.fill(run);
  return a;
};

const bytesOf = (size: number): number => size * 4;

/**
 * Compiles a recorded step (Backend.compileReplay on WebGPU): two dry runs of the step with the
 * runtime capturing instead of encoding, probe values for its dynamic constants and data, and
 * the same buffers in both. Whatever differs between the runs must be one of those values, at a
 * parameter word (a constant) or as a whole upload (data); anything else, and any binding of a
 * buffer that is neither the program's, an argument, fixed state nor the runtime's own, makes
 * this return null (jit then re-issues the calls through the contract).
 */
export function compileProgram(host: ProgramHost, recipe: ReplayRecipe): ReplayProgram | null {
  if (recipe.constDTypes.some((d) => d !== 'float32')) return null;
  const rt = host.rt;
  const ins = recipe.inputs.map((s) => host.newStorage(s.dtype, s.size));
  for (const s of ins) host.forget(s);
  const inBufs = ins.map((s) => s.buf!);
  let owned = new Set<PooledBuffer>();
  const foreign: PooledBuffer[] = [];
  const dry = (run: number, forced: readonly PooledBuffer[] | null) => {
    const cap = new StepCapture(rt, forced);
    const made: GPUStorage[] = [];
    const consts = recipe.constDTypes.map((_, k) => probe(run, k));
    const data = recipe.dataTemplates.map((t) => probeData(t, run));
    host.watch(made);
    rt.capture = cap;
    try {
      const res = recipe.issue(ins, consts, data);
      const outBufs = res.outputs.map((s) => host.bufferOf('jit compile', s));
      const adoptBufs = res.adopt.map((s) => host.bufferOf('jit compile', s));
      const outLike = res.outputs.map((s) => ({ dtype: s.dtype, size: s.size }));
      return { cap, data, outBufs, adoptBufs, outLike };
    } finally {
      rt.capture = null;
      host.watch(null);
      if (!forced) owned = cap.owned();
      foreign.push(...cap.foreign);
      // The dry run's storages are shells: their buffers are the program's (or back in the pool).
      for (const s of made) host.forget(s);
    }
  };
  const giveBack = (bufs: Iterable<PooledBuffer>) => {
    if (!rt.destroyed) for (const b of bufs) rt.release(b);
  };
  try {
    const a = dry(1, null);
    const b = dry(2, a.cap.allocs);
    if (foreign.length) throw new CaptureMismatch('the step frees a buffer it did not make');
    const same = (x: readonly PooledBuffer[], y: readonly PooledBuffer[]) => x.length === y.length && x.every((v, i) => v === y[i]);
    if (b.cap.allocs.length !== a.cap.allocs.length || !same(a.outBufs, b.outBufs) || !same(a.adoptBufs, b.adoptBufs)) throw new CaptureMismatch('dry runs differ');
    const p = new Program(host, recipe, inBufs, [...owned], a, b);
    host.account(p, p.bytes, p.buffers);
    return p;
  } catch (e) {
    giveBack(owned);
    giveBack(inBufs);
    if (e instanceof CaptureMismatch) return null;
    throw e;
  } finally {
    giveBack(foreign);
  }
}

interface DryRun {
  readonly cap: StepCapture;
  readonly data: readonly TypedArray[];
  readonly outBufs: readonly PooledBuffer[];
  readonly adoptBufs: readonly PooledBuffer[];
  readonly outLike: readonly { dtype: DType; size: number }[];
}

class Program implements ReplayProgram {
  readonly bytes: number;
  readonly buffers: number;
  private readonly ops: ProgramOp[] = [];
  private readonly dispatches: number;
  private readonly host: GPUBuffer;
  private readonly mirror: ArrayBuffer;
  private readonly f32: Float32Array;
  private readonly u8: Uint8Array;
  /** Per dynamic constant, the float words of the mirror that hold it. */
  private readonly constAt: number[][];
  /** Per dynamic data upload: the value's index and its byte offset in the mirror. */
  private readonly dataAt: { k: number; off: number; bytes: number }[] = [];
  /** The mirror's bytes written per run (one writeBuffer): [lo, hi). */
  private readonly lo: number;
  private readonly hi: number;
  private readonly fixedBufs: (PooledBuffer | null)[];
  private readonly outBufs: readonly PooledBuffer[];
  private readonly adoptBufs: readonly PooledBuffer[];
  private readonly outLike: readonly { dtype: DType; size: number }[];
  private disposed = false;

  constructor(private readonly h: ProgramHost, private readonly recipe: ReplayRecipe, private readonly inBufs: readonly PooledBuffer[], private readonly owned: readonly PooledBuffer[], a: DryRun, b: DryRun) {
    const rt = h.rt;
    const ops1 = a.cap.ops;
    const ops2 = b.cap.ops;
    if (ops1.length !== ops2.length) throw new CaptureMismatch('dry runs differ in length');
    this.fixedBufs = recipe.fixed.map((s) => (s as GPUStorage).buf ?? null);
    const ownedSet = new Set<PooledBuffer>(owned);
    const known = new Set<PooledBuffer>([...owned, ...inBufs]);
    for (const fb of this.fixedBufs) if (fb) known.add(fb);
    const checkBuf = (x: PooledBuffer) => {
      // id < 0: the runtime's own persistent buffers (the one-dispatch reductions' scratch).
      if (!known.has(x) && x.id >= 0) throw new CaptureMismatch('the step binds a buffer that is not its own, an argument or fixed state');
    };

    // Layout of the host buffer: static uploads, then parameter blocks, then dynamic data.
    const align = rt.device.limits.minUniformBufferOffsetAlignment;
    const up = (n: number, m: number) => Math.ceil(n / m) * m;
    let size = 0;
    const place: number[] = new Array(ops1.length);
    const dynData: number[] = new Array(ops1.length).fill(-1);
    ops1.forEach((o1, j) => {
      const o2 = ops2[j];
      if (o1.k !== o2.k) throw new CaptureMismatch('dry runs differ');
      if (o1.k === 'upload' && o2.k === 'upload') {
        checkBuf(o1.buf);
        if (o1.buf !== o2.buf) throw new CaptureMismatch('dry runs upload into different buffers');
        const k = a.data.indexOf(o1.src as TypedArray);
        if (k >= 0) {
          if (b.data[k] !== o2.src || o1.bytes.byteLength !== o2.bytes.byteLength) throw new CaptureMismatch('dynamic data lands differently in the two dry runs');
          dynData[j] = k;
        } else {
          if (!o1.bytes.every((v, i) => v === o2.bytes[i]) || o1.bytes.byteLength !== o2.bytes.byteLength) throw new CaptureMismatch('an upload depends on dynamic data it does not pass on unchanged');
          place[j] = size;
          size = up(size + o1.bytes.byteLength, 16);
        }
      }
    });
    size = up(size, align);
    ops1.forEach((o1, j) => {
      if (o1.k !== 'dispatch') return;
      place[j] = size;
      size = up(size + o1.kernel.paramBytes, align);
    });
    ops1.forEach((o1, j) => {
      if (dynData[j] < 0) return;
      place[j] = size;
      size = up(size + (o1 as { bytes: Uint8Array }).bytes.byteLength, 16);
    });
    size = Math.max(size, 16);
    this.mirror = new ArrayBuffer(size);
    this.f32 = new Float32Array(this.mirror);
    this.u8 = new Uint8Array(this.mirror);
    const u32 = new Uint32Array(this.mirror);
    this.host = rt.device.createBuffer({ size, usage: 0x40 /* UNIFORM */ | 0x08 /* COPY_DST */ | 0x04 /* COPY_SRC */, label: 'surf jit program' });

    const p1 = recipe.constDTypes.map((_, k) => new Uint32Array(new Float32Array([probe(1, k)]).buffer)[0]);
    const p2 = recipe.constDTypes.map((_, k) => new Uint32Array(new Float32Array([probe(2, k)]).buffer)[0]);
    this.constAt = recipe.constDTypes.map(() => []);
    let lo = Infinity;
    let hi = dynData.some((k) => k >= 0) ? size : 0;
    const bindGroups = new Map<string, GPUBindGroup>();
    let dispatches = 0;
    ops1.forEach((o1, j) => {
      const o2 = ops2[j];
      const at = place[j];
      if (o1.k === 'upload') {
        if (dynData[j] >= 0) {
          this.dataAt.push({ k: dynData[j], off: at, bytes: o1.bytes.byteLength });
          lo = Math.min(lo, at);
        } else this.u8.set(o1.bytes, at);
        if (o1.bytes.byteLength) this.ops.push({ k: 'copy', src: this.host, srcOff: at, dst: o1.buf.buffer, bytes: o1.bytes.byteLength });
        return;
      }
      if (o2.k !== 'dispatch' || o1.kernel.pipeline !== o2.kernel.pipeline || o1.x !== o2.x || o1.y !== o2.y || o1.bufs.length !== o2.bufs.length || o1.bufs.some((x, i) => x !== o2.bufs[i])) {
        throw new CaptureMismatch('dry runs dispatch differently');
      }
      o1.bufs.forEach(checkBuf);
      const w0 = at >> 2;
      for (let w = 0; w < o1.params.length; w++) {
        const v1 = o1.params[w];
        const v2 = o2.params[w];
        u32[w0 + w] = v1;
        if (v1 === v2) continue;
        const k = p1.findIndex((p, i) => p === v1 && p2[i] === v2);
        if (k < 0) throw new CaptureMismatch('a kernel parameter depends on a dynamic value in a way the program cannot redo');
        this.constAt[k].push(w0 + w);
        lo = Math.min(lo, at);
        hi = Math.max(hi, at + o1.kernel.paramBytes);
      }
      let key = `${o1.kernel.layoutKey}:${o1.kernel.paramBytes}`;
      for (const x of o1.bufs) key += `,${x.id}`;
      let bg = bindGroups.get(key);
      if (!bg) {
        const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: this.host, offset: 0, size: o1.kernel.paramBytes } }];
        o1.bufs.forEach((x, i) => entries.push({ binding: i + 1, resource: { buffer: x.buffer } }));
        bg = rt.createBindGroup({ layout: o1.kernel.layout, entries, label: 'surf jit program' });
        bindGroups.set(key, bg);
      }
      this.ops.push({ k: 'dispatch', pipeline: o1.kernel.pipeline, bg, offsets: [at], x: o1.x, y: o1.y });
      dispatches++;
    });
    this.lo = lo === Infinity ? 0 : lo;
    this.hi = lo === Infinity ? 0 : hi;
    this.dispatches = dispatches;
    for (const x of [...a.outBufs, ...a.adoptBufs]) if (!ownedSet.has(x)) throw new CaptureMismatch('a result is not in a buffer of the step');
    this.outBufs = a.outBufs;
    this.adoptBufs = a.adoptBufs;
    this.outLike = a.outLike;
    rt.device.queue.writeBuffer(this.host, 0, this.mirror, 0, size);
    this.buffers = owned.length + inBufs.length + 1;
    this.bytes = size + [...owned, ...inBufs].reduce((n, x) => n + x.bytes, 0);
  }

  ready(): boolean {
    if (this.disposed || this.h.rt.destroyed) return false;
    const fixed = this.recipe.fixed;
    for (let i = 0; i < fixed.length; i++) if ((fixed[i] as GPUStorage).buf !== this.fixedBufs[i]) return false;
    return true;
  }

  run(inputs: readonly Storage[], consts: readonly number[], data: readonly TypedArray[], rebindable: readonly boolean[]): { outputs: Storage[]; rebound: (Storage | null)[] } {
    if (!this.ready()) throw new BackendError('jit: a compiled replay ran after the state it binds was replaced or freed');
    const h = this.h;
    const rt = h.rt;
    rt.check('jit replay');
    for (let k = 0; k < this.constAt.length; k++) for (const w of this.constAt[k]) this.f32[w] = consts[k];
    for (const d of this.dataAt) {
      const v = data[d.k];
      if (v.byteLength !== d.bytes) throw new BackendError(`jit replay: dynamic data ${d.k} has ${v.byteLength} bytes; the record uploaded ${d.bytes}`);
      this.u8.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), d.off);
    }
    if (this.hi > this.lo) rt.device.queue.writeBuffer(this.host, this.lo, this.mirror, this.lo, this.hi - this.lo);
    const enc = rt.commandEncoder();
    const rins = this.recipe.inputs;
    for (let i = 0; i < inputs.length; i++) {
      const n = bytesOf(rins[i].size);
      if (n) enc.copyBufferToBuffer(h.bufferOf('jit replay', inputs[i]).buffer, 0, this.inBufs[i].buffer, 0, n);
    }
    let pass: GPUComputePassEncoder | null = null;
    let pipe: GPUComputePipeline | null = null;
    for (const op of this.ops) {
      if (op.k === 'dispatch') {
        if (!pass) {
          pass = rt.beginPass(enc);
          pipe = null;
        }
        if (pipe !== op.pipeline) pass.setPipeline((pipe = op.pipeline));
        pass.setBindGroup(0, op.bg, op.offsets);
        pass.dispatchWorkgroups(op.x, op.y);
      } else {
        if (pass) {
          pass.end();
          pass = null;
        }
        enc.copyBufferToBuffer(op.src, op.srcOff, op.dst, 0, op.bytes);
      }
    }
    pass?.end();
    const targets = this.recipe.adoptTargets;
    const rebound: (Storage | null)[] = targets.map((t, i) => {
      const d = t as GPUStorage;
      const n = bytesOf(t.size);
      if (d.buf) {
        if (n) enc.copyBufferToBuffer(this.adoptBufs[i].buffer, 0, d.buf.buffer, 0, n);
        return null;
      }
      if (!rebindable[i]) return null;
      const s = h.newStorage(t.dtype, t.size);
      if (n) enc.copyBufferToBuffer(this.adoptBufs[i].buffer, 0, s.buf!.buffer, 0, n);
      return s;
    });
    const outputs = this.outBufs.map((b, i) => {
      const like = this.outLike[i];
      const s = h.newStorage(like.dtype, like.size);
      const n = bytesOf(like.size);
      if (n) enc.copyBufferToBuffer(b.buffer, 0, s.buf!.buffer, 0, n);
      return s;
    });
    rt.counters.dispatches += this.dispatches;
    rt.counters.replays++;
    rt.submit();
    return { outputs, rebound };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const rt = this.h.rt;
    if (!rt.destroyed) for (const b of [...this.owned, ...this.inBufs]) rt.release(b);
    this.host.destroy();
    this.h.account(this, 0, 0);
  }
}
