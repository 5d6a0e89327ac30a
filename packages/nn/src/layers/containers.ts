import { ValueError } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';

function checkModule(op: string, m: unknown, where: string): Module {
  if (!(m instanceof Module))
    throw new ValueError(
      `${op}: ${where} is ${m === null ? 'null' : typeof m === 'object' ? (m.constructor?.name ?? 'an object') : typeof m}; expected a Module`,
    );
  return m;
}

/** Holds sub-modules in a list, registered as '0', '1', ... (PyTorch's nn.ModuleList). */
export class ModuleList extends Module implements Iterable<Module> {
  private readonly items: Module[] = [];

  constructor(modules: Iterable<Module> = []) {
    super();
    this.extend(modules);
  }

  protected override entries(): [string, Tensor | Module][] {
    return this.items.map((m, i) => [String(i), m]);
  }

  get length(): number {
    return this.items.length;
  }

  /** The module at index i (negative counts from the end). */
  at(i: number): Module {
    const m = Number.isInteger(i) ? this.items.at(i) : undefined;
    if (!m) throw new ValueError(`ModuleList.at: index ${i} is out of range for ${this.items.length} modules`);
    return m;
  }

  append(m: Module): this {
    this.items.push(checkModule('ModuleList.append', m, 'the argument'));
    return this;
  }

  extend(modules: Iterable<Module>): this {
    if (modules === null || typeof (modules as Iterable<Module>)?.[Symbol.iterator] !== 'function')
      throw new ValueError('ModuleList: expected an iterable of modules');
    [...modules].forEach((m, i) => this.items.push(checkModule('ModuleList', m, `item ${i}`)));
    return this;
  }

  insert(index: number, m: Module): this {
    if (!Number.isInteger(index)) throw new ValueError(`ModuleList.insert: index must be an integer; got ${index}`);
    this.items.splice(index, 0, checkModule('ModuleList.insert', m, 'the module'));
    return this;
  }

  [Symbol.iterator](): Iterator<Module> {
    return this.items[Symbol.iterator]();
  }

  // Its forward only explains itself, whatever it is given.
  static override tensorInput = false;
  forward(): Tensor {
    throw new ValueError('ModuleList has no forward(); iterate over it and call each module');
  }
}

/** Holds sub-modules by name, in insertion order (PyTorch's nn.ModuleDict). */
export class ModuleDict extends Module implements Iterable<[string, Module]> {
  private readonly items = new Map<string, Module>();

  constructor(modules: Record<string, Module> | Iterable<[string, Module]> = {}) {
    super();
    if (modules === null || typeof modules !== 'object')
      throw new ValueError(
        `ModuleDict: expected an object or an iterable of [name, module] pairs; got ${modules === null ? 'null' : typeof modules}`,
      );
    const pairs =
      typeof (modules as Iterable<[string, Module]>)[Symbol.iterator] === 'function'
        ? [...(modules as Iterable<[string, Module]>)]
        : Object.entries(modules);
    for (const [k, m] of pairs) this.set(k, m);
  }

  protected override entries(): [string, Tensor | Module][] {
    return [...this.items];
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): Module {
    const m = this.items.get(key);
    if (!m)
      throw new ValueError(
        `ModuleDict.get: no module named ${JSON.stringify(key)}; have ${[...this.items.keys()].join(', ') || 'none'}`,
      );
    return m;
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  set(key: string, m: Module): this {
    if (typeof key !== 'string' || key === '' || key.includes('.'))
      throw new ValueError(`ModuleDict: a key must be a non-empty string without '.'; got ${JSON.stringify(key)}`);
    this.items.set(key, checkModule('ModuleDict', m, `'${key}'`));
    return this;
  }

  delete(key: string): boolean {
    return this.items.delete(key);
  }
  keys(): string[] {
    return [...this.items.keys()];
  }
  values(): Module[] {
    return [...this.items.values()];
  }
  [Symbol.iterator](): Iterator<[string, Module]> {
    return this.items[Symbol.iterator]();
  }

  static override tensorInput = false;
  forward(): Tensor {
    throw new ValueError('ModuleDict has no forward(); get() a module and call it');
  }
}

/** Returns its input unchanged (a placeholder layer, PyTorch's nn.Identity). */
export class Identity extends Module {
  forward(x: Tensor): Tensor {
    return x;
  }
}
