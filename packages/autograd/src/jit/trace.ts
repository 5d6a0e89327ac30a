import { Backend, Expr, Storage, TypedArray } from '@surf/core';
import { HookSink, setHookSink } from './hooks';
import { JitError } from './errors';
import { Leaf, visit } from './visit';
import { FieldGuard } from './guards';
import { TensorWatch, setTensorWatch } from './watch';

/** One thing the traced call did, in order. */
export interface Entry {
  readonly kind: 'op' | 'dispose' | 'effect';
  /** The backend method (ops), 'dispose', or 'effect'. */
  readonly method: string;
  /** The arguments as given (ops); the replay walks them again to swap in its leaves. */
  readonly args: readonly unknown[];
  /** The call's structure: method and every non-leaf argument. */
  readonly key: string;
  readonly leaves: readonly Leaf[];
  /** Storages the call returned (new ones), and whether it returned one bare storage. */
  readonly results: readonly Storage[];
  readonly single: boolean;
  readonly effect?: () => void;
}

export interface Trace {
  readonly entries: readonly Entry[];
  /** Where each storage the call made was made: [entry index, result index]. */
  readonly created: ReadonlyMap<Storage, readonly [number, number]>;
  readonly disposed: ReadonlySet<Storage>;
  readonly dynamicConsts: WeakMap<object, () => number>;
  readonly dynamicData: WeakMap<object, () => TypedArray>;
  readonly holders: ReadonlyMap<Storage, (s: Storage) => void>;
  /** Flags read (guardField), first read of each. */
  readonly fields: readonly FieldGuard[];
  /** Tensor objects read during the call that it did not make. */
  readonly readTensors: ReadonlySet<object>;
}

/**
 * The storages a backend call returned, in order: one bare storage, an array's, or a plain
 * object's (attention's { out, lse }, attentionBackward's { dq, dk, dv }). Shared with the
 * replay, which must find the same results in the same order.
 */
export function resultStorages(res: unknown, isStorage: (v: object) => boolean): Storage[] {
  if (res === null || typeof res !== 'object') return [];
  if (isStorage(res)) return [res as Storage];
  const vals = Array.isArray(res)
    ? res
    : Object.getPrototypeOf(res) === Object.prototype
      ? Object.values(res as object)
      : [];
  return vals.filter((r): r is Storage => r !== null && typeof r === 'object' && isStorage(r));
}

// Backend methods that do no device work on storages: called through untouched.
const PASS = new Set([
  'constructor',
  'flush',
  'sync',
  'memory',
  'checkOutput',
  'stats',
  'trimPool',
  'adopt',
  'readsInFlight',
]);
const READS = new Set(['read', 'readSync']);

/**
 * Watches one backend while a function runs eagerly: every top-level contract call (calls the
 * backend makes to itself are its own business) is logged with its arguments, and the hooks
 * (hooks.ts) note host effects, dynamic constants and fresh random data. Methods are wrapped
 * on the backend object itself, because arrays reach their backend through their storages,
 * not through getBackend().
 */
export class Recorder implements HookSink, TensorWatch {
  private entries: Entry[] = [];
  private created = new Map<Storage, readonly [number, number]>();
  private disposed = new Set<Storage>();
  private dynamicConsts = new WeakMap<object, () => number>();
  private dynamicData = new WeakMap<object, () => TypedArray>();
  private holders = new Map<Storage, (s: Storage) => void>();
  private fields: FieldGuard[] = [];
  private readTensors = new Set<object>();
  private madeTensors = new WeakSet<object>();
  private prevWatch: TensorWatch | null = null;
  private depth = 0;
  private restore: (() => void) | null = null;
  private prevSink: HookSink | null = null;
  /** The first thing done that a replay cannot do (a readback), for the error after the call. */
  violation: string | null = null;

  constructor(
    readonly backend: Backend,
    private readonly logging: boolean,
  ) {}

  /** Starts watching. With logging false it only forbids readbacks (the guard of eager calls). */
  start(): void {
    const b = this.backend as unknown as Record<string, unknown>;
    const saved: [string, unknown, boolean][] = [];
    const names = new Set<string>();
    for (let p: object | null = Object.getPrototypeOf(b); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const n of Object.getOwnPropertyNames(p)) {
        const d = Object.getOwnPropertyDescriptor(p, n);
        if (d && typeof d.value === 'function' && !PASS.has(n)) names.add(n);
      }
    }
    // Methods set as instance fields too (a backend written with arrow functions).
    for (const n of Object.keys(b)) if (typeof b[n] === 'function' && !PASS.has(n)) names.add(n);
    for (const n of names) {
      const own = Object.prototype.hasOwnProperty.call(b, n);
      const orig = b[n] as (...a: unknown[]) => unknown;
      saved.push([n, b[n], own]);
      b[n] = this.wrap(n, orig);
    }
    this.restore = () => {
      for (const [n, f, own] of saved) {
        if (own) b[n] = f;
        else delete b[n];
      }
    };
    if (this.logging) {
      this.prevSink = setHookSink(this);
      this.prevWatch = setTensorWatch(this);
    }
  }

  stop(): Trace {
    this.restore?.();
    this.restore = null;
    if (this.logging) {
      setHookSink(this.prevSink);
      setTensorWatch(this.prevWatch);
    }
    return {
      entries: this.entries,
      created: this.created,
      disposed: this.disposed,
      dynamicConsts: this.dynamicConsts,
      dynamicData: this.dynamicData,
      holders: this.holders,
      fields: this.fields,
      readTensors: this.readTensors,
    };
  }

  private wrap(name: string, orig: (...a: unknown[]) => unknown): (...a: unknown[]) => unknown {
    const backend = this.backend;
    return (...args: unknown[]) => {
      if (this.depth > 0) return orig.apply(backend, args);
      if (READS.has(name)) {
        const what = `a readback (backend.${name}: Tensor.data(), item() or toArray())`;
        this.violation ??= what;
        if (name === 'readSync')
          throw new JitError(
            `jit: ${what} inside a jitted function cannot be replayed; return the tensor and read it after the call`,
          );
        // A promise that never settles: the async function awaiting it is dropped, and the
        // caller sees the JitError that jit() raises for the returned promise.
        return new Promise(() => {});
      }
      if (name === 'destroy') throw new JitError('jit: the backend cannot be destroyed inside a jitted function');
      if (name === 'dispose' && this.logging) {
        const s = args[0] as Storage;
        if (!this.disposed.has(s)) {
          this.disposed.add(s);
          // Only frees of storages made during the call are steps. Whether one made earlier
          // goes now depends on its other holders, and a dropped alias lets go whenever the
          // garbage collector runs (between two calls, or not), so two calls doing the same
          // work may differ here; a replay never frees those anyway (it updates them in place).
          if (this.created.has(s)) this.log('dispose', 'dispose', args, null);
        }
        return orig.apply(backend, args);
      }
      this.depth++;
      let res: unknown;
      try {
        res = orig.apply(backend, args);
      } finally {
        this.depth--;
      }
      if (this.logging) this.log('op', name, args, res);
      return res;
    };
  }

  private isStorage = (v: object): boolean =>
    (v as { backend?: unknown }).backend === this.backend &&
    typeof (v as Storage).size === 'number' &&
    typeof (v as Storage).dtype === 'string';

  private log(kind: 'op' | 'dispose', method: string, args: unknown[], res: unknown): void {
    const leaves: Leaf[] = [];
    const key: string[] = [method, '('];
    visit(args, {
      isStorage: this.isStorage,
      key,
      leaf: (l) => {
        leaves.push(l);
        return l.k === 's' ? l.s : l.k === 'c' ? l.node : l.k === 'd' ? l.arr : l.o;
      },
    });
    const single = res !== null && typeof res === 'object' && !Array.isArray(res) && this.isStorage(res);
    const results = resultStorages(res, this.isStorage);
    const at = this.entries.length;
    results.forEach((s, k) => this.created.set(s, [at, k]));
    this.entries.push({ kind, method, args: args.slice(), key: key.join(''), leaves, results, single });
  }

  /** True for a storage made by a call logged so far. */
  madeHere(s: Storage): boolean {
    return this.created.has(s);
  }

  // HookSink
  effect(run: () => void): void {
    this.entries.push({
      kind: 'effect',
      method: 'effect',
      args: [],
      key: 'effect',
      leaves: [],
      results: [],
      single: false,
      effect: run,
    });
  }
  constant(node: Expr, get: () => number): void {
    this.dynamicConsts.set(node, get);
  }
  data(arr: TypedArray, make: () => TypedArray): void {
    this.dynamicData.set(arr, make);
  }
  holder(s: Storage, rebind: (s: Storage) => void): void {
    this.holders.set(s, rebind);
  }
  field(obj: object, key: string, value: unknown): void {
    if (!this.fields.some((f) => f.obj === obj && f.key === key)) this.fields.push({ obj, key, value });
  }

  // TensorWatch
  read(t: object): void {
    if (!this.madeTensors.has(t)) this.readTensors.add(t);
  }
  made(t: object): void {
    this.madeTensors.add(t);
  }
}
