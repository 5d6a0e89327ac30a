import { BackendError, DTypeError, ShapeError, ValueError, fmtShape } from '@surf/core';
import { Tensor, keep } from '@surf/autograd';

/** A module's state: parameter tensors by dotted name ('0.weight', 'encoder.fc.bias'). */
export type StateDict = Record<string, Tensor>;

export interface LoadResult {
  missingKeys: string[];
  unexpectedKeys: string[];
}

/**
 * Marks a tensor as a module parameter: it requires grad and survives the tidy() it was made
 * in (a model built inside tidy keeps its weights). Modules find parameters by looking at
 * their fields, so `this.weight = parameter(...)` is all a layer does to register one.
 */
export function parameter(t: Tensor): Tensor {
  if (!(t instanceof Tensor)) throw new ValueError(`parameter: expected a Tensor; got ${t === null ? 'null' : typeof t}`);
  if (!t.isLeaf) throw new ValueError(`parameter: the tensor was made by an op; pass a leaf (detach() it first)`);
  t.requiresGrad_(true);
  return keep(t);
}

/**
 * PyTorch's nn.Module: subclasses set parameters and sub-modules as fields and implement
 * forward(). Registration is by discovery: a field holding a Tensor that requires grad is a
 * parameter, a field holding a Module is a child, and arrays of them register each element
 * under `field.i` (PyTorch's ModuleList). Names follow field order, so they match PyTorch's
 * for the same layout, which is what makes state dicts interchangeable.
 */
export abstract class Module {
  /** Training mode (Dropout drops); eval() clears it. */
  training = true;

  /** The computation. Call it directly: `model.forward(x)`. */
  abstract forward(...inputs: any[]): Tensor;

  /** Direct parameters and children, in registration order. Containers override this. */
  protected entries(): [string, Tensor | Module][] {
    const out: [string, Tensor | Module][] = [];
    for (const [key, v] of Object.entries(this)) {
      if (v instanceof Module || (v instanceof Tensor && v.requiresGrad)) out.push([key, v]);
      else if (Array.isArray(v)) {
        v.forEach((x, i) => {
          if (x instanceof Module || (x instanceof Tensor && x.requiresGrad)) out.push([`${key}.${i}`, x]);
        });
      }
    }
    return out;
  }

  /** Direct children with their names. */
  namedChildren(): [string, Module][] {
    return this.entries().filter((e): e is [string, Module] => e[1] instanceof Module);
  }

  children(): Module[] {
    return this.namedChildren().map(([, m]) => m);
  }

  /** This module and every descendant, depth first, with dotted names ('' for this one). */
  namedModules(prefix = ''): [string, Module][] {
    const out: [string, Module][] = [[prefix, this]];
    const seen = new Set<Module>([this]);
    const walk = (m: Module, pre: string) => {
      for (const [name, c] of m.namedChildren()) {
        if (seen.has(c)) continue;
        seen.add(c);
        const full = pre ? `${pre}.${name}` : name;
        out.push([full, c]);
        walk(c, full);
      }
    };
    walk(this, prefix);
    return out;
  }

  modules(): Module[] {
    return this.namedModules().map(([, m]) => m);
  }

  /** Every parameter with its dotted name; a tensor shared by two fields is listed once. */
  namedParameters(): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    const seen = new Set<Tensor>();
    for (const [pre, m] of this.namedModules()) {
      for (const [name, v] of m.entries()) {
        if (!(v instanceof Tensor) || seen.has(v)) continue;
        seen.add(v);
        out.push([pre ? `${pre}.${name}` : name, v]);
      }
    }
    return out;
  }

  parameters(): Tensor[] {
    return this.namedParameters().map(([, p]) => p);
  }

  /** Sets training mode on this module and all descendants. */
  train(mode = true): this {
    for (const m of this.modules()) m.training = mode;
    return this;
  }

  eval(): this {
    return this.train(false);
  }

  /**
   * The parameters by dotted name. These are the live tensors, not copies (as PyTorch's
   * state_dict shares storage): save() them, do not dispose them.
   */
  stateDict(): StateDict {
    const out: StateDict = {};
    for (const [name, p] of this.namedParameters()) out[name] = p;
    return out;
  }

  /**
   * Copies values into the parameters (no graph). Every key is checked before anything is
   * written: a shape or dtype mismatch always throws; missing or extra keys throw unless
   * strict is false, in which case they are reported. The parameters keep their identity, so
   * an optimizer built on them stays valid.
   */
  loadStateDict(dict: StateDict | Map<string, Tensor>, opts: { strict?: boolean } = {}): LoadResult {
    const strict = opts.strict ?? true;
    if (!(dict instanceof Map) && (dict === null || typeof dict !== 'object')) throw new ValueError(`loadStateDict: expected an object or Map of tensors; got ${dict === null ? 'null' : typeof dict}`);
    const given = dict instanceof Map ? dict : new Map(Object.entries(dict));
    const own = new Map(this.namedParameters());
    const missingKeys = [...own.keys()].filter((k) => !given.has(k));
    const unexpectedKeys = [...given.keys()].filter((k) => !own.has(k));
    if (strict && (missingKeys.length || unexpectedKeys.length)) {
      const parts: string[] = [];
      if (missingKeys.length) parts.push(`missing keys: ${missingKeys.join(', ')}`);
      if (unexpectedKeys.length) parts.push(`unexpected keys: ${unexpectedKeys.join(', ')}`);
      throw new ValueError(`loadStateDict: the state dict does not match ${this.constructor.name}'s parameters (${parts.join('; ')}); pass { strict: false } to load the keys that match`);
    }
    const pairs: [Tensor, Tensor][] = [];
    for (const [name, p] of own) {
      const v = given.get(name);
      if (v === undefined) continue;
      if (!(v instanceof Tensor)) throw new ValueError(`loadStateDict: '${name}' is ${v === null ? 'null' : typeof v}; expected a Tensor`);
      if (v.isDisposed) throw new ValueError(`loadStateDict: '${name}' was disposed`);
      if (v.shape.length !== p.shape.length || v.shape.some((d, i) => d !== p.shape[i])) {
        throw new ShapeError(`loadStateDict: '${name}' has shape ${fmtShape(v.shape)}; the parameter has shape ${fmtShape(p.shape)}`);
      }
      if (v.dtype !== p.dtype) throw new DTypeError(`loadStateDict: '${name}' has dtype ${v.dtype}; the parameter has dtype ${p.dtype}`);
      if (v.ndarray.backend !== p.ndarray.backend) throw new BackendError(`loadStateDict: '${name}' lives on backend ${v.ndarray.backend.name}, the parameter on ${p.ndarray.backend.name}; load() it again after init()`);
      pairs.push([p, v]);
    }
    // assign() shares the source's storage; updates replace storage rather than write into
    // it, so the parameter and the dict never see each other's later changes.
    for (const [p, v] of pairs) p.assign(v);
    return { missingKeys, unexpectedKeys };
  }

  /** Number of parameter elements. */
  numParameters(): number {
    return this.parameters().reduce((a, p) => a + p.numel, 0);
  }

  /** The part inside the parentheses of toString(), e.g. 'in=4, out=8, bias=true'. */
  protected extraRepr(): string {
    return '';
  }

  private reprLines(): string[] {
    const name = this.constructor.name;
    const extra = this.extraRepr();
    const own = this.entries().filter((e): e is [string, Tensor] => e[1] instanceof Tensor);
    const params = own.length ? `# ${own.map(([n, p]) => `${n} ${fmtShape(p.shape)}`).join(', ')} (${own.reduce((a, [, p]) => a + p.numel, 0)} params)` : '';
    const kids = this.namedChildren();
    if (!kids.length) return [`${name}(${extra})${params ? `  ${params}` : ''}`];
    const lines = [`${name}(${extra}`];
    if (params) lines.push(`  ${params}`);
    for (const [n, c] of kids) {
      const sub = c.reprLines();
      lines.push(`  (${n}): ${sub[0]}`, ...sub.slice(1).map((l) => `  ${l}`));
    }
    lines.push(')');
    return lines;
  }

  /** The module tree with each layer's settings, parameter shapes and counts. */
  toString(): string {
    return [...this.reprLines(), `Total parameters: ${this.numParameters()}`].join('\n');
  }
}
