import { ValueError } from '@surf/core';

/**
 * Names and JSON from a file are data. A name segment or JSON key such as `__proto__` copied
 * into a plain object with `obj[k] = v` rewrites that object's prototype, or (through a nested
 * object) Object.prototype itself for the whole process. These three segments are refused, and
 * parsed JSON is rebuilt into fresh objects key by key after that check; nothing read from a
 * file is ever used as a property name before it passes here.
 */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Throws a ValueError when a dot-separated name has a segment that names a prototype property. */
export function checkName(fn: string, what: string, name: string): void {
  for (const seg of name.split('.')) {
    if (FORBIDDEN.has(seg))
      throw new ValueError(
        `${fn}: ${what} '${name}' has the segment '${seg}', which Surf refuses in names read from files (it would reach object prototypes); rename it before saving`,
      );
  }
}

/** Nested JSON deeper than this is refused (the walk is recursive). */
const MAX_DEPTH = 64;

/**
 * JSON text to plain values: objects rebuilt key by key (forbidden keys refused), arrays copied.
 * Text that is not JSON, or too deeply nested, is a ValueError naming `what`.
 */
export function parseJson(fn: string, what: string, text: string): unknown {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ValueError(`${fn}: ${what} is not valid JSON (${(e as Error).message})`);
  }
  return rebuild(fn, what, raw, 0);
}

/** A deep copy of a JSON-like value that refuses forbidden keys; used on the way in and out. */
export function rebuild(fn: string, what: string, v: unknown, depth: number): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (depth > MAX_DEPTH) throw new ValueError(`${fn}: ${what} is nested more than ${MAX_DEPTH} levels deep`);
  if (Array.isArray(v)) return v.map((x) => rebuild(fn, what, x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    if (FORBIDDEN.has(k))
      throw new ValueError(
        `${fn}: ${what} has the key '${k}', which Surf refuses in JSON read from files (it would reach object prototypes)`,
      );
    out[k] = rebuild(fn, what, (v as Record<string, unknown>)[k], depth + 1);
  }
  return out;
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A short rendering of a value read from a file, for error messages: never recursive (JSON.parse
 * accepts nesting deep enough to overflow the stack of a recursive printer) and never long.
 */
export function brief(v: unknown): string {
  if (Array.isArray(v)) {
    const flat = v.length <= 8 && v.every((x) => x === null || typeof x !== 'object');
    return flat ? `[${v.map((x) => brief(x)).join(', ')}]` : `an array of ${v.length}`;
  }
  if (v !== null && typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  return String(v);
}
