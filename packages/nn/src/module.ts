import { BackendError, DTYPES, DTypeError, ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import {
  BackendTarget,
  Tensor,
  bumpStateEpoch,
  guardField,
  keep,
  moveInPlace,
  moveInPlaceAsync,
  resolveBackend,
  trackStateOwner,
} from '@surf/autograd';
import { ModelSummary, SummaryOptions, summarize } from './summary';
import { guardForward } from './forward-input';
import { BackwardHook, ForwardHook, ForwardPreHook, RemovableHandle, addHook } from './hooks';

/** A module's state: parameter tensors by dotted name ('0.weight', 'encoder.fc.bias'). */
export type StateDict = Record<string, Tensor>;

export interface LoadResult {
  missingKeys: string[];
  unexpectedKeys: string[];
}

// Tensors made parameters (by parameter() or found requiring grad in a module field): they
// stay parameters, in parameters() and stateDict(), when later frozen with requiresGrad_(false).
const PARAMS = new WeakSet<Tensor>();

// Per module, the field names registered as buffers and whether each is persistent (saved in
// the state dict). Kept outside the object so field discovery never sees it.
const BUFFERS = new WeakMap<Module, Map<string, boolean>>();

/** True for tensors registered as module parameters (trainable or frozen). */
export function isParameter(t: unknown): boolean {
  return t instanceof Tensor && PARAMS.has(t);
}

/**
 * Marks a tensor as a module parameter: it requires grad and survives the tidy() it was made
 * in (a model built inside tidy keeps its weights). Modules find parameters by looking at
 * their fields, so `this.weight = parameter(...)` is all a layer does to register one.
 */
export function parameter(t: Tensor): Tensor {
  if (!(t instanceof Tensor))
    throw new ValueError(`parameter: expected a Tensor; got ${t === null ? 'null' : typeof t}`);
  if (!t.isLeaf) throw new ValueError(`parameter: the tensor was made by an op; pass a leaf (detach() it first)`);
  t.requiresGrad_(true);
  PARAMS.add(t);
  return keep(t);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  return v.constructor?.name ?? 'object';
}

/** A field's tensor is a parameter when marked as one, or when it is a leaf that requires grad. */
function asParameter(v: Tensor): boolean {
  if (PARAMS.has(v)) return true;
  if (v.requiresGrad && v.isLeaf) {
    PARAMS.add(v);
    return true;
  }
  return false;
}

/** Whether a container (Map, Set, plain object, nested array) holds modules or parameters. */
function holdsState(v: unknown, depth = 0): boolean {
  if (v instanceof Module) return true;
  if (v instanceof Tensor) return PARAMS.has(v) || (v.requiresGrad && v.isLeaf);
  if (depth > 2 || v === null || typeof v !== 'object') return false;
  const vals = Array.isArray(v)
    ? v
    : v instanceof Map || v instanceof Set
      ? [...v.values()]
      : Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null
        ? Object.values(v)
        : [];
  return vals.some((x) => holdsState(x, depth + 1));
}

/**
 * PyTorch's nn.Module: subclasses set parameters and sub-modules as fields and implement
 * forward(). Registration is by discovery: a field holding a Module is a child, a field
 * holding a parameter (parameter(), or a leaf tensor that requires grad) is a parameter, a
 * field registered with registerBuffer() is a buffer, and arrays of modules or parameters
 * register each element under `field.i` (as nn.ModuleList does). Names follow field order,
 * so they match PyTorch's for the same layout, which is what makes state dicts interchangeable.
 * Modules inside a Map, a Set, a plain object or a nested array are an error (Surf cannot see
 * them there; use ModuleDict/ModuleList); `#private` fields are invisible to discovery.
 */
export abstract class Module {
  // Private, so field discovery never sees it; an accessor, so jit can guard it.
  #training = true;

  constructor() {
    // jit finds which field holds each parameter it binds, to notice `module.weight = t`.
    trackStateOwner(this);
    guardForward(this, Module.prototype);
  }

  /**
   * Training mode (Dropout drops); eval() clears it. A jitted function that read it replays
   * only while it keeps the value it had when recorded (a change records again).
   */
  get training(): boolean {
    guardField(this, 'training', this.#training);
    return this.#training;
  }

  set training(mode: boolean) {
    if (mode !== this.#training) bumpStateEpoch();
    this.#training = mode;
  }

  /**
   * The computation. Call it directly: `model.forward(x)`. Most modules return a Tensor; some
   * return a tuple as PyTorch's do (LSTM's `[output, [h, c]]`), hence the loose base type.
   */
  abstract forward(...inputs: any[]): any;

  /**
   * forward's first argument must be a Tensor (a SurfTypeError naming the module otherwise).
   * A subclass whose forward takes other inputs (an object, an array) sets this to false.
   */
  static tensorInput = true;

  /**
   * Direct parameters, buffers and children, in registration order. Containers override this.
   * A tensor entry is a buffer when its name was registered with registerBuffer().
   */
  protected entries(): [string, Tensor | Module][] {
    const out: [string, Tensor | Module][] = [];
    const buffers = BUFFERS.get(this);
    for (const [key, v] of Object.entries(this)) {
      if (buffers?.has(key)) {
        if (v instanceof Tensor) out.push([key, v]);
        else if (v !== null && v !== undefined)
          throw new ValueError(
            `${this.constructor.name}: buffer '${key}' holds ${describe(v)}; expected a Tensor or null`,
          );
      } else if (v instanceof Module || (v instanceof Tensor && asParameter(v))) out.push([key, v]);
      else if (Array.isArray(v)) {
        v.forEach((x, i) => {
          if (x instanceof Module || (x instanceof Tensor && asParameter(x))) out.push([`${key}.${i}`, x]);
          else if (holdsState(x)) throw this.unseen(`${key}[${i}]`, x);
        });
      } else if (v !== null && typeof v === 'object' && !(v instanceof Tensor) && holdsState(v))
        throw this.unseen(key, v);
    }
    return out;
  }

  private unseen(field: string, v: unknown): ValueError {
    const kind =
      v instanceof Map ? 'a Map' : v instanceof Set ? 'a Set' : Array.isArray(v) ? 'a nested array' : 'a plain object';
    return new ValueError(
      `${this.constructor.name}: field '${field}' is ${kind} holding modules or parameters, which Surf cannot register (they would be missing from parameters() and stateDict()); use nn.ModuleDict for named modules or nn.ModuleList for a list`,
    );
  }

  /** The buffer names of this module (not its children), with their persistence. */
  private bufferNames(): Map<string, boolean> {
    return BUFFERS.get(this) ?? new Map();
  }

  /**
   * Registers a tensor the module holds but does not train (running statistics, constants)
   * as the field `name` (PyTorch's register_buffer): it shows in buffers(), moves with to(),
   * and, when persistent (default), is saved in stateDict(). null reserves the name with no
   * tensor. Reassigning the field later (this.name = newTensor) keeps it a buffer.
   */
  registerBuffer(name: string, tensor: Tensor | null, opts: { persistent?: boolean } = {}): void {
    parseOptions(`${this.constructor.name}.registerBuffer`, opts, { persistent: 'boolean' });
    if (typeof name !== 'string' || name === '' || name.includes('.'))
      throw new ValueError(
        `${this.constructor.name}.registerBuffer: name must be a non-empty string without '.'; got ${JSON.stringify(name)}`,
      );
    if (tensor !== null && !(tensor instanceof Tensor))
      throw new ValueError(
        `${this.constructor.name}.registerBuffer: '${name}' must be a Tensor or null; got ${describe(tensor)}`,
      );
    const cur = (this as unknown as Record<string, unknown>)[name];
    if (cur instanceof Module || (cur instanceof Tensor && PARAMS.has(cur)))
      throw new ValueError(
        `${this.constructor.name}.registerBuffer: '${name}' already holds a ${cur instanceof Module ? 'module' : 'parameter'}`,
      );
    let names = BUFFERS.get(this);
    if (!names) BUFFERS.set(this, (names = new Map()));
    names.set(name, opts.persistent ?? true);
    (this as unknown as Record<string, unknown>)[name] = tensor === null ? null : keep(tensor);
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

  /** Own tensors split into parameters and buffers (with persistence), in field order. */
  private ownTensors(): { params: [string, Tensor][]; buffers: [string, Tensor, boolean][] } {
    const names = this.bufferNames();
    const params: [string, Tensor][] = [];
    const buffers: [string, Tensor, boolean][] = [];
    for (const [name, v] of this.entries()) {
      if (!(v instanceof Tensor)) continue;
      if (names.has(name)) buffers.push([name, v, names.get(name)!]);
      else params.push([name, v]);
    }
    return { params, buffers };
  }

  /**
   * Every parameter with its dotted name, trainable or frozen (requiresGrad false), as
   * PyTorch's named_parameters; a tensor shared by two fields is listed once.
   */
  namedParameters(): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    const seen = new Set<Tensor>();
    for (const [pre, m] of this.namedModules()) {
      for (const [name, v] of m.ownTensors().params) {
        if (seen.has(v)) continue;
        seen.add(v);
        out.push([pre ? `${pre}.${name}` : name, v]);
      }
    }
    return out;
  }

  parameters(): Tensor[] {
    return this.namedParameters().map(([, p]) => p);
  }

  /** Every buffer (persistent or not) with its dotted name. */
  namedBuffers(): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    const seen = new Set<Tensor>();
    for (const [pre, m] of this.namedModules()) {
      for (const [name, v] of m.ownTensors().buffers) {
        if (seen.has(v)) continue;
        seen.add(v);
        out.push([pre ? `${pre}.${name}` : name, v]);
      }
    }
    return out;
  }

  buffers(): Tensor[] {
    return this.namedBuffers().map(([, b]) => b);
  }

  /** Freezes (false) or unfreezes (true) every parameter, as PyTorch's requires_grad_. */
  requiresGrad_(requiresGrad = true): this {
    if (typeof requiresGrad !== 'boolean')
      throw new ValueError(`${this.constructor.name}.requiresGrad_: expected a boolean; got ${describe(requiresGrad)}`);
    for (const p of this.parameters()) p.requiresGrad_(requiresGrad);
    return this;
  }

  /** Drops every parameter's gradient (PyTorch's zero_grad with set_to_none). */
  zeroGrad(): void {
    for (const p of this.parameters()) p.grad = null;
  }

  /** Calls fn on every descendant, children first, then on this module (PyTorch's apply). */
  apply(fn: (m: Module) => void): this {
    if (typeof fn !== 'function')
      throw new ValueError(`${this.constructor.name}.apply: expected a function; got ${describe(fn)}`);
    for (const c of this.children()) c.apply(fn);
    fn(this);
    return this;
  }

  /** Every parameter, buffer and gradient of the tree, each tensor once. */
  private allTensors(): Tensor[] {
    return [...new Set([...this.parameters(), ...this.buffers()])];
  }

  /**
   * Moves every parameter and buffer (and gradient) to a backend in place (PyTorch's
   * module.to(device)): the tensors keep their identity, so build the optimizer after or
   * before, either works. Synchronous from the CPU backend; from a GPU use toAsync().
   */
  to(backend: BackendTarget): this {
    const b = resolveBackend(`${this.constructor.name}.to`, backend);
    const ts = this.allTensors();
    // Check first, so a failure moves nothing.
    for (const t of ts) {
      const nd = t.ndarray;
      if (nd.backend !== b && nd.backend.name !== 'cpu')
        throw new ValueError(
          `${this.constructor.name}.to: a tensor of shape ${fmtShape(nd.shape)} lives on '${nd.backend.name}'; reading it back is asynchronous, so use await module.toAsync(...)`,
        );
    }
    for (const t of ts) moveInPlace(`${this.constructor.name}.to`, t, b);
    return this;
  }

  /** to() from any backend (reads GPU data back). */
  async toAsync(backend: BackendTarget): Promise<this> {
    const b = resolveBackend(`${this.constructor.name}.toAsync`, backend);
    for (const t of this.allTensors()) await moveInPlaceAsync(`${this.constructor.name}.toAsync`, t, b);
    return this;
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
   * Every parameter (trainable or frozen) and persistent buffer by dotted name, in PyTorch's
   * order (each module's parameters, then its buffers, then its children). These are the
   * live tensors, not copies (as PyTorch's state_dict shares storage): save() them, do not
   * dispose them.
   */
  stateDict(): StateDict {
    const out: StateDict = {};
    const seen = new Set<Tensor>();
    for (const [pre, m] of this.namedModules()) {
      const { params, buffers } = m.ownTensors();
      const own: [string, Tensor][] = [
        ...params,
        ...buffers.filter(([, , persistent]) => persistent).map(([n, t]) => [n, t] as [string, Tensor]),
      ];
      for (const [name, t] of own) {
        if (seen.has(t)) continue;
        seen.add(t);
        out[pre ? `${pre}.${name}` : name] = t;
      }
    }
    return out;
  }

  /**
   * Copies values into the parameters (no graph). Every key is checked before anything is
   * written: a shape or dtype mismatch always throws; missing or extra keys throw unless
   * strict is false, in which case they are reported. The parameters keep their identity, so
   * an optimizer built on them stays valid.
   */
  loadStateDict(dict: StateDict | Map<string, Tensor>, opts: { strict?: boolean } = {}): LoadResult {
    const strict = parseOptions('loadStateDict', opts, { strict: 'boolean' }).strict ?? true;
    if (!(dict instanceof Map) && (dict === null || typeof dict !== 'object'))
      throw new ValueError(
        `loadStateDict: expected an object or Map of tensors; got ${dict === null ? 'null' : typeof dict}`,
      );
    const given = dict instanceof Map ? dict : new Map(Object.entries(dict));
    const own = new Map(Object.entries(this.stateDict()));
    const missingKeys = [...own.keys()].filter((k) => !given.has(k));
    const unexpectedKeys = [...given.keys()].filter((k) => !own.has(k));
    if (strict && (missingKeys.length || unexpectedKeys.length)) {
      const parts: string[] = [];
      if (missingKeys.length) parts.push(`missing keys: ${missingKeys.join(', ')}`);
      if (unexpectedKeys.length) parts.push(`unexpected keys: ${unexpectedKeys.join(', ')}`);
      throw new ValueError(
        `loadStateDict: the state dict does not match ${this.constructor.name}'s parameters (${parts.join('; ')}); pass { strict: false } to load the keys that match`,
      );
    }
    const pairs: [Tensor, Tensor][] = [];
    for (const [name, p] of own) {
      const v = given.get(name);
      if (v === undefined) continue;
      if (!(v instanceof Tensor))
        throw new ValueError(`loadStateDict: '${name}' is ${v === null ? 'null' : typeof v}; expected a Tensor`);
      if (v.isDisposed) throw new ValueError(`loadStateDict: '${name}' was disposed`);
      if (v.shape.length !== p.shape.length || v.shape.some((d, i) => d !== p.shape[i])) {
        throw new ShapeError(
          `loadStateDict: '${name}' has shape ${fmtShape(v.shape)}; the parameter has shape ${fmtShape(p.shape)}`,
        );
      }
      if (v.dtype !== p.dtype)
        throw new DTypeError(`loadStateDict: '${name}' has dtype ${v.dtype}; the parameter has dtype ${p.dtype}`);
      if (v.ndarray.backend !== p.ndarray.backend)
        throw new BackendError(
          `loadStateDict: '${name}' lives on backend ${v.ndarray.backend.name}, the parameter on ${p.ndarray.backend.name}; load() it again after init()`,
        );
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

  // summary: torchinfo-style table
  /**
   * Layers, output shapes (from one forward pass on zeros of `inputShape` under noGrad, in eval
   * mode, on the parameters' backend) and parameter counts, as torchinfo's summary; print it
   * with String() or console.log(String(...)).
   */
  summary(inputShape: number[] | number[][], opts: SummaryOptions = {}): ModelSummary {
    return summarize(
      this,
      inputShape,
      parseOptions<SummaryOptions>(`${this.constructor.name}.summary`, opts, { dtype: DTYPES }),
    );
  }

  // hooks: run around forward (hooks.ts)
  /** Runs `hook(module, args)` before each forward; it may return replacement arguments (an array). */
  registerForwardPreHook(hook: ForwardPreHook): RemovableHandle {
    return addHook(this, 'pre', hook, `${this.constructor.name}.registerForwardPreHook`);
  }

  /** Runs `hook(module, args, output)` after each forward; it may return a replacement output. */
  registerForwardHook(hook: ForwardHook): RemovableHandle {
    return addHook(this, 'fwd', hook, `${this.constructor.name}.registerForwardHook`);
  }

  /** Runs `hook(module, gradInput, gradOutput)` when the gradients of this call's arguments are computed. */
  registerFullBackwardHook(hook: BackwardHook): RemovableHandle {
    return addHook(this, 'bwd', hook, `${this.constructor.name}.registerFullBackwardHook`);
  }

  /** The part inside the parentheses of toString(), e.g. 'in=4, out=8, bias=true'. */
  protected extraRepr(): string {
    return '';
  }

  private reprLines(): string[] {
    const name = this.constructor.name;
    const extra = this.extraRepr();
    const { params: own, buffers } = this.ownTensors();
    const bufs = buffers.length ? `; buffers ${buffers.map(([n, b]) => `${n} ${fmtShape(b.shape)}`).join(', ')}` : '';
    const params =
      own.length || buffers.length
        ? `# ${own.map(([n, p]) => `${n} ${fmtShape(p.shape)}`).join(', ')} (${own.reduce((a, [, p]) => a + p.numel, 0)} params)${bufs}`
        : '';
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
