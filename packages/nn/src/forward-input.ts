import { SurfTypeError, showValue } from '@surf/core';
import { Tensor } from '@surf/autograd';

const GUARDED = new WeakSet<object>();

/**
 * The one check on every module's call path: `forward`'s first argument must be a Tensor, so
 * `linear.forward(undefined)` or a nested JS array is a SurfTypeError naming the module and
 * the expected type instead of a raw TypeError deep inside an op. Module's constructor calls
 * this; it wraps each class's own `forward` once, on the prototype (instances get no own
 * property, so discovery and summary() never see it). A class whose forward takes something
 * else sets `static tensorInput = false`.
 */
export function guardForward(module: object, stop: object): void {
  for (let proto = Object.getPrototypeOf(module); proto && proto !== stop; proto = Object.getPrototypeOf(proto)) {
    if (GUARDED.has(proto)) break; // its ancestors were guarded with it
    GUARDED.add(proto);
    const forward = Object.getOwnPropertyDescriptor(proto, 'forward')?.value as unknown;
    if (typeof forward !== 'function') continue;
    Object.defineProperty(proto, 'forward', {
      configurable: true,
      enumerable: false,
      writable: true,
      value: function (this: { constructor: { name: string; tensorInput?: boolean } }, ...inputs: unknown[]): unknown {
        if (this.constructor.tensorInput !== false && !(inputs[0] instanceof Tensor))
          throw new SurfTypeError(
            `${this.constructor.name}.forward: the input is ${inputs.length === 0 ? 'missing' : showValue(inputs[0])}; expected a Tensor (make one with tensor(data))`,
          );
        return (forward as (...a: unknown[]) => unknown).apply(this, inputs);
      },
    });
  }
}
