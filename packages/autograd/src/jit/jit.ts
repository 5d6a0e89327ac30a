import { Backend, E, NDArray, Storage, ValueError, withDefaults } from '@surf/core';
import { getBackend } from '../context';
import { isGradEnabled } from '../grad-mode';
import { Tensor } from '../tensor';
import { flushPending } from '../fusion/pending';
import { JitError } from './errors';
import { Plan, buildPlan } from './plan';
import { releasePlan, replay } from './replay';
import { Recorder, Trace } from './trace';
import { isRecording } from './hooks';
import { Guards, HolderGuard, checkGuards, holds, sameFields, stateEpoch } from './guards';
import { fieldsHolding } from './owners';

export interface JitOptions {
  /** Signatures kept (least recently used dropped first); default 8. */
  maxRecords?: number;
  /**
   * Whether the outputs of a call stay the caller's after the next call (default false: the
   * next call of the same jitted function frees them, as a CUDA graph reuses its static
   * outputs, so a loop that drops its losses stays flat; clone() one to keep it).
   */
  keepOutputs?: boolean;
}

export interface JitStats {
  /** Calls run eagerly while recording (two per signature when the function is steady). */
  recorded: number;
  /** Calls answered by a replay. */
  replayed: number;
  /** Signatures currently cached. */
  signatures: number;
  /** Records currently cached: one per signature and combination of guarded flags (train/eval). */
  records: number;
}

export type Jitted<A extends unknown[], R> = ((...args: A) => R) & {
  /** Drops every record (guards catch mode flags and replaced tensors; a reassigned closure variable needs this). */
  reset(): void;
  readonly stats: JitStats;
};

interface Record_ {
  /** The previous recorded call of this signature, and which call of the function it was. */
  prev: { trace: Trace; inputs: Storage[]; call: number; held: HolderGuard[] } | null;
  plan: Plan | null;
  /** The outputs' structure, with numbered holes for tensors. */
  outTemplate: unknown;
  outShapes: number[][];
  /** Consecutive recorded calls that did not line up. */
  misses: number;
  /** What the plan's replay checks first (guards.ts); the flags also pick this record among its signature's. */
  guards: Guards;
}

/** The records of one signature: one per combination of guarded flags (train and eval). */
interface Signature {
  variants: Record_[];
}

// Recording keeps going this many calls when consecutive calls differ (first steps of an
// optimizer make its state: SGD's momentum buffer, Adam's moments), then gives up.
const MAX_MISSES = 4;

const objectIds = new WeakMap<object, number>();
let nextObjectId = 1;
function idOf(o: object): number {
  let id = objectIds.get(o);
  if (id === undefined) objectIds.set(o, (id = nextObjectId++));
  return id;
}

/** The signature of one argument; tensors are collected in order into `tensors`. */
function sig(v: unknown, tensors: Tensor[], parts: string[]): void {
  if (v instanceof Tensor) {
    const nd = v.nd('jit');
    const view = nd.view;
    const alias = tensors.findIndex((t) => t.nd('jit').storage === nd.storage);
    tensors.push(v);
    parts.push(
      `T${nd.dtype}[${view.shape}|${view.strides}|${view.offset}|${view.mask ? JSON.stringify(view.mask) : ''}|${nd.storage.size}|${alias}${v.requiresGrad ? '|g' : ''}]`,
    );
  } else if (v === null || typeof v !== 'object') {
    if (typeof v === 'function')
      throw new ValueError('jit: a function argument is not supported; close over it instead');
    parts.push(typeof v === 'number' ? `n${Object.is(v, -0) ? '-0' : v}` : `${typeof v}:${String(v)}`);
  } else if (Array.isArray(v)) {
    parts.push('[');
    v.forEach((x) => sig(x, tensors, parts));
    parts.push(']');
  } else if (Object.getPrototypeOf(v) === Object.prototype) {
    parts.push('{');
    for (const [k, x] of Object.entries(v)) {
      parts.push(k, ':');
      sig(x, tensors, parts);
    }
    parts.push('}');
  } else parts.push(`o${idOf(v)}`);
}

function backendOf(tensors: Tensor[]): Backend {
  return tensors.length ? tensors[0].nd('jit').backend : getBackend();
}

/**
 * Replaces the tensors of a result by numbered holes, making each one a fresh plain array
 * made inside the recording (a copy when it is a view, an argument or state), so a replay
 * can hand the caller a new tensor per hole.
 */
function collectOutputs(v: unknown, rec: Recorder, outs: Tensor[]): unknown {
  if (v instanceof Tensor) {
    let t = v;
    const nd = t.nd('jit');
    const seen = outs.some((o) => o.nd('jit').storage === nd.storage);
    if (seen || !rec.madeHere(nd.storage) || !nd.view.isPlain || nd.storage.size !== nd.size) {
      t = new Tensor(NDArray.elementwise([E.in(0)], [nd], 'jit output')[0]);
    }
    outs.push(t);
    return { __jitOutput: outs.length - 1 };
  }
  if (Array.isArray(v)) return v.map((x) => collectOutputs(x, rec, outs));
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, collectOutputs(x, rec, outs)]));
  }
  if (v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function') return v;
  return v;
}

function fill(template: unknown, outs: readonly Tensor[]): unknown {
  if (Array.isArray(template)) return template.map((x) => fill(x, outs));
  if (template !== null && typeof template === 'object' && Object.getPrototypeOf(template) === Object.prototype) {
    const hole = (template as { __jitOutput?: number }).__jitOutput;
    if (typeof hole === 'number') return outs[hole];
    return Object.fromEntries(Object.entries(template).map(([k, x]) => [k, fill(x, outs)]));
  }
  return template;
}

const REUSED =
  'the next call of the jitted function that returned it (outputs are reused per call, as CUDA graphs do: clone() one to keep it, or pass { keepOutputs: true } to jit)';

/** The tensors of a result (a tensor, or arrays/plain objects of them). */
function collectTensors(v: unknown, out: Tensor[] = []): Tensor[] {
  if (v instanceof Tensor) out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => collectTensors(x, out));
  else if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    Object.values(v).forEach((x) => collectTensors(x, out));
  return out;
}

function recordCount(cache: Map<string, Signature>): number {
  let n = 0;
  for (const sg of cache.values()) n += sg.variants.length;
  return n;
}

/**
 * The pre-existing tensors a recorded call read and still alive after it, with their storages
 * then; not its arguments, which are the caller's to free or replace (they are bound per call).
 */
function heldBy(trace: Trace, args: readonly Tensor[]): HolderGuard[] {
  const out: HolderGuard[] = [];
  for (const t of trace.readTensors) {
    if (!(t instanceof Tensor) || args.includes(t)) continue;
    const s = t._storageNow();
    if (s) out.push({ tensor: new WeakRef(t), storage: s });
  }
  return out;
}

/**
 * The guards of a plan made from `trace` (its second recorded call): the flags it read, and
 * every pre-existing tensor it read whose storage the plan binds, with the module fields
 * holding those tensors.
 */
function guardsOf(trace: Trace, plan: Plan): Guards {
  const fixed = new Set(plan.fixed);
  const holders: Guards['holders'][number][] = [];
  const held = new Set<object>();
  for (const t of trace.readTensors) {
    if (!(t instanceof Tensor)) continue;
    const s = t._storageNow();
    if (s && fixed.has(s)) {
      holders.push({ tensor: new WeakRef(t), storage: s });
      held.add(t);
    }
  }
  return { fields: trace.fields, holders, slots: fieldsHolding(held), checkedAt: stateEpoch() };
}

/**
 * Captures `fn` (tensors and numbers in; a tensor, or arrays/objects of tensors, out) and
 * replays it: see docs/api.md "jit". Per signature (argument shapes, dtypes, layouts, numbers,
 * backend, grad mode) the first calls run eagerly while their backend work is recorded;
 * once two consecutive calls did the same work, later calls re-issue that work directly.
 */
export function jit<A extends unknown[], R>(fn: (...args: A) => R, opts: JitOptions = {}): Jitted<A, R> {
  if (typeof fn !== 'function')
    throw new ValueError(`jit: expected a function; got ${fn === null ? 'null' : typeof fn}`);
  const { maxRecords, keepOutputs } = withDefaults<Required<JitOptions>>(
    'jit',
    opts,
    { maxRecords: 'posint', keepOutputs: 'boolean' },
    { maxRecords: 8, keepOutputs: false },
  );
  const cache = new Map<string, Signature>();
  const stats = { recorded: 0, replayed: 0 };
  // Calls of this function, replayed or not: a recorded call lines up only with the call of
  // the same signature just before it. Another signature's eager call in between (a smaller
  // last batch each epoch) moves the state both read to new storages, so an older record no
  // longer describes what the next call reads: start that signature's recording over.
  let calls = 0;
  // Number arguments are part of the signature: one that changes on every call never replays.
  const numberKeys = new Map<string, Set<string>>();
  let warned = false;
  const noteNumbers = (shape: string, key: string) => {
    if (warned) return;
    let seen = numberKeys.get(shape);
    if (!seen) numberKeys.set(shape, (seen = new Set()));
    seen.add(key);
    if (seen.size > maxRecords) {
      warned = true;
      numberKeys.clear();
      console.warn(
        `jit: a number argument has taken more than ${maxRecords} values; each value is a new signature that records again (two eager calls) before it replays. Pass a value that changes per call as a 0-d tensor.`,
      );
    } else if (numberKeys.size > 64) numberKeys.clear();
  };

  // The previous call's outputs, freed by the next call unless keepOutputs.
  let lent: Tensor[] = [];
  const call = (...args: A): R => {
    // Inside another jitted function's recording: that record captures this work (and its hooks).
    if (isRecording()) return fn(...args);
    const tensors: Tensor[] = [];
    const parts: string[] = [];
    sig(args, tensors, parts);
    // Free what the previous call returned before this one runs (its buffers come straight
    // back); an output passed back in as an argument (a recurrent state) goes after the call.
    const passedBack = lent.filter((t) => tensors.includes(t));
    for (const t of lent) if (!passedBack.includes(t)) t._release(REUSED);
    lent = [];
    try {
      const result = callInner(args, tensors, parts);
      if (!keepOutputs) lent = collectTensors(result);
      return result;
    } finally {
      for (const t of passedBack) t._release(REUSED);
    }
  };
  const callInner = (args: A, tensors: Tensor[], parts: string[]): R => {
    const callNo = ++calls;
    flushPending();
    const backend = backendOf(tensors);
    for (const t of tensors) {
      if (t.nd('jit').backend !== backend)
        throw new ValueError(
          `jit: arguments live on different backends (${backend.name} and ${t.nd('jit').backend.name})`,
        );
    }
    const key = `${idOf(backend)}|${isGradEnabled() ? 'grad' : 'nograd'}|${parts.join('')}`;
    noteNumbers(parts.map((p) => (p.startsWith('n') ? 'n' : p)).join(''), key);
    let sigRec = cache.get(key);
    if (sigRec) {
      cache.delete(key);
      cache.set(key, sigRec);
    } else {
      sigRec = { variants: [] };
      cache.set(key, sigRec);
      if (cache.size > maxRecords) {
        const oldest = cache.keys().next().value!;
        for (const r of cache.get(oldest)!.variants) if (r.plan) releasePlan(r.plan);
        cache.delete(oldest);
      }
    }
    const inputs = tensors.map((t) => t.nd('jit').storage);

    for (const r of sigRec.variants) {
      if (!r.plan) continue;
      const g = checkGuards(r.guards);
      if (g === 'mode') continue;
      if (g === 'ok') {
        const outs = replay(r.plan, backend, inputs);
        if (outs) {
          stats.replayed++;
          // A read in flight (the previous step's loss, awaited now): submit this step at once,
          // so the GPU runs it while the host waits for that read, instead of after.
          if (backend.readsInFlight?.()) backend.flush();
          const shapes = r.outShapes;
          return fill(
            r.outTemplate,
            outs.map((s, i) => new Tensor(NDArray.fromStorage(s, shapes[i]))),
          ) as R;
        }
      }
      // State the record relied on was replaced or freed (a parameter swapped from outside,
      // an eager call of the function in between, a captured tensor disposed): record again.
      releasePlan(r.plan);
      r.plan = null;
      r.prev = null;
      break;
    }

    // A recorded call lines up with the next one only if nothing replaced the state it left
    // behind in between (an eager call of the function, or of the model, swaps parameters
    // and running statistics): otherwise this call starts the recording over.
    for (const r of sigRec.variants) if (r.prev && !r.prev.held.every(holds)) r.prev = null;
    for (const [i, t] of tensors.entries()) {
      if (t.requiresGrad)
        throw new JitError(
          `jit: tensor argument ${i} requires grad; a replay cannot set .grad on arguments (keep parameters in modules or closures, and pass data)`,
        );
    }
    const recorder = new Recorder(backend, true);
    const outs: Tensor[] = [];
    let template: unknown;
    let result: unknown;
    recorder.start();
    let trace: Trace;
    try {
      result = fn(...args);
      if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
        (result as Promise<unknown>).then(undefined, () => {});
        throw new JitError(
          `jit: the function returned a Promise; a jitted function must be synchronous${recorder.violation ? ` (it did ${recorder.violation}, which cannot be replayed: return the tensor and read it after the call)` : ''}`,
        );
      }
      if (recorder.violation)
        throw new JitError(
          `jit: the function did ${recorder.violation}, which cannot be replayed; return the tensor and read it after the call`,
        );
      template = collectOutputs(result, recorder, outs);
      flushPending();
      for (const t of outs) t.nd('jit');
    } finally {
      trace = recorder.stop();
    }
    stats.recorded++;
    const outStorages = outs.map((t) => t.nd('jit').storage);
    // The record this call belongs to: the one made with the same flag values.
    let rec = sigRec.variants.find((r) => sameFields(r.guards.fields, trace.fields));
    if (!rec) {
      rec = {
        prev: null,
        plan: null,
        outTemplate: null,
        outShapes: [],
        misses: 0,
        guards: { fields: trace.fields, holders: [], slots: [], checkedAt: stateEpoch() },
      };
      sigRec.variants.push(rec);
      if (sigRec.variants.length > maxRecords) {
        const dropped = sigRec.variants.shift()!;
        if (dropped.plan) releasePlan(dropped.plan);
      }
    }
    if (rec.prev && rec.prev.call !== callNo - 1) rec.prev = null;
    if (rec.prev) {
      try {
        rec.plan = buildPlan(rec.prev.trace, rec.prev.inputs, trace, inputs, outStorages);
        rec.guards = guardsOf(trace, rec.plan);
        rec.outTemplate = template;
        rec.outShapes = outs.map((t) => t.shape);
        rec.prev = null;
        rec.misses = 0;
      } catch (e) {
        if (!(e instanceof JitError) || !e.structural || ++rec.misses >= MAX_MISSES) {
          sigRec.variants.splice(sigRec.variants.indexOf(rec), 1);
          throw e;
        }
        rec.prev = { trace, inputs, call: callNo, held: heldBy(trace, tensors) };
      }
    } else rec.prev = { trace, inputs, call: callNo, held: heldBy(trace, tensors) };
    return fill(template, outs) as R;
  };

  Object.defineProperty(call, 'stats', {
    get: (): JitStats => ({ ...stats, signatures: cache.size, records: recordCount(cache) }),
  });
  const reset = () => {
    for (const sg of cache.values()) for (const r of sg.variants) if (r.plan) releasePlan(r.plan);
    cache.clear();
  };
  return Object.assign(call, { reset }) as Jitted<A, R>;
}
