import { DeferredRegistry, ValueError, typeErr } from '@surf/core';
import { getBackend } from './context';
import { collectIfDueSync, collectionCount, noteLiveTensors } from './gc/pressure';

/**
 * Memory scopes (tf.tidy): every tensor created while a tidy() runs is recorded in the
 * innermost scope; when fn returns, the recorded tensors that are not part of its result
 * (found by walking arrays, plain objects and Maps) are disposed, and the returned ones move
 * to the enclosing scope. Gradients (`.grad`) are never recorded: they belong to their leaf.
 */
export interface Tracked {
  dispose(): void;
}

const scopes: Set<Tracked>[] = [];
let live = 0;

export interface Token {
  counted: boolean;
  registered: boolean;
}

// Counts tensors that were never disposed but got collected, so memory() stays honest.
// Registration waits for the end of the job: most tensors are disposed before it.
const collected = new DeferredRegistry<Tracked, Token>(
  (token) => {
    if (token.counted) {
      token.counted = false;
      live--;
    }
  },
  (_, token) => token.counted,
  (_, token) => {
    token.registered = true;
  },
);

/** Called by every new Tensor; returns the token its dispose() must pass to untrack(). */
export function track(t: Tracked, inScope: boolean): Token {
  const token = { counted: true, registered: false };
  live++;
  noteLiveTensors(live); // one-time warning when tensors pile up
  collected.register(t, token);
  if (inScope && scopes.length > 0) scopes[scopes.length - 1].add(t);
  // A loop that never awaits is collected here, where the host can finalize synchronously.
  collectIfDueSync();
  return token;
}

export function untrack(t: Tracked, token: Token): void {
  if (token.counted) {
    token.counted = false;
    live--;
  }
  if (token.registered) collected.unregister(t);
  for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i].delete(t)) break;
}

/** Exempts a tensor from the tidy() scopes it was created in (it lives until disposed). */
export function keep<T extends Tracked>(t: T): T {
  for (const s of scopes) s.delete(t);
  return t;
}

function collect(v: unknown, out: Set<unknown>, seen: Set<unknown>): void {
  if (v === null || typeof v !== 'object' || seen.has(v)) return;
  seen.add(v);
  out.add(v);
  if (Array.isArray(v)) v.forEach((x) => collect(x, out, seen));
  else if (v instanceof Map)
    v.forEach((x, k) => {
      collect(k, out, seen);
      collect(x, out, seen);
    });
  else if (Object.getPrototypeOf(v) === Object.prototype) Object.values(v).forEach((x) => collect(x, out, seen));
}

/**
 * Runs fn and disposes every tensor it created that fn does not return (a tensor, or arrays,
 * plain objects or Maps of tensors). Synchronous: an async fn would let its tensors escape.
 */
export function tidy<T>(fn: () => T): T {
  if (typeof fn !== 'function') throw typeErr('tidy', 'its argument', 'a function', fn);
  const scope = new Set<Tracked>();
  scopes.push(scope);
  let result: T;
  try {
    result = fn();
  } catch (e) {
    scopes.pop();
    scope.forEach((t) => t.dispose());
    throw e;
  }
  scopes.pop();
  if (result instanceof Promise) {
    scope.forEach((t) => t.dispose());
    throw new ValueError('tidy: fn returned a Promise; tidy is synchronous (await outside it, or dispose() by hand)');
  }
  const kept = new Set<unknown>();
  collect(result, kept, new Set());
  const parent = scopes[scopes.length - 1];
  for (const t of scope) {
    if (kept.has(t)) parent?.add(t);
    else t.dispose();
  }
  return result;
}

export interface MemoryReport {
  /** Tensors created and not yet disposed (or collected). */
  tensors: number;
  /** Backend buffers holding live data (tensors, saved-for-backward arrays, gradients). */
  buffers: number;
  bytes: number;
  /** GPU buffers kept in the pool for reuse (not live data). */
  pooledBuffers?: number;
  pooledBytes?: number;
  backend: string;
  /** Garbage collections run at awaits so far (see configureMemory). */
  collections: number;
}

export function memory(): MemoryReport {
  const b = getBackend();
  return { tensors: live, ...b.memory(), backend: b.name, collections: collectionCount() };
}
