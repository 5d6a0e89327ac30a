import { ValueError } from '@surf/core';
import { Tensor, gradTap } from '@surf/autograd';
import type { Module } from './module';

/**
 * Module hooks (PyTorch's register_forward_pre_hook, register_forward_hook,
 * register_full_backward_hook). Surf calls modules by `m.forward(...)`, so the first hook
 * installs an own `forward` on the instance (not enumerable: invisible to parameter
 * discovery) that runs the hooks around the class's forward; removing the last hook removes
 * it again. Hooks run whenever the forward runs eagerly; under jit they run while recording.
 */

/** Returns replacement arguments (an array), or nothing to keep them. */
export type ForwardPreHook = (module: Module, inputs: unknown[]) => unknown[] | void;
/** Returns a replacement output, or nothing to keep it. */
export type ForwardHook = (module: Module, inputs: unknown[], output: unknown) => unknown;
/**
 * gradInput: the gradients of the module's tensor arguments (null where none flows), gradOutput:
 * those of its output tensors (flattened, null for outputs that got none). May return a
 * replacement gradInput (supported when one argument requires grad).
 */
export type BackwardHook = (
  module: Module,
  gradInput: (Tensor | null)[],
  gradOutput: (Tensor | null)[],
) => (Tensor | null)[] | void;

export interface RemovableHandle {
  remove(): void;
}

interface Hooks {
  pre: Map<number, ForwardPreHook>;
  fwd: Map<number, ForwardHook>;
  bwd: Map<number, BackwardHook>;
  inner: (...args: unknown[]) => unknown;
}
const HOOKS = new WeakMap<Module, Hooks>();
let nextId = 0;

export function addHook(m: Module, kind: 'pre' | 'fwd' | 'bwd', hook: unknown, where: string): RemovableHandle {
  if (typeof hook !== 'function') throw new ValueError(`${where}: expected a function; got ${typeof hook}`);
  let h = HOOKS.get(m);
  if (!h) {
    const inner = (m.forward as (...a: unknown[]) => unknown).bind(m);
    h = { pre: new Map(), fwd: new Map(), bwd: new Map(), inner };
    HOOKS.set(m, h);
    const hooks = h;
    Object.defineProperty(m, 'forward', {
      value: (...args: unknown[]) => callWithHooks(m, hooks, args),
      enumerable: false,
      configurable: true,
      writable: true,
    });
  }
  const id = nextId++;
  (h[kind] as Map<number, unknown>).set(id, hook);
  return {
    remove: () => {
      const cur = HOOKS.get(m);
      if (!cur) return;
      cur[kind].delete(id);
      if (!cur.pre.size && !cur.fwd.size && !cur.bwd.size) {
        delete (m as unknown as Record<string, unknown>).forward;
        HOOKS.delete(m);
      }
    },
  };
}

/** The output's tensors in order (nested arrays walked), and a way to rebuild it with others. */
function flattenOut(out: unknown): { tensors: Tensor[]; rebuild: (ts: Tensor[]) => unknown } {
  const tensors: Tensor[] = [];
  const walk = (v: unknown): unknown => {
    if (v instanceof Tensor) return tensors.push(v) - 1;
    if (Array.isArray(v)) return v.map(walk);
    return { leaf: v };
  };
  const shape = walk(out);
  const build = (s: unknown, ts: Tensor[]): unknown =>
    typeof s === 'number' ? ts[s] : Array.isArray(s) ? s.map((x) => build(x, ts)) : (s as { leaf: unknown }).leaf;
  return { tensors, rebuild: (ts) => build(shape, ts) };
}

function callWithHooks(m: Module, h: Hooks, args: unknown[]): unknown {
  for (const pre of [...h.pre.values()]) {
    const r = pre(m, args);
    if (r !== undefined) args = Array.isArray(r) ? r : [r];
  }
  const bwd = [...h.bwd.values()];
  const state: TapState = { gradOutput: [], outputs: 0, fire: null };
  if (bwd.length) args = tapInputs(m, bwd, args, state);
  let out = h.inner(...args);
  for (const f of [...h.fwd.values()]) {
    const r = f(m, args, out);
    if (r !== undefined) out = r;
  }
  if (bwd.length) out = tapOutputs(out, state);
  return out;
}

// The backward state of one forward call: gradOutput is filled by the output taps (which run
// first in backward), then the input taps collect gradInput and call the hooks.
interface TapState {
  gradOutput: (Tensor | null)[];
  outputs: number;
  fire: (() => void) | null;
}

function tapInputs(m: Module, hooks: BackwardHook[], args: unknown[], state: TapState): unknown[] {
  const tensorArgs = args.map((a, i) => [a, i] as const).filter(([a]) => a instanceof Tensor) as [Tensor, number][];
  const grads = tensorArgs.map((): Tensor | null => null);
  const live = tensorArgs.filter(([t]) => t.requiresGrad).length;
  let seen = 0;
  const run = (): (Tensor | null)[] => {
    let gin = grads;
    for (const hook of hooks) {
      const r = hook(m, gin, state.gradOutput);
      if (r !== undefined) {
        if (!Array.isArray(r) || r.length !== gin.length)
          throw new ValueError(
            `registerFullBackwardHook: a hook returned ${Array.isArray(r) ? `${r.length} gradients` : typeof r}; expected an array of ${gin.length} (one per tensor argument)`,
          );
        if (live > 1)
          throw new ValueError(
            'registerFullBackwardHook: replacing gradInput is supported for modules with one argument that requires grad',
          );
        gin = r;
      }
    }
    return gin;
  };
  const out = [...args];
  tensorArgs.forEach(([t, i], k) => {
    if (!t.requiresGrad) return;
    out[i] = gradTap(t, (g) => {
      grads[k] = g;
      if (++seen < live) return;
      const gin = run();
      return live === 1 && gin[k] !== grads[k] ? (gin[k] ?? undefined) : undefined;
    });
  });
  // No argument requires grad: the hooks fire once every output's gradient has arrived.
  if (live === 0) state.fire = () => void run();
  return out;
}

function tapOutputs(out: unknown, state: TapState): unknown {
  const { tensors, rebuild } = flattenOut(out);
  state.gradOutput = tensors.map(() => null);
  state.outputs = tensors.filter((t) => t.requiresGrad).length;
  let seen = 0;
  const tapped = tensors.map((t, i) =>
    t.requiresGrad
      ? gradTap(t, (g) => {
          state.gradOutput[i] = g;
          if (++seen === state.outputs && state.fire) state.fire();
        })
      : t,
  );
  return rebuild(tapped);
}
