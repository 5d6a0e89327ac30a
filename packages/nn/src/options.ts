import { ValueError } from '@surf/core';

/**
 * Every options argument is checked with this: a number, string, array or null where an
 * options object goes (`new optim.SGD(params, 0.1)`) is a ValueError naming the function and
 * the shape it expected, instead of running silently with the defaults. undefined is fine
 * (the defaults apply).
 */
export function checkOptions(fn: string, opts: unknown, expected: string): void {
  if (opts === undefined) return;
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts) || opts instanceof Map) {
    const got = opts === null ? 'null' : Array.isArray(opts) ? 'an array' : opts instanceof Map ? 'a Map' : `${typeof opts} ${JSON.stringify(opts)}`;
    throw new ValueError(`${fn}: the options argument must be an object ${expected}; got ${got}`);
  }
}
