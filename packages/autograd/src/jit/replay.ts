import { Backend, BackendError, ReplayProgram, ReplayRecipe, Storage, TypedArray } from '@surf/core';
import { Binding, Plan, PlanStep } from './plan';
import { resultStorages } from './trace';
import { Builder, compileBuilder } from './visit';
import { elementwiseRuns } from './merge';

// Each recorded call's argument rebuilder, compiled at its first replay.
const builders = new WeakMap<object, Builder | null>();

function isLive(s: Storage): boolean {
  return (s as { disposed?: boolean }).disposed !== true;
}

/** A leaf's value at replay: a storage, or a fresh constant/array for the dynamic ones. */
interface LeafSource {
  constant(r: { dtype: string; get: () => number }): unknown;
  data(r: { make: () => TypedArray }): unknown;
}

/**
 * Issues a plan's backend calls on the given argument storages, with no autograd and no
 * tensors in between; host effects run when `effects` is set. Returns every slot's storage.
 */
function issue(
  plan: Plan,
  backend: Backend,
  inputs: readonly Storage[],
  src: LeafSource,
  effects: boolean,
  runs?: ReadonlyMap<number, readonly number[]>,
): (Storage | undefined)[] {
  const vals: (Storage | undefined)[] = new Array(plan.slotCount);
  const get = (b: Binding): Storage => (b.k === 'in' ? inputs[b.i] : b.k === 'fixed' ? b.s : vals[b.slot]!);
  const isStorage = (v: object) =>
    (v as { backend?: unknown }).backend === backend &&
    typeof (v as Storage).size === 'number' &&
    typeof (v as Storage).dtype === 'string';
  const methods = backend as unknown as Record<string, (...a: unknown[]) => unknown>;
  const argsOf = (st: PlanStep): unknown[] => {
    let build = builders.get(st);
    if (build === undefined) builders.set(st, (build = compileBuilder(st.entry.args, isStorage)));
    let j = 0;
    return (
      build
        ? build(() => {
            const r = st.leaves[j++];
            switch (r.k) {
              case 's':
                return get(r.b);
              case 'c':
                return src.constant(r);
              case 'd':
                return src.data(r);
              default:
                return r.v;
            }
          })
        : st.entry.args
    ) as unknown[];
  };
  const done = new Set<number>();
  try {
    for (let n = 0; n < plan.steps.length; n++) {
      const st = plan.steps[n];
      const e = st.entry;
      if (done.has(n)) continue;
      const run = runs?.get(n);
      if (run) {
        // elementwise(outs, inputs, shape) calls as one elementwiseGroups call (merge.ts).
        const groups = run.map((m) => {
          const [outs, ins, shape] = argsOf(plan.steps[m]);
          return { outs, inputs: ins, shape } as Parameters<NonNullable<Backend['elementwiseGroups']>>[0][number];
        });
        const res = backend.elementwiseGroups!(groups);
        run.forEach((m, k) => {
          plan.steps[m].slots.forEach((slot, o) => {
            vals[slot] = res[k][o];
          });
          done.add(m);
        });
        continue;
      }
      if (e.kind === 'effect') {
        if (effects) e.effect!();
        continue;
      }
      if (e.kind === 'dispose') {
        const l = st.leaves[0];
        if (st.free && l.k === 's') backend.dispose(get(l.b));
        continue;
      }
      const args = argsOf(st);
      const res = methods[e.method](...args);
      if (e.single) vals[st.slots[0]] = res as Storage;
      else if (st.slots.length) {
        const out = resultStorages(res, isStorage);
        st.slots.forEach((slot, k) => {
          vals[slot] = out[k];
        });
      }
    }
  } catch (e) {
    for (const s of vals) if (s) backend.dispose(s);
    throw e;
  }
  return vals;
}

const fresh: LeafSource = {
  constant: (r) => ({ kind: 'const', value: r.get(), dtype: r.dtype }),
  data: (r) => r.make(),
};

/** The compiled form of a plan on a backend that has compileReplay, or 'generic'. */
interface Compiled {
  readonly program: ReplayProgram;
  /** Host work in record order: effects, and the getters of dynamic constants and data. */
  readonly host: readonly (
    { k: 'e'; run: () => void } | { k: 'c'; get: () => number } | { k: 'd'; make: () => TypedArray }
  )[];
  readonly nConsts: number;
  readonly nData: number;
  readonly rebindable: readonly boolean[];
}
const compiled = new WeakMap<Plan, Compiled | 'generic'>();
const mergeEnabled = (): boolean =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.SURF_JIT_MERGE !== '0';
// A plan dropped from jit's cache takes its program's GPU buffers with it.
const reaper =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry<ReplayProgram>((p) => p.dispose()) : null;

function compile(plan: Plan, backend: Backend, inputs: readonly Storage[]): Compiled | 'generic' {
  const host: Compiled['host'][number][] = [];
  const constDTypes: string[] = [];
  const dataTemplates: TypedArray[] = [];
  for (const st of plan.steps) {
    if (st.entry.kind === 'effect') host.push({ k: 'e', run: st.entry.effect! });
    st.leaves.forEach((r: PlanStep['leaves'][number], j) => {
      if (r.k === 'c') {
        host.push({ k: 'c', get: r.get });
        constDTypes.push(r.dtype);
      } else if (r.k === 'd') {
        host.push({ k: 'd', make: r.make });
        const l = st.entry.leaves[j];
        if (l.k !== 'd') throw new BackendError('jit: a recorded dynamic array has no template');
        dataTemplates.push(l.arr);
      }
    });
  }
  // One kernel for runs of independent elementwise calls (an optimizer's updates), where the
  // backend can (SURF_JIT_MERGE=0 turns it off, for A/B runs).
  const runs = backend.elementwiseGroups && mergeEnabled() ? elementwiseRuns(plan.steps) : undefined;
  const recipe: ReplayRecipe = {
    inputs,
    fixed: plan.fixed,
    constDTypes: constDTypes as ReplayRecipe['constDTypes'],
    dataTemplates,
    adoptTargets: plan.adopt.map(([dst]) => dst),
    issue: (ins, consts, data) => {
      let ci = 0;
      let di = 0;
      const vals = issue(
        plan,
        backend,
        ins,
        {
          constant: (r) => ({ kind: 'const', value: consts[ci++], dtype: r.dtype }),
          data: () => data[di++],
        },
        false,
        runs,
      );
      return { outputs: plan.outputs.map((s) => vals[s]!), adopt: plan.adopt.map(([, s]) => vals[s]!) };
    },
  };
  const program = backend.compileReplay!(recipe);
  if (!program) return 'generic';
  reaper?.register(plan, program, plan);
  return {
    program,
    host,
    nConsts: constDTypes.length,
    nData: dataTemplates.length,
    rebindable: plan.adopt.map(([, , r]) => r !== undefined),
  };
}

function runCompiled(c: Compiled, plan: Plan, inputs: readonly Storage[]): Storage[] {
  const consts: number[] = new Array(c.nConsts);
  const data: TypedArray[] = new Array(c.nData);
  let ci = 0;
  let di = 0;
  // Host values in record order, as the eager call met them (an optimizer's step count
  // moves before the bias corrections that read it; random data is drawn in the same order).
  for (const h of c.host) {
    if (h.k === 'e') h.run();
    else if (h.k === 'c') consts[ci++] = h.get();
    else data[di++] = h.make();
  }
  const { outputs, rebound } = c.program.run(inputs, consts, data, c.rebindable);
  rebound.forEach((s, i) => {
    if (s) plan.adopt[i][2]!(s);
  });
  return outputs;
}

/** Frees a plan's compiled program now (jit dropped the plan), not when it is collected. */
export function releasePlan(plan: Plan): void {
  const c = compiled.get(plan);
  if (c && c !== 'generic') {
    reaper?.unregister(plan);
    c.program.dispose();
  }
  compiled.delete(plan);
}

/**
 * Runs a plan: the recorded backend calls again, on the given argument storages, with no
 * autograd and no tensors in between. A backend with compileReplay runs it as one compiled
 * program (WebGPU: one pass appended to the open command batch); others get the calls
 * re-issued through the contract. Returns the output storages (the caller's), or null when
 * state the plan relies on was freed meanwhile (then the caller records afresh).
 */
export function replay(plan: Plan, backend: Backend, inputs: readonly Storage[]): Storage[] | null {
  for (const s of plan.fixed) if (!isLive(s)) return null;
  if (!backend.adopt) throw new BackendError(`jit: backend '${backend.name}' cannot replay (it has no adopt())`);
  if (backend.compileReplay) {
    let c = compiled.get(plan);
    if (c && c !== 'generic' && !c.program.ready()) {
      // The state it binds was replaced (a parameter swapped from outside): compile again.
      reaper?.unregister(plan);
      c.program.dispose();
      c = undefined;
    }
    if (c === undefined) compiled.set(plan, (c = compile(plan, backend, inputs)));
    if (c !== 'generic') return runCompiled(c, plan, inputs);
  }
  const vals = issue(plan, backend, inputs, fresh, true);
  for (const [dst, slot, rebind] of plan.adopt) {
    if (isLive(dst) || !rebind) backend.adopt(dst, vals[slot]!);
    else rebind(vals[slot]!);
  }
  return plan.outputs.map((slot) => vals[slot]!);
}
