import { SurfTypeError, ValueError } from './errors';

/**
 * One strict parser for every options argument of every package. An options object ported from
 * PyTorch (`{ weight_decay: 0.1 }`) or typed by hand (`{ paddding: 1 }`) must not train silently
 * with the defaults: an unknown key is a ValueError that names the function, the key and the
 * nearest known key, and each known key's value is checked against its rule in the same place.
 *
 *   const o = parseOptions('Adam', opts, { lr: 'nonnegative', betas: betasRule, amsgrad: 'boolean' });
 *
 * A key whose value is `undefined` counts as absent (the default applies), as with spread
 * defaults. Keys are read with Object.keys, so inherited properties (a polluted prototype) are
 * never options.
 */
export type OptionRule =
  | 'any'
  | 'number'
  | 'finite'
  | 'positive'
  | 'nonnegative'
  | 'int'
  | 'posint'
  | 'nonnegint'
  /** A number in [0, 1] (a probability, a momentum factor). */
  | 'probability'
  | 'boolean'
  | 'string'
  | 'function'
  | 'object'
  | 'array'
  /** One of these strings. */
  | readonly string[]
  /** A custom check: throw a SurfError (naming `where`) when `value` is invalid. */
  | ((value: unknown, where: string) => void);

export type OptionSpec<T> = { readonly [K in keyof T]-?: OptionRule };

const describe: Record<Exclude<OptionRule, readonly string[] | ((v: unknown, w: string) => void)>, string> = {
  any: 'any value',
  number: 'a number',
  finite: 'a finite number',
  positive: 'a number > 0',
  nonnegative: 'a number >= 0',
  int: 'an integer',
  posint: 'an integer >= 1',
  nonnegint: 'an integer >= 0',
  probability: 'a number in [0, 1]',
  boolean: 'a boolean',
  string: 'a string',
  function: 'a function',
  object: 'an object',
  array: 'an array',
};

/** A short, readable rendering of a bad value for error messages. */
export function showValue(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'undefined') return 'undefined';
  if (typeof v === 'function') return 'a function';
  if (Array.isArray(v)) return v.length <= 8 ? `[${v.map(showValue).join(', ')}]` : `an array of ${v.length}`;
  const name = (v as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

function passes(rule: OptionRule, v: unknown): boolean {
  switch (rule) {
    case 'any':
      return true;
    case 'number':
      return typeof v === 'number' && !Number.isNaN(v);
    case 'finite':
      return typeof v === 'number' && Number.isFinite(v);
    case 'positive':
      return typeof v === 'number' && v > 0;
    case 'nonnegative':
      return typeof v === 'number' && v >= 0;
    case 'int':
      return Number.isInteger(v);
    case 'posint':
      return Number.isInteger(v) && (v as number) >= 1;
    case 'nonnegint':
      return Number.isInteger(v) && (v as number) >= 0;
    case 'probability':
      return typeof v === 'number' && v >= 0 && v <= 1;
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'function':
      return typeof v === 'function';
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    default:
      return Array.isArray(rule) ? rule.includes(v as string) : true;
  }
}

const NUMERIC_RULES = new Set([
  'number',
  'finite',
  'positive',
  'nonnegative',
  'int',
  'posint',
  'nonnegint',
  'probability',
]);

/** Checks one value against one rule; `where` is e.g. "Adam: option 'lr'". */
export function checkRule(rule: OptionRule, v: unknown, where: string): void {
  if (typeof rule === 'function') return rule(v, where);
  if (passes(rule, v)) return;
  const expected = Array.isArray(rule)
    ? `one of ${rule.map((s) => JSON.stringify(s)).join(', ')}`
    : describe[rule as keyof typeof describe];
  // A value of the right JS type outside its range is a ValueError; anything else a type error.
  const typeWrong = Array.isArray(rule)
    ? typeof v !== 'string'
    : NUMERIC_RULES.has(rule as string)
      ? typeof v !== 'number'
      : true;
  const Err = typeWrong ? SurfTypeError : ValueError;
  throw new Err(`${where} must be ${expected}; got ${showValue(v)}`);
}

/**
 * Edit distance where swapping two neighbouring letters counts as one edit (optimal string
 * alignment): `dtpye` and `beat` are one typo away from `dtype` and `beta`.
 */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

const camel = (s: string) => s.replace(/_+([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The known key a mistyped or snake_case key most likely meant, or undefined. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const asCamel = camel(key);
  const exact = known.find((k) => k === asCamel || k.toLowerCase() === key.toLowerCase().replace(/_/g, ''));
  if (exact) return exact;
  // A truncated or extended spelling (`reduce` for `reduction`, PyTorch's old keyword): all but
  // at most the last letter of the shorter one is a common prefix of at least 4 letters.
  const lower = asCamel.toLowerCase();
  const prefix = known.filter((k) => {
    const kl = k.toLowerCase();
    let n = 0;
    while (n < kl.length && n < lower.length && kl[n] === lower[n]) n++;
    return n >= 4 && n >= Math.min(kl.length, lower.length) - 1;
  });
  if (prefix.length === 1) return prefix[0];
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = editDistance(asCamel.toLowerCase(), k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(Math.min(key.length, best.length) / 3))
    ? best
    : undefined;
}

/** The error for an unknown key, with the suggestion and the known keys. */
export function unknownOptionError(fn: string, key: string, known: readonly string[]): ValueError {
  const near = nearestKey(key, known);
  const hint = near ? `; did you mean '${near}'?` : '.';
  const list = known.length ? ` Known options: ${known.join(', ')}.` : ' It takes no options.';
  return new ValueError(`${fn}: unknown option '${key}'${hint}${list}`);
}

/**
 * Checks `opts` against `spec` and returns a fresh object holding only the keys that were given
 * with a value other than undefined. undefined for the whole argument gives {}. A non-object is
 * a ValueError naming what was expected.
 */
export function parseOptions<T extends object>(fn: string, opts: unknown, spec: OptionSpec<T>): Partial<T> {
  const known = Object.keys(spec);
  if (opts === undefined) return {};
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts) || opts instanceof Map) {
    throw new ValueError(
      `${fn}: the options argument must be an object like { ${known.join(', ')} }; got ${showValue(opts)}`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(opts)) {
    if (!Object.prototype.hasOwnProperty.call(spec, key)) throw unknownOptionError(fn, key, known);
    const v = (opts as Record<string, unknown>)[key];
    if (v === undefined) continue;
    checkRule((spec as Record<string, OptionRule>)[key], v, `${fn}: option '${key}'`);
    out[key] = v;
  }
  return out as Partial<T>;
}

/** parseOptions with defaults filled in: the result has every key of `defaults`. */
export function withDefaults<T extends object>(fn: string, opts: unknown, spec: OptionSpec<T>, defaults: T): T {
  return { ...defaults, ...parseOptions<T>(fn, opts, spec) };
}
