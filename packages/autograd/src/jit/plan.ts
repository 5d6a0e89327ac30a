import { Storage, TypedArray } from '@surf/core';
import { JitError } from './errors';
import { Entry, Trace } from './trace';

/**
 * Lines up two traced calls of the same signature (A, then B) and turns B into a replay plan.
 * Every storage B touches gets a binding:
 *  - an argument's storage: the replay's argument;
 *  - a storage B made: a fresh one at replay, made by the same op;
 *  - a storage that existed before B and was made by A (a parameter, a moment, a gradient
 *    that B replaces): its successor, the storage B made at the same place, which holds the
 *    state after B and is what the next call reads; the replay writes its new value into
 *    that same storage object at the end (Backend.adopt), so whoever holds it sees the update;
 *  - a storage that existed before A and B and that both read at the same place: a constant.
 * Comparing A and B is also how jit finds out that a function does different work per call.
 */

export type Binding = { k: 'in'; i: number } | { k: 'fixed'; s: Storage } | { k: 'new'; slot: number };

export type Resolved =
  | { k: 's'; b: Binding }
  | { k: 'v'; v: unknown }
  | { k: 'c'; dtype: string; get: () => number }
  | { k: 'd'; make: () => TypedArray };

export interface PlanStep {
  readonly entry: Entry;
  readonly leaves: readonly Resolved[];
  /** For ops: the slot of each result. For dispose: whether the replay frees it. */
  readonly slots: readonly number[];
  readonly free: boolean;
}

export interface Plan {
  readonly steps: readonly PlanStep[];
  readonly slotCount: number;
  /**
   * Storages the replay writes into at the end: the storage object, the slot holding its new
   * value, and who to hand the new storage to when the object was freed meanwhile.
   */
  readonly adopt: readonly (readonly [Storage, number, ((s: Storage) => void) | undefined])[];
  /** Slots handed to the caller as outputs, in output order. */
  readonly outputs: readonly number[];
  /** Storages that must still be alive for the plan to hold. */
  readonly fixed: readonly Storage[];
}

function where(e: Entry, i: number): string {
  return `op ${i} (${e.method})`;
}

export function buildPlan(
  a: Trace,
  aInputs: readonly Storage[],
  b: Trace,
  bInputs: readonly Storage[],
  bOutputs: readonly Storage[],
): Plan {
  if (a.entries.length !== b.entries.length) {
    throw new JitError(
      `jit: two calls with the same signature did different work (${a.entries.length} and ${b.entries.length} backend calls); jit replays one fixed sequence of ops, so JS control flow inside the function must not depend on values that change between calls`,
      true,
    );
  }
  bInputs.forEach((s, i) => {
    if (b.disposed.has(s))
      throw new JitError(`jit: the function frees its argument ${i}; arguments belong to the caller`);
  });
  const slotOf = new Map<Storage, number>();
  let slotCount = 0;
  for (const s of b.created.keys()) slotOf.set(s, slotCount++);

  const binding = (s: Storage, ea: Entry, la: { s: Storage } | undefined, at: string): Binding => {
    const slot = slotOf.get(s);
    if (slot !== undefined) return { k: 'new', slot };
    const bi = bInputs.indexOf(s);
    if (bi >= 0) {
      if (!la || aInputs.indexOf(la.s) !== bi)
        throw new JitError(`jit: at ${at} one call read argument ${bi} where the other read something else`);
      return { k: 'in', i: bi };
    }
    const madeInA = a.created.get(s);
    if (madeInA) {
      if (a.disposed.has(s)) throw new JitError(`jit: at ${at} a storage freed by the previous call is read`);
      const succ = b.entries[madeInA[0]].results[madeInA[1]];
      if (!succ || b.disposed.has(succ))
        throw new JitError(
          `jit: at ${at} state made by the previous call has no successor in this call (it is not updated the same way every call)`,
        );
      if (bOutputs.includes(succ))
        throw new JitError(
          `jit: at ${at} the function reads a tensor it returned on the previous call; keep returned tensors out of the state the function reads`,
        );
      return { k: 'fixed', s: succ };
    }
    if (!la || la.s !== s)
      throw new JitError(
        `jit: at ${at} the two calls read different existing tensors (a tensor the function uses was replaced between calls: an optimizer stepping outside the jitted function does that, so put optimizer.step() inside it; or the function picks tensors by a changing value)`,
      );
    if (b.disposed.has(s))
      throw new JitError(
        `jit: at ${at} the function frees a tensor that existed before the call and is not remade by it`,
      );
    return { k: 'fixed', s };
  };

  const steps: PlanStep[] = b.entries.map((eb, i) => {
    const ea = a.entries[i];
    const at = where(eb, i);
    if (ea.kind !== eb.kind || ea.key !== eb.key || ea.leaves.length !== eb.leaves.length) {
      throw new JitError(
        `jit: two calls with the same signature did different work at ${at} (${ea.method} vs ${eb.method}${ea.method === eb.method ? ' with other shapes or options' : ''}); jit replays one fixed sequence of ops`,
        true,
      );
    }
    const leaves: Resolved[] = eb.leaves.map((lb, j) => {
      const la = ea.leaves[j];
      switch (lb.k) {
        case 's':
          return { k: 's', b: binding(lb.s, ea, la.k === 's' ? la : undefined, at) };
        case 'c': {
          const get = b.dynamicConsts.get(lb.node);
          if (get) return { k: 'c', dtype: lb.node.dtype, get };
          const va = la.k === 'c' ? la.node.value : NaN;
          if (!Object.is(va, lb.node.value)) {
            throw new JitError(
              `jit: a constant in ${at} changed between calls (${va} then ${lb.node.value}) but is not marked dynamic; numbers that change per call must be passed as arguments (they are part of the signature) or come from an optimizer or scheduler`,
            );
          }
          return { k: 'v', v: lb.node };
        }
        case 'd': {
          const make = b.dynamicData.get(lb.arr);
          if (make) return { k: 'd', make };
          const da = la.k === 'd' ? la.arr : null;
          if (!da || da.length !== lb.arr.length || da.some((x, t) => !Object.is(x, lb.arr[t]))) {
            throw new JitError(
              `jit: data uploaded in ${at} differs between calls; jit replays it unchanged (make it an argument, or use rand/randn for random numbers)`,
            );
          }
          return { k: 'v', v: lb.arr };
        }
        default:
          if (la.k !== 'o' || la.o !== lb.o)
            throw new JitError(`jit: ${at} got a different ${lb.o.constructor?.name ?? 'object'} on each call`);
          return { k: 'v', v: lb.o };
      }
    });
    if (eb.kind === 'dispose') {
      const r = leaves[0];
      return { entry: eb, leaves, slots: [], free: r.k === 's' && r.b.k === 'new' };
    }
    return { entry: eb, leaves, slots: eb.results.map((s) => slotOf.get(s)!), free: false };
  });

  const outputs = bOutputs.map((s, i) => {
    const slot = slotOf.get(s);
    if (slot === undefined || b.disposed.has(s))
      throw new JitError(`jit: output ${i} is not a tensor computed by the function`);
    return slot;
  });
  const adopt: [Storage, number, ((s: Storage) => void) | undefined][] = [];
  for (const [s, slot] of slotOf)
    if (!b.disposed.has(s) && !bOutputs.includes(s)) adopt.push([s, slot, b.holders.get(s)]);
  const fixed = new Set<Storage>();
  for (const st of steps) for (const l of st.leaves) if (l.k === 's' && l.b.k === 'fixed') fixed.add(l.b.s);
  return { steps, slotCount, adopt, outputs, fixed: [...fixed] };
}
