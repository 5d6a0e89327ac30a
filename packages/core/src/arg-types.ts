import { SurfTypeError } from './errors';

/**
 * Arguments of the wrong JS type are refused at a public function's boundary with one message
 * shape: the function, the argument, the type expected and what was given (never a raw
 * TypeError from deep inside, such as "list.map is not a function").
 */

/** How a given value reads in a message: its JS type, with a short preview of strings and numbers. */
export function describeArg(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v === 'number' || typeof v === 'boolean') return `the ${typeof v} ${String(v)}`;
  if (typeof v === 'function') return 'a function';
  const name = (v as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : `an ${typeof v}`;
}

/** The SurfTypeError for argument `what` of `fn`, which expected `expected` and got `v`. */
export function typeErr(fn: string, what: string, expected: string, v: unknown): SurfTypeError {
  return new SurfTypeError(`${fn}: expected ${what} to be ${expected}; got ${describeArg(v)}`);
}
