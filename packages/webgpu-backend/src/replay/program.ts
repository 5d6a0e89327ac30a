import { BackendError, DType, ReplayProgram, ReplayRecipe, Storage, TypedArray } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import type { GPUStorage } from '../storage';
import { CaptureMismatch, CapturedOp, StepCapture } from './capture';
import { ArgBinder } from './args';
import { RebindOp, rebind } from './rebind';

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
  /** Gives a live storage buffer `b` (the program's) in place of its own, which is released. */
  lend(s: GPUStorage, b: PooledBuffer): void;
  /** A new live storage over buffer `b` (the program's, lent). */
  wrap(dtype: DType, size: number, b: PooledBuffer): GPUStorage;
  /** Bytes and buffers a program holds (0 when it is freed), for memory(). */
  account(p: object, bytes: number, buffers: number): void;
}

type ProgramOp =
  | {
      readonly k: 'dispatch';
      readonly pipeline: GPUComputePipeline;
      readonly bg: GPUBindGroup;
      readonly x: number;
      readonly y: number;
      /** The bind group's entries, rebuilt for other argument buffers and on odd runs (see swapOf). */
      readonly entries: readonly GPUBindGroupEntry[];
      readonly layout: GPUBindGroupLayout;
    }
  | {
      readonly k: 'copy';
      readonly src: GPUBuffer;
      readonly srcOff: number;
      readonly dst: GPUBuffer;
      readonly bytes: number;
      dst1: GPUBuffer;
      /** A static upload into a buffer nothing else in the step writes: needed on the first run of each parity only. */
      once: boolean;
    };

// Probe values for the dynamic constants: float32 bit patterns no kernel parameter holds by
// chance in both dry runs at the same word (shapes and offsets are small integers).
const probe = (run: number, k: number): number =>
  new Float32Array(new Uint32Array([(run === 1 ? 0x3e9a5000 : 0x3f6b3000) + k * 7]).buffer)[0];
const probeData = (t: TypedArray, run: number): TypedArray => {
  const a = new (t.constructor as new (n: number) => TypedArray)(t.length);
  a.fill(run);
  return a;
};

const bytesOf = (size: number): number => size * 4;
const NO_SHAPE: readonly number[] = [];
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
    const same = (x: readonly PooledBuffer[], y: readonly PooledBuffer[]) =>
      x.length === y.length && x.every((v, i) => v === y[i]);
    if (b.cap.allocs.length !== a.cap.allocs.length || !same(a.outBufs, b.outBufs) || !same(a.adoptBufs, b.adoptBufs))
      throw new CaptureMismatch('dry runs differ');
    const p = new Program(host, recipe, inBufs, [...owned], a, b);
    p.reaccount();
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
  /** The dynamic part of the mirror, [lo, hi), staged into the host buffer per run. */
  private readonly dyn: Uint8Array;
  /** Bind groups per op, for even and odd runs (see swapOf). */
  private readonly bgs: GPUBindGroup[][];
  /**
   * State the step reads and replaces (parameters, momenta, moments: adopt targets that are
   * also fixed inputs) is double-buffered instead of copied back: per such target, its buffer
   * as recorded (q) and the program's buffer the step writes its new value into (p) trade
   * places after every run; runs alternate between the recorded bindings (parity 0) and the
   * same bindings with every p and q exchanged (parity 1), which is the same step renamed.
   */
  private readonly swapOf: number[];
  private readonly swapP: PooledBuffer[] = [];
  private readonly swapQ: PooledBuffer[] = [];
  private readonly partner = new Map<GPUBuffer, GPUBuffer>();
  private readonly fixedBufs1: (PooledBuffer | null)[];
  private parity = 0;
  /** Per adopt target, the program buffer lent to it (see the constructor), or null. */
  private readonly lent: (PooledBuffer | null)[];
  /** Lent buffers a live storage holds now (the others came back: the storage was freed). */
  private readonly lentOut = new Set<PooledBuffer>();
  /** Per lent buffer's target, the storage it was last given to (the target, or a rebound one). */
  private readonly holder: (GPUStorage | null)[] = [];
  /** Binds argument buffers in place once seen twice (null: the step writes an input buffer). */
  private readonly args: ArgBinder | null;
  /**
   * Per output, the program buffer the step writes it into, lent to the returned storage
   * instead of copied into a new one (null: copied). A holder still alive at the next run
   * is moved to a buffer of its own first (one copy, as before), so its value stays.
   */
  private readonly outLent: (PooledBuffer | null)[];
  private readonly outHolder: (GPUStorage | null)[];
  /** Runs so far (static uploads are needed by the first run of each parity only). */
  private runs = 0;
  /** The dynamic bytes the last run staged (null before the first run). */
  private staged: Uint8Array | null = null;
  /** The runtime batch the last run was encoded into (its buffers must outlive that batch). */
  private lastBatch = -1;
  private disposed = false;

  constructor(
    private readonly h: ProgramHost,
    private readonly recipe: ReplayRecipe,
    private readonly inBufs: readonly PooledBuffer[],
    private readonly owned: readonly PooledBuffer[],
    a: DryRun,
    b: DryRun,
  ) {
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
      if (!known.has(x) && x.id >= 0)
        throw new CaptureMismatch('the step binds a buffer that is not its own, an argument or fixed state');
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
          if (b.data[k] !== o2.src || o1.bytes.byteLength !== o2.bytes.byteLength)
            throw new CaptureMismatch('dynamic data lands differently in the two dry runs');
          dynData[j] = k;
        } else {
          if (!o1.bytes.every((v, i) => v === o2.bytes[i]) || o1.bytes.byteLength !== o2.bytes.byteLength)
            throw new CaptureMismatch('an upload depends on dynamic data it does not pass on unchanged');
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
    this.host = rt.device.createBuffer({
      size,
      usage: 0x40 /* UNIFORM */ | 0x08 /* COPY_DST */ | 0x04 /* COPY_SRC */,
      label: 'surf jit program',
    });

    // Buffers the step writes (kernel outputs, results) and how many uploads land in each: a
    // static upload into an owned buffer nothing else writes holds from one run to the next.
    const written = new Set<PooledBuffer>([...a.outBufs, ...a.adoptBufs]);
    const uploads = new Map<PooledBuffer, number>();
    const dispatched = new Set<PooledBuffer>();
    for (const o of ops1) {
      if (o.k === 'dispatch') for (let i = o.kernel.reads; i < o.bufs.length; i++) dispatched.add(o.bufs[i]);
      else uploads.set(o.buf, (uploads.get(o.buf) ?? 0) + 1);
    }
    for (const x of dispatched) written.add(x);
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
        const once = dynData[j] < 0 && ownedSet.has(o1.buf) && !written.has(o1.buf) && uploads.get(o1.buf) === 1;
        if (o1.bytes.byteLength)
          this.ops.push({
            k: 'copy',
            src: this.host,
            srcOff: at,
            dst: o1.buf.buffer,
            bytes: o1.bytes.byteLength,
            dst1: o1.buf.buffer,
            once,
          });
        return;
      }
      if (
        o2.k !== 'dispatch' ||
        o1.kernel.pipeline !== o2.kernel.pipeline ||
        o1.x !== o2.x ||
        o1.y !== o2.y ||
        o1.bufs.length !== o2.bufs.length ||
        o1.bufs.some((x, i) => x !== o2.bufs[i])
      ) {
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
        if (k < 0)
          throw new CaptureMismatch('a kernel parameter depends on a dynamic value in a way the program cannot redo');
        this.constAt[k].push(w0 + w);
        lo = Math.min(lo, at);
        hi = Math.max(hi, at + o1.kernel.paramBytes);
      }
      // The kernel on a layout without dynamic offsets: each op's parameter block sits at its
      // own fixed offset of the host buffer.
      const fk = rt.fixedKernel(o1.kernel);
      let key = `${o1.kernel.layoutKey}:${at}:${o1.kernel.paramBytes}`;
      for (const x of o1.bufs) key += `,${x.id}`;
      const entries: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: this.host, offset: at, size: o1.kernel.paramBytes } },
      ];
      o1.bufs.forEach((x, i) => entries.push({ binding: i + 1, resource: { buffer: x.buffer } }));
      let bg = bindGroups.get(key);
      if (!bg) {
        bg = rt.createBindGroup({ layout: fk.layout, entries, label: 'surf jit program' });
        bindGroups.set(key, bg);
      }
      this.ops.push({ k: 'dispatch', pipeline: fk.pipeline, bg, x: o1.x, y: o1.y, entries, layout: fk.layout });
      dispatches++;
    });
    this.lo = lo === Infinity ? 0 : lo;
    this.hi = lo === Infinity ? 0 : hi;
    this.dyn = new Uint8Array(this.mirror, this.lo, this.hi - this.lo);
    const even = this.ops.map((o) => (o.k === 'dispatch' ? o.bg : (null as unknown as GPUBindGroup)));
    this.bgs = [even, even];
    this.dispatches = dispatches;
    for (const x of [...a.outBufs, ...a.adoptBufs])
      if (!ownedSet.has(x)) throw new CaptureMismatch('a result is not in a buffer of the step');
    this.outBufs = a.outBufs;
    this.adoptBufs = a.adoptBufs;
    this.outLike = a.outLike;
    const fixedSet = new Set(recipe.fixed);
    const partnerOf = new Map<PooledBuffer, PooledBuffer>();
    this.swapOf = recipe.adoptTargets.map((t, i) => {
      const q = (t as GPUStorage).buf;
      const pb = a.adoptBufs[i];
      if (!q || !fixedSet.has(t) || q.bytes !== pb.bytes || partnerOf.has(q) || partnerOf.has(pb)) return -1;
      partnerOf.set(q, pb);
      partnerOf.set(pb, q);
      this.partner.set(q.buffer, pb.buffer);
      this.partner.set(pb.buffer, q.buffer);
      this.swapP.push(pb);
      this.swapQ.push(q);
      return this.swapP.length - 1;
    });
    this.fixedBufs1 = this.fixedBufs.map((b) => (b ? (partnerOf.get(b) ?? b) : null));
    // Results the step only writes (gradients after zeroGrad, not read by the step) are lent:
    // the target storage takes the program's buffer, which each run then writes in place,
    // instead of a copy into the target's own buffer after every run.
    const results = [...a.outBufs, ...a.adoptBufs];
    this.lent = recipe.adoptTargets.map((t, i) => {
      const pb = a.adoptBufs[i];
      const q = (t as GPUStorage).buf;
      if (
        this.swapOf[i] >= 0 ||
        !q ||
        fixedSet.has(t) ||
        partnerOf.has(pb) ||
        pb.lender ||
        results.indexOf(pb) !== results.lastIndexOf(pb)
      )
        return null;
      h.lend(t as GPUStorage, pb);
      this.holder[i] = t as GPUStorage;
      pb.lender = this;
      this.lentOut.add(pb);
      return pb;
    });
    for (const op of this.ops) if (op.k === 'copy') op.dst1 = this.partner.get(op.dst) ?? op.dst;
    // The odd runs' bind groups are made now, with the program's others.
    if (this.swapP.length) this.bgs[1] = this.oddBindGroups();
    // Outputs only the step's dispatches write, each in a buffer of its own, are lent.
    this.outLent = a.outBufs.map((pb) =>
      dispatched.has(pb) &&
      !uploads.has(pb) &&
      !partnerOf.has(pb) &&
      !pb.lender &&
      results.indexOf(pb) === results.lastIndexOf(pb)
        ? pb
        : null,
    );
    for (const pb of this.outLent) if (pb) pb.lender = this;
    this.outHolder = a.outBufs.map(() => null);
    // Arguments can be bound in place when the step only reads its input buffers.
    const argsRead = inBufs.every((x) => !uploads.has(x) && !written.has(x) && !partnerOf.has(x));
    const programBufs = new Set<GPUBuffer>([...owned, ...inBufs, ...this.swapQ].map((x) => x.buffer));
    for (const fb of [...this.fixedBufs, ...this.fixedBufs1]) if (fb) programBufs.add(fb.buffer);
    this.args =
      argsRead && inBufs.length
        ? new ArgBinder(
            (layout, entries) => rt.createBindGroup({ layout, entries, label: 'surf jit program' }),
            this.rebindOps(),
            inBufs,
            programBufs,
          )
        : null;
    rt.device.queue.writeBuffer(this.host, 0, this.mirror, 0, size);
    this.buffers = owned.length + inBufs.length + 1;
    this.bytes = size + [...owned, ...inBufs].reduce((n, x) => n + x.bytes, 0);
  }

  /** Reports the bytes and buffers the program holds that no live storage counts (memory()). */
  reaccount(): void {
    let bytes = this.bytes;
    for (const b of this.lentOut) bytes -= b.bytes;
    this.h.account(this, bytes, this.buffers - this.lentOut.size);
  }

  /** A lent buffer's storage was freed: the buffer is the program's alone again. */
  returned(b: PooledBuffer): void {
    this.lentOut.delete(b);
    if (!this.disposed) this.reaccount();
  }

  ready(): boolean {
    if (this.disposed || this.h.rt.destroyed) return false;
    const fixed = this.recipe.fixed;
    const want = this.parity ? this.fixedBufs1 : this.fixedBufs;
    for (let i = 0; i < fixed.length; i++) if ((fixed[i] as GPUStorage).buf !== want[i]) return false;
    return true;
  }

  run(
    inputs: readonly Storage[],
    consts: readonly number[],
    data: readonly TypedArray[],
    rebindable: readonly boolean[],
  ): { outputs: Storage[]; rebound: (Storage | null)[] } {
    if (!this.ready())
      throw new BackendError('jit: a compiled replay ran after the state it binds was replaced or freed');
    const h = this.h;
    const rt = h.rt;
    rt.check('jit replay');
    for (let k = 0; k < this.constAt.length; k++) for (const w of this.constAt[k]) this.f32[w] = consts[k];
    for (const d of this.dataAt) {
      const v = data[d.k];
      if (v.byteLength !== d.bytes)
        throw new BackendError(
          `jit replay: dynamic data ${d.k} has ${v.byteLength} bytes; the record uploaded ${d.bytes}`,
        );
      this.u8.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), d.off);
    }
    // The run joins the runtime's open batch (submitted at the next readback, sync, flush or
    // opsPerSubmit dispatches), its dynamic values copied into the host buffer in the stream
    // just before its passes, so replays queued together each see their own. Values too large
    // to stage go by writeBuffer, which lands before the whole batch: that run submits alone.
    let alone = false;
    // Values equal to the last run's are in the host buffer already (only this program writes
    // it, and stream order puts the last staging before this run): a fixed learning rate
    // stages nothing after the first run.
    if (this.hi > this.lo && !this.staged?.every((v, i) => v === this.dyn[i])) {
      this.staged = this.dyn.slice();
      if (!rt.stageInto(this.host, this.lo, this.dyn)) {
        rt.submit();
        rt.device.queue.writeBuffer(this.host, this.lo, this.mirror, this.lo, this.hi - this.lo);
        alone = true;
      }
    }
    // Opens the batch's error scopes (after any submit above), so a GPU error names the replay.
    rt.begin('jit replay', NO_SHAPE);
    const enc = rt.commandEncoder();
    const batch = rt.batch;
    this.lastBatch = batch;
    // Arguments are bound in place once their set of buffers comes back (ArgBinder), else
    // copied into the program's own buffers in the stream.
    const rins = this.recipe.inputs;
    const parity = this.parity;
    const argBufs = inputs.map((s) => h.bufferOf('jit replay', s));
    // Read by this batch: the pool must not hand them to an upload (writeBuffer lands first).
    for (const b of argBufs) b.lastBatch = batch;
    const direct = this.args?.lookup(argBufs, parity) ?? null;
    if (!direct) {
      for (let i = 0; i < argBufs.length; i++) {
        const n = bytesOf(rins[i].size);
        if (n) enc.copyBufferToBuffer(argBufs[i].buffer, 0, this.inBufs[i].buffer, 0, n);
      }
    }
    // A result the caller still holds from the last run moves to a buffer of its own before
    // this run writes the program's.
    for (let i = 0; i < this.outLent.length; i++) {
      const lb = this.outLent[i];
      if (!lb || !this.lentOut.has(lb)) continue;
      const cur = this.outHolder[i]!;
      const fresh = h.newStorage(cur.dtype, cur.size);
      h.forget(fresh);
      const nb = fresh.buf!;
      nb.lastBatch = batch;
      const n = bytesOf(cur.size);
      if (n) enc.copyBufferToBuffer(lb.buffer, 0, nb.buffer, 0, n);
      // lend() releases the holder's old buffer: lb comes back to this program (returned()).
      h.lend(cur, nb);
    }
    for (const fb of this.fixedBufs) if (fb) fb.lastBatch = batch;
    for (const pb of this.swapP) pb.lastBatch = batch;
    let pass: GPUComputePassEncoder | null = null;
    let pipe: GPUComputePipeline | null = null;
    const ops = this.ops;
    const bgs = this.bgs[parity];
    for (let j = 0; j < ops.length; j++) {
      const op = ops[j];
      if (op.k === 'dispatch') {
        if (!pass) {
          pass = rt.beginPass(enc);
          pipe = null;
        }
        if (pipe !== op.pipeline) pass.setPipeline((pipe = op.pipeline));
        pass.setBindGroup(0, direct?.[j] ?? bgs[j]);
        pass.dispatchWorkgroups(op.x, op.y);
      } else {
        if (op.once && this.runs >= 2) continue;
        if (pass) {
          pass.end();
          pass = null;
        }
        enc.copyBufferToBuffer(op.src, op.srcOff, parity ? op.dst1 : op.dst, 0, op.bytes);
      }
    }
    pass?.end();
    const targets = this.recipe.adoptTargets;
    let relent = false;
    const rebound: (Storage | null)[] = targets.map((t, i) => {
      const d = t as GPUStorage;
      const n = bytesOf(t.size);
      const w = this.swapOf[i];
      const lb = this.lent[i];
      if (lb) {
        lb.lastBatch = batch;
        // Still lent: its one holder sees this run's value in place.
        if (this.lentOut.has(lb)) return null;
        // It came back (the holder was freed): a new storage takes it (no copy), or the
        // holder that now has a buffer of its own gets a copy.
        const cur = this.holder[i]!;
        if (cur.buf) {
          cur.buf.lastBatch = batch;
          if (n) enc.copyBufferToBuffer(lb.buffer, 0, cur.buf.buffer, 0, n);
          return null;
        }
        if (!rebindable[i]) return null;
        const s = h.wrap(t.dtype, t.size, lb);
        this.holder[i] = s;
        this.lentOut.add(lb);
        relent = true;
        return s;
      }
      if (w >= 0) {
        // The new value is in the pair's other buffer: the target takes it (ready() checked
        // that the target still holds this parity's buffer).
        d.buf = parity ? this.swapQ[w] : this.swapP[w];
        return null;
      }
      if (d.buf) {
        d.buf.lastBatch = batch;
        if (n) enc.copyBufferToBuffer(this.adoptBuf(i, parity).buffer, 0, d.buf.buffer, 0, n);
        return null;
      }
      if (!rebindable[i]) return null;
      const s = h.newStorage(t.dtype, t.size);
      s.buf!.lastBatch = batch;
      if (n) enc.copyBufferToBuffer(this.adoptBuf(i, parity).buffer, 0, s.buf!.buffer, 0, n);
      return s;
    });
    const outputs = this.outBufs.map((b, i) => {
      const like = this.outLike[i];
      const lb = this.outLent[i];
      if (lb) {
        lb.lastBatch = batch;
        const s = h.wrap(like.dtype, like.size, lb);
        this.outHolder[i] = s;
        this.lentOut.add(lb);
        relent = true;
        return s;
      }
      const s = h.newStorage(like.dtype, like.size);
      s.buf!.lastBatch = batch;
      const n = bytesOf(like.size);
      if (n) enc.copyBufferToBuffer(b.buffer, 0, s.buf!.buffer, 0, n);
      return s;
    });
    if (relent) this.reaccount();
    if (this.swapP.length) this.parity ^= 1;
    this.runs++;
    rt.counters.dispatches += this.dispatches;
    rt.counters.replays++;
    if (alone) rt.submit();
    else rt.addDispatches(this.dispatches);
    return { outputs, rebound };
  }

  /** A program buffer at a parity: the recorded one, or its partner on odd runs. */
  private adoptBuf(i: number, parity: number): PooledBuffer {
    const b = this.adoptBufs[i];
    if (!parity) return b;
    const k = this.swapP.indexOf(b);
    return k >= 0 ? this.swapQ[k] : b;
  }

  /** A dispatch's bind group entries at a parity: on odd runs every state pair's buffer is the other. */
  private entriesAt(op: ProgramOp & { k: 'dispatch' }, parity: number): readonly GPUBindGroupEntry[] {
    if (!parity) return op.entries;
    const bufOf = (e: GPUBindGroupEntry) => (e.resource as GPUBufferBinding).buffer;
    if (!op.entries.some((e, n) => n > 0 && this.partner.has(bufOf(e)))) return op.entries;
    return op.entries.map((e, n) =>
      n === 0 ? e : { binding: e.binding, resource: { buffer: this.partner.get(bufOf(e)) ?? bufOf(e) } },
    );
  }

  /** The bind groups of odd runs: every op that binds a state pair's buffer gets the other. */
  private oddBindGroups(): GPUBindGroup[] {
    const odd = rebind(this.rebindOps(), 0, this.partner, (layout, entries) =>
      this.h.rt.createBindGroup({ layout, entries, label: 'surf jit program' }),
    );
    return this.ops.map((op, j) => (op.k === 'dispatch' ? (odd[j] ?? op.bg) : (null as unknown as GPUBindGroup)));
  }

  /** The dispatches as rebind() sees them (null for copies). */
  private rebindOps(): (RebindOp | null)[] {
    return this.ops.map((op) =>
      op.k === 'dispatch' ? { layout: op.layout, entriesAt: (par: number) => this.entriesAt(op, par) } : null,
    );
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const rt = this.h.rt;
    // A run still in the open batch uses these buffers: submit it before letting them go.
    if (!rt.destroyed && !rt.lostInfo && this.lastBatch === rt.batch) rt.submit();
    // On odd runs the program's half of each state pair is the recorded target buffer.
    const mine = this.parity
      ? this.owned.map((b) => {
          const k = this.swapP.indexOf(b);
          return k >= 0 ? this.swapQ[k] : b;
        })
      : this.owned;
    // Lent buffers a storage still holds stay with it (it frees them to the pool as usual).
    for (const b of [...this.lent, ...this.outLent]) if (b) b.lender = null;
    if (!rt.destroyed) for (const b of [...mine, ...this.inBufs]) if (!this.lentOut.has(b)) rt.release(b);
    this.host.destroy();
    this.h.account(this, 0, 0);
  }
}
