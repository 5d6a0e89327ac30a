import {
  DTypeError,
  NDArray,
  OptionRule,
  ShapeError,
  SurfTypeError,
  ValueError,
  fmtShape,
  parseOptions,
  showValue,
} from '@surf/core';
import { Tensor, hostEffect } from '@surf/autograd';
import { isParameter } from '../module';

/** Per-group hyperparameters every optimizer has; `initialLr` is set by the first scheduler. */
export interface BaseOptions {
  lr: number;
  initialLr?: number;
}

export type ParamGroup<O> = O & { params: Tensor[] };

/** What constructors accept: tensors, or groups of tensors with their own option overrides. */
export type ParamsArg<O> = Iterable<Tensor> | readonly ({ params: Iterable<Tensor> } & Partial<O>)[];

/** One parameter's state: its step count and named arrays (momentum buffers, moments). */
export interface ParamState {
  step: number;
  arrays: Record<string, NDArray>;
}

export interface OptimizerStateDict<O> {
  /** By parameter index (groups' params numbered in order), as PyTorch's. */
  state: Record<number, { step: number } & Record<string, Tensor | number>>;
  paramGroups: (O & { params: number[] })[];
}

/**
 * The machinery shared by SGD and Adam(W): parameter groups, per-parameter state kept as
 * core NDArrays (never tracked by tidy, so a step inside tidy keeps its state), zeroGrad and
 * state dicts. Subclasses implement update(): ONE fused NDArray.elementwise call that
 * returns the new parameter and new state arrays.
 */
export abstract class Optimizer<O extends BaseOptions> {
  readonly paramGroups: ParamGroup<O>[];
  protected readonly state = new Map<Tensor, ParamState>();

  constructor(
    readonly name: string,
    params: ParamsArg<O>,
    opts: unknown,
    defaults: O,
    spec: OptimizerSpec<O>,
  ) {
    // The constructor's options and each group's overrides go through the same strict parser:
    // `{ weight_decay: 0.1 }` (ported from PyTorch) must not train without weight decay.
    const given = { ...defaults, ...parseOptions<O>(name, opts, spec as never) };
    if (
      params === null ||
      typeof params !== 'object' ||
      typeof (params as Iterable<unknown>)[Symbol.iterator] !== 'function'
    ) {
      throw new ValueError(`${name}: params must be an array of tensors (model.parameters()) or of parameter groups`);
    }
    const list = [...(params as Iterable<unknown>)];
    if (list.length === 0) throw new ValueError(`${name}: got an empty parameter list`);
    const groups = list.every((x) => x instanceof Tensor)
      ? [{ params: list as Tensor[] }]
      : (list as ({ params: Iterable<Tensor> } & Partial<O>)[]);
    const seen = new Set<Tensor>();
    this.paramGroups = groups.map((g, gi) => {
      if (
        g === null ||
        typeof g !== 'object' ||
        !g.params ||
        typeof (g.params as Iterable<Tensor>)[Symbol.iterator] !== 'function'
      ) {
        throw new ValueError(`${name}: parameter group ${gi} is not a tensor or a { params: [...] } group`);
      }
      const ps = [...g.params];
      ps.forEach((p, i) => {
        if (!(p instanceof Tensor)) throw new ValueError(`${name}: group ${gi} param ${i} is not a Tensor`);
        // Frozen parameters (requiresGrad false) are accepted, as PyTorch does: they have no
        // grad, so step() skips them until they are unfrozen.
        if (!p.isLeaf)
          throw new ValueError(
            `${name}: group ${gi} param ${i} (shape ${fmtShape(p.shape)}) was made by an op; an optimizer updates leaves (model.parameters())`,
          );
        if (!p.requiresGrad && !isParameter(p))
          throw new ValueError(
            `${name}: group ${gi} param ${i} (shape ${fmtShape(p.shape)}) does not require grad and is not a (frozen) module parameter; pass model.parameters() or tensors made with requiresGrad: true`,
          );
        if (p.dtype !== 'float32')
          throw new ValueError(
            `${name}: group ${gi} param ${i} (shape ${fmtShape(p.shape)}) has dtype ${p.dtype}; expected float32`,
          );
        if (seen.has(p))
          throw new ValueError(`${name}: a parameter appears in more than one place (group ${gi}, index ${i})`);
        seen.add(p);
      });
      const { params: _params, ...overrides } = g;
      const parsed = parseOptions<O>(`${name}: parameter group ${gi}`, overrides, spec as never);
      const group = { ...given, ...parsed, params: ps } as ParamGroup<O>;
      this.validate(group);
      return group;
    });
  }

  /** Throws a ValueError naming the bad hyperparameter. */
  protected abstract validate(opts: O): void;

  /** Computes the new parameter and state in one fused kernel; returns them. */
  protected abstract update(
    p: NDArray,
    g: NDArray,
    state: ParamState,
    group: O,
  ): { param: NDArray; arrays: Record<string, NDArray> };

  /** Applies one update to every parameter that has a gradient. Never reads back. */
  step(): void {
    for (const group of this.paramGroups) {
      for (const p of group.params) {
        const g = p.grad;
        if (!g) continue;
        if (g.dtype !== 'float32')
          throw new DTypeError(
            `${this.name}.step: a gradient of shape ${fmtShape(g.shape)} has dtype ${g.dtype}; expected float32`,
          );
        let st = this.state.get(p);
        if (!st) {
          st = { step: 0, arrays: {} };
          this.state.set(p, st);
        }
        const counted = st;
        hostEffect(() => {
          counted.step++;
        }); // jit: a replayed step counts too
        const { param, arrays } = this.update(p.ndarray, g.ndarray, st, group);
        p.assign(param);
        param.dispose();
        for (const [k, a] of Object.entries(arrays)) {
          if (st.arrays[k] !== a) st.arrays[k]?.dispose();
          st.arrays[k] = a;
        }
      }
    }
  }

  /** Drops every gradient (PyTorch's set_to_none), freeing its buffer. */
  zeroGrad(): void {
    for (const group of this.paramGroups) for (const p of group.params) p.grad = null;
  }

  private indexed(): Tensor[] {
    return this.paramGroups.flatMap((g) => g.params);
  }

  /** Hyperparameters and per-parameter state; tensors are new references the caller owns. */
  stateDict(): OptimizerStateDict<O> {
    const all = this.indexed();
    const state: OptimizerStateDict<O>['state'] = {};
    all.forEach((p, i) => {
      const st = this.state.get(p);
      if (!st) return;
      const entry: { step: number } & Record<string, Tensor | number> = { step: st.step };
      for (const [k, a] of Object.entries(st.arrays)) entry[k] = Tensor.fromNDArray(a.reshape(a.shape));
      state[i] = entry;
    });
    let k = 0;
    const paramGroups = this.paramGroups.map((g) => {
      const { params, ...rest } = g;
      return { ...(rest as unknown as O), params: params.map(() => k++) };
    });
    return { state, paramGroups };
  }

  /** Restores hyperparameters and state saved by stateDict() for the same parameter layout. */
  loadStateDict(sd: OptimizerStateDict<O>): void {
    if (!sd || !Array.isArray(sd.paramGroups) || typeof sd.state !== 'object')
      throw new ValueError(`${this.name}.loadStateDict: expected { state, paramGroups } from stateDict()`);
    if (
      sd.paramGroups.length !== this.paramGroups.length ||
      sd.paramGroups.some((g, i) => g.params.length !== this.paramGroups[i].params.length)
    ) {
      throw new ValueError(
        `${this.name}.loadStateDict: the saved groups hold [${sd.paramGroups.map((g) => g.params.length).join(', ')}] parameters; this optimizer's hold [${this.paramGroups.map((g) => g.params.length).join(', ')}]`,
      );
    }
    // Hyperparameters pass the constructor's checks before any is written: a checkpoint is
    // data, and lr -1 or betas [2, 2] would turn the weights to NaN at the next step.
    const groups = sd.paramGroups.map((g, i) => this.checkedGroup(g, i));
    const all = this.indexed();
    const next = new Map<Tensor, ParamState>();
    for (const [key, entry] of Object.entries(sd.state)) {
      const p = /^(0|[1-9][0-9]*)$/.test(key) ? all[Number(key)] : undefined;
      if (!p)
        throw new ValueError(`${this.name}.loadStateDict: state for parameter ${key}, but there are ${all.length}`);
      if (entry === null || typeof entry !== 'object')
        throw new ValueError(`${this.name}.loadStateDict: state ${key} is not an object`);
      if (!Number.isSafeInteger(entry.step) || entry.step < 0)
        throw new ValueError(
          `${this.name}.loadStateDict: state ${key}.step must be an integer >= 0; got ${JSON.stringify(entry.step)}`,
        );
      const arrays: Record<string, NDArray> = {};
      for (const [k, v] of Object.entries(entry)) {
        if (k === 'step') continue;
        if (!(v instanceof Tensor))
          throw new ValueError(`${this.name}.loadStateDict: state ${key}.${k} is not a Tensor`);
        if (v.dtype !== 'float32')
          throw new DTypeError(`${this.name}.loadStateDict: state ${key}.${k} has dtype ${v.dtype}; expected float32`);
        if (v.shape.length !== p.shape.length || v.shape.some((d, i) => d !== p.shape[i])) {
          throw new ShapeError(
            `${this.name}.loadStateDict: state ${key}.${k} has shape ${fmtShape(v.shape)}; the parameter has ${fmtShape(p.shape)}`,
          );
        }
        arrays[k] = v.ndarray.contiguous();
      }
      next.set(p, { step: entry.step, arrays });
    }
    for (const st of this.state.values()) Object.values(st.arrays).forEach((a) => a.dispose());
    this.state.clear();
    next.forEach((v, k) => this.state.set(k, v));
    groups.forEach((g, i) => Object.assign(this.paramGroups[i], g));
  }

  /**
   * A saved group's hyperparameters merged over this optimizer's group i and validated as the
   * constructor validates them; keys this optimizer does not have are refused.
   */
  private checkedGroup(g: unknown, i: number): Partial<O> {
    const where = `${this.name}.loadStateDict: paramGroups[${i}]`;
    if (g === null || typeof g !== 'object' || Array.isArray(g)) throw new ValueError(`${where} is not an object`);
    const { params: _params, ...current } = this.paramGroups[i];
    const known = new Set([...Object.keys(current), 'initialLr']);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(g)) {
      if (k === 'params') continue;
      if (!known.has(k))
        throw new ValueError(
          `${where} has the key '${k}', which ${this.name} does not have (known: ${[...known].join(', ')})`,
        );
      out[k] = (g as Record<string, unknown>)[k];
    }
    if (out.initialLr !== undefined) checkNonNegative(where, 'initialLr', out.initialLr);
    try {
      this.validate({ ...(current as unknown as O), ...out });
    } catch (e) {
      throw new ValueError(`${where}: ${(e as Error).message}`);
    }
    return out as Partial<O>;
  }

  /** Frees the optimizer's state buffers. */
  dispose(): void {
    for (const st of this.state.values()) Object.values(st.arrays).forEach((a) => a.dispose());
    this.state.clear();
  }
}

/** The option rules of one optimizer (every key but the scheduler-set `initialLr`). */
export type OptimizerSpec<O> = { readonly [K in Exclude<keyof O, 'initialLr'>]-?: OptionRule };

/** Adam's betas: two numbers in [0, 1), as torch.optim checks them. */
export function betasRule(v: unknown, where: string): void {
  if (!Array.isArray(v)) throw new SurfTypeError(`${where} must be an array [beta1, beta2]; got ${showValue(v)}`);
  if (v.length !== 2 || !v.every((b) => typeof b === 'number' && b >= 0 && b < 1))
    throw new ValueError(`${where} must be two numbers in [0, 1); got ${JSON.stringify(v)}`);
}

/** Shared hyperparameter checks. */
export function checkNonNegative(op: string, name: string, v: unknown): void {
  if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v))
    throw new ValueError(`${op}: ${name} must be a finite number >= 0; got ${v}`);
}
