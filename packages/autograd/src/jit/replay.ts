import { Backend, BackendError, Storage } from '@surf/core';
import { Binding, Plan } from './plan';
import { resultStorages } from './trace';
import { Builder, compileBuilder } from './visit';

// Each recorded call's argument rebuilder, compiled at its first replay.
const builders = new WeakMap<object, Builder | null>();

function isLive(s: Storage): boolean {
  return (s as { disposed?: boolean }).disposed !== true;
}

/**
 * Runs a plan: the recorded backend calls again, on the given argument storages, with no
 * autograd and no tensors in between. Returns the output storages (the caller's), or null
 * when state the plan relies on was freed meanwhile (then the caller records afresh).
 */
export function replay(plan: Plan, backend: Backend, inputs: readonly Storage[]): Storage[] | null {
  for (const s of plan.fixed) if (!isLive(s)) return null;
  if (!backend.adopt) throw new BackendError(`jit: backend '${backend.name}' cannot replay (it has no adopt())`);
  const vals: (Storage | undefined)[] = new Array(plan.slotCount);
  const get = (b: Binding): Storage => (b.k === 'in' ? inputs[b.i] : b.k === 'fixed' ? b.s : vals[b.slot]!);
  const isStorage = (v: object) => (v as { backend?: unknown }).backend === backend && typeof (v as Storage).size === 'number' && typeof (v as Storage).dtype === 'string';
  const methods = backend as unknown as Record<string, (...a: unknown[]) => unknown>;
  try {
    for (const st of plan.steps) {
      const e = st.entry;
      if (e.kind === 'effect') {
        e.effect!();
        continue;
      }
      if (e.kind === 'dispose') {
        const l = st.leaves[0];
        if (st.free && l.k === 's') backend.dispose(get(l.b));
        continue;
      }
      let build = builders.get(st);
      if (build === undefined) builders.set(st, (build = compileBuilder(e.args, isStorage)));
      let j = 0;
      const args = (build ? build(() => {
        const r = st.leaves[j++];
        switch (r.k) {
          case 's': return get(r.b);
          case 'c': return { kind: 'const', value: r.get(), dtype: r.dtype };
          case 'd': return r.make();
          default: return r.v;
        }
      }) : e.args) as unknown[];
      const res = methods[e.method](...args);
      if (e.single) vals[st.slots[0]] = res as Storage;
      else if (st.slots.length) {
        const out = resultStorages(res, isStorage);
        st.slots.forEach((slot, k) => { vals[slot] = out[k]; });
      }
    }
  } catch (e) {
    for (const s of vals) if (s) backend.dispose(s);
    throw e;
  }
  for (const [dst, slot, rebind] of plan.adopt) {
    if (isLive(dst) || !rebind) backend.adopt(dst, vals[slot]!);
    else rebind(vals[slot]!);
  }
  return plan.outputs.map((slot) => vals[slot]!);
}
