import { ValueError } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module, isParameter, parameter } from '../module';

/** A tensor made a parameter (a leaf tensor becomes one, as PyTorch wraps it in nn.Parameter). */
function asParam(where: string, t: unknown): Tensor {
  if (!(t instanceof Tensor))
    throw new ValueError(`${where}: expected a Tensor; got ${t === null ? 'null' : typeof t}`);
  return isParameter(t) ? t : parameter(t);
}

/** Parameters in a list, named '0', '1', ... (PyTorch's nn.ParameterList). */
export class ParameterList extends Module implements Iterable<Tensor> {
  private readonly items: Tensor[] = [];

  constructor(params: Iterable<Tensor> = []) {
    super();
    this.extend(params);
  }

  protected override entries(): [string, Tensor | Module][] {
    return this.items.map((p, i) => [String(i), p]);
  }

  get length(): number {
    return this.items.length;
  }

  /** The parameter at index i (negative counts from the end). */
  at(i: number): Tensor {
    const p = Number.isInteger(i) ? this.items.at(i) : undefined;
    if (!p) throw new ValueError(`ParameterList.at: index ${i} is out of range for ${this.items.length} parameters`);
    return p;
  }

  append(p: Tensor): this {
    this.items.push(asParam('ParameterList.append', p));
    return this;
  }

  extend(params: Iterable<Tensor>): this {
    if (params === null || typeof (params as Iterable<Tensor>)?.[Symbol.iterator] !== 'function')
      throw new ValueError('ParameterList: expected an iterable of tensors');
    [...params].forEach((p, i) => this.items.push(asParam(`ParameterList item ${i}`, p)));
    return this;
  }

  [Symbol.iterator](): Iterator<Tensor> {
    return this.items[Symbol.iterator]();
  }

  forward(): Tensor {
    throw new ValueError('ParameterList has no forward(); index it with at(i) or iterate over it');
  }
}

/** Parameters by name, in insertion order (PyTorch's nn.ParameterDict). */
export class ParameterDict extends Module implements Iterable<[string, Tensor]> {
  private readonly items = new Map<string, Tensor>();

  constructor(params: Record<string, Tensor> | Iterable<[string, Tensor]> = {}) {
    super();
    if (params === null || typeof params !== 'object')
      throw new ValueError(`ParameterDict: expected an object or an iterable of [name, tensor] pairs`);
    const pairs =
      typeof (params as Iterable<[string, Tensor]>)[Symbol.iterator] === 'function'
        ? [...(params as Iterable<[string, Tensor]>)]
        : Object.entries(params);
    for (const [k, p] of pairs) this.set(k, p);
  }

  protected override entries(): [string, Tensor | Module][] {
    return [...this.items];
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): Tensor {
    const p = this.items.get(key);
    if (!p)
      throw new ValueError(
        `ParameterDict.get: no parameter named ${JSON.stringify(key)}; have ${[...this.items.keys()].join(', ') || 'none'}`,
      );
    return p;
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  set(key: string, p: Tensor): this {
    if (typeof key !== 'string' || key === '' || key.includes('.'))
      throw new ValueError(`ParameterDict: a key must be a non-empty string without '.'; got ${JSON.stringify(key)}`);
    this.items.set(key, asParam(`ParameterDict '${key}'`, p));
    return this;
  }

  delete(key: string): boolean {
    return this.items.delete(key);
  }
  keys(): string[] {
    return [...this.items.keys()];
  }
  values(): Tensor[] {
    return [...this.items.values()];
  }
  [Symbol.iterator](): Iterator<[string, Tensor]> {
    return this.items[Symbol.iterator]();
  }

  forward(): Tensor {
    throw new ValueError('ParameterDict has no forward(); get() a parameter by name');
  }
}
