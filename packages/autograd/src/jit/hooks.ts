import { Expr, Storage, TypedArray } from '@surf/core';

/**
 * What library code tells the jit recorder about host-side values that change between calls
 * without changing the work: a replay re-runs these instead of reusing what the recorded call
 * saw. Outside a recording each hook is just the value (or the effect) it wraps.
 */

/** The recording in progress: set by the recorder (trace.ts) around the traced call. */
export interface HookSink {
  effect(run: () => void): void;
  constant(node: Expr, get: () => number): void;
  data(arr: TypedArray, make: () => TypedArray): void;
  holder(s: Storage, rebind: (s: Storage) => void): void;
  field(obj: object, key: string, value: unknown): void;
}

let sink: HookSink | null = null;

/** @internal The recorder installs itself here while it traces a call. */
export function setHookSink(s: HookSink | null): HookSink | null {
  const prev = sink;
  sink = s;
  return prev;
}

/** True while a jit recording runs (library code may skip bookkeeping otherwise). */
export function isRecording(): boolean {
  return sink !== null;
}

/**
 * Runs a host-side state change now (an optimizer's step count, a scheduler's epoch) and,
 * while recording, at the same point of every replay.
 */
export function hostEffect(run: () => void): void {
  run();
  sink?.effect(run);
}

/**
 * A float32 expression constant whose value a replay reads again from `get` (a learning rate,
 * Adam's bias corrections). Outside a recording this is E.f(get()).
 */
export function dynamicConst(get: () => number): Expr {
  const node: Expr = { kind: 'const', value: get(), dtype: 'float32' };
  sink?.constant(node, get);
  return node;
}

/**
 * Host data uploaded inside the traced function that a replay must make afresh (random
 * numbers): `make` runs now, and again at every replay, where its result replaces this array.
 */
export function dynamicData<T extends TypedArray>(make: () => T): T {
  const arr = make();
  sink?.data(arr, make);
  return arr;
}

/**
 * Says who holds a storage made inside the traced function (a leaf's new .grad). A replay
 * writes the new value into the recorded storage; when that storage was freed meanwhile (the
 * gradient was zeroed outside the function), `rebind` gets the replay's storage instead.
 */
export function storageHolder(s: Storage, rebind: (s: Storage) => void): void {
  sink?.holder(s, rebind);
}

/**
 * Reports a read of JS state that decides what work the traced function does (a module's
 * `training` flag): a replay of this record runs only while `obj[key]` still equals `value`,
 * otherwise the call records again (or another record, made with the other value, replays).
 * Whoever sets `obj[key]` must call bumpStateEpoch() (guards.ts) so replays notice the change.
 * Outside a recording this does nothing.
 */
export function guardField(obj: object, key: string, value: unknown): void {
  sink?.field(obj, key, value);
}
