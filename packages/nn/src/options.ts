import { ValueError } from '@surf/core';

/**
 * Every options argument goes through this: a number, string, boolean, array or null where an
 * options object goes (`new optim.SGD(params, 0.1)`) is a ValueError naming the function and
 * the shape it expected, instead of running silently with the defaults. undefined gives {}
 * (the defaults apply).
 */
export function checkOptions<T extends object>(fn: string, opts: T | undefined, expected: string): T {
  if (opts === undefined) return {} as T;
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts) || opts instanceof Map) {
    const got =
      opts === null
        ? 'null'
        : Array.isArray(opts)
          ? 'an array'
          : opts instanceof Map
            ? 'a Map'
            : `${typeof opts} ${JSON.stringify(opts)}`;
    throw new ValueError(`${fn}: the options argument must be an object ${expected}; got ${got}`);
  }
  return opts;
}
