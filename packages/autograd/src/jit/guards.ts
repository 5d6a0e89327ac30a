import { Storage } from '@surf/core';
import { FieldSlot, slotHolds } from './owners';

/**
 * What a replay checks before it runs, as torch.compile's guards: everything the recorded
 * call read from JS state that decided its work or its bindings.
 *  - Mode flags (a module's `training`): library code reports each read with guardField();
 *    the record holds only while every flag has the value it had. A flag's setter calls
 *    bumpStateEpoch(), so a replay compares one number and walks the flags only after some
 *    flag was set.
 *  - Tensors the call read that existed before it and whose storages the replay binds
 *    (parameters, optimizer state, tensors captured by the closure): each must still hold
 *    that storage (not disposed, not swapped by assign(), an in-place op or an eager
 *    optimizer step), and each module field that held one must still hold the same tensor
 *    (`model.fc.weight = t`). One pointer comparison per tensor and per field.
 * Grad mode, the backend and the arguments are part of the signature itself (jit.ts).
 */

let epoch = 0;

/** Marks that some guarded flag may have changed: replays check their flags again. */
export function bumpStateEpoch(): void {
  epoch++;
}

/** @internal The current epoch. */
export function stateEpoch(): number {
  return epoch;
}

/** A flag read during a recording: `obj[key]` was `value`. */
export interface FieldGuard {
  readonly obj: object;
  readonly key: string;
  readonly value: unknown;
}

/** Whatever holds a storage now (a Tensor). */
export interface StorageHolder {
  _storageNow(): Storage | null;
}

/**
 * A pre-existing tensor the replay binds, and the storage it held when recorded. The tensor is
 * held weakly: a record must not keep alive a tensor the program dropped (a closure variable
 * reassigned); once it is collected, the record is stale.
 */
export interface HolderGuard {
  readonly tensor: WeakRef<StorageHolder>;
  readonly storage: Storage;
}

/** True while the tensor is alive and holds the storage it held when recorded. */
export function holds(h: HolderGuard): boolean {
  return h.tensor.deref()?._storageNow() === h.storage;
}

export interface Guards {
  readonly fields: readonly FieldGuard[];
  readonly holders: readonly HolderGuard[];
  readonly slots: readonly FieldSlot[];
  /** The epoch at which `fields` last held (fields are only re-checked after a bump). */
  checkedAt: number;
}

/** 'ok': replay; 'mode': a flag differs (another record may fit); 'stale': state was replaced. */
export type GuardResult = 'ok' | 'mode' | 'stale';

export function checkGuards(g: Guards): GuardResult {
  if (g.checkedAt !== epoch) {
    for (const f of g.fields) if ((f.obj as Record<string, unknown>)[f.key] !== f.value) return 'mode';
    g.checkedAt = epoch;
  }
  for (const h of g.holders) if (!holds(h)) return 'stale';
  for (const s of g.slots) if (!slotHolds(s)) return 'stale';
  return 'ok';
}

/** True when two recordings read the same flags with the same values (the same record variant). */
export function sameFields(a: readonly FieldGuard[], b: readonly FieldGuard[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((f) => b.some((g) => g.obj === f.obj && g.key === f.key && g.value === f.value));
}
