import { Expr, Storage, TypedArray, View } from '@surf/core';

/**
 * One walk over a backend call's arguments, shared by the recorder and the replay so both see
 * the same leaves in the same order. Leaves are what may differ between calls: storages,
 * expression constants, uploaded host arrays and other objects (compared by identity);
 * everything else (shapes, axes, views, modes) is structure and goes into the call's key.
 */
export type Leaf =
  | { readonly k: 's'; readonly s: Storage }
  | { readonly k: 'c'; readonly node: Expr & { kind: 'const' } }
  | { readonly k: 'd'; readonly arr: TypedArray }
  | { readonly k: 'o'; readonly o: object };

export interface VisitCtx {
  isStorage(v: object): boolean;
  /** Returns what replaces the leaf (the leaf's own value when recording). */
  leaf(l: Leaf): unknown;
  /** Collects the structural key when given. */
  key: string[] | null;
}

/** Returns v with every leaf replaced by ctx.leaf's answer (the same object where nothing changed). */
export function visit(v: unknown, ctx: VisitCtx): unknown {
  const key = ctx.key;
  if (v === null || typeof v !== 'object') {
    key?.push(typeof v === 'number' ? String(v) : typeof v === 'string' ? JSON.stringify(v) : String(v));
    return v;
  }
  if (ctx.isStorage(v)) {
    key?.push('S');
    return ctx.leaf({ k: 's', s: v as Storage });
  }
  if (ArrayBuffer.isView(v)) {
    key?.push(`D${v.constructor.name}`);
    return ctx.leaf({ k: 'd', arr: v as TypedArray });
  }
  if (v instanceof View) {
    key?.push(`V${v.shape}|${v.strides}|${v.offset}|${v.mask ? JSON.stringify(v.mask) : ''}`);
    return v;
  }
  if (Array.isArray(v)) {
    key?.push('[');
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const r = visit(v[i], ctx);
      if (r !== v[i] && !out) out = v.slice(0, i);
      if (out) out.push(r);
      key?.push(',');
    }
    key?.push(']');
    return out ?? v;
  }
  if (Object.getPrototypeOf(v) === Object.prototype) {
    const o = v as Record<string, unknown>;
    if (o.kind === 'const' && typeof o.value === 'number') {
      key?.push(`C${String(o.dtype)}`);
      return ctx.leaf({ k: 'c', node: o as Expr & { kind: 'const' } });
    }
    key?.push('{');
    let out: Record<string, unknown> | null = null;
    for (const name of Object.keys(o)) {
      key?.push(name, ':');
      const r = visit(o[name], ctx);
      if (r !== o[name]) out ??= { ...o };
      if (out) out[name] = r;
      key?.push(',');
    }
    key?.push('}');
    return out ?? v;
  }
  key?.push(`O${(v as object).constructor?.name ?? '?'}`);
  return ctx.leaf({ k: 'o', o: v });
}

/** Rebuilds a call's arguments from fresh leaves, asked for in visit()'s order. */
export type Builder = (leaf: () => unknown) => unknown;

/**
 * visit() compiled once for a recorded call, for replays: closures only along the paths that
 * hold leaves, everything else reused as recorded. Null when `v` holds no leaf.
 */
export function compileBuilder(v: unknown, isStorage: (v: object) => boolean): Builder | null {
  if (v === null || typeof v !== 'object' || v instanceof View) return null;
  if (isStorage(v) || ArrayBuffer.isView(v)) return (leaf) => leaf();
  if (Array.isArray(v)) {
    const parts = v.map((x) => compileBuilder(x, isStorage));
    if (parts.every((p) => p === null)) return null;
    return (leaf) => {
      const out = new Array(v.length);
      for (let i = 0; i < v.length; i++) out[i] = parts[i] ? parts[i]!(leaf) : v[i];
      return out;
    };
  }
  if (Object.getPrototypeOf(v) === Object.prototype) {
    const o = v as Record<string, unknown>;
    if (o.kind === 'const' && typeof o.value === 'number') return (leaf) => leaf();
    const names = Object.keys(o);
    const parts = names.map((n) => compileBuilder(o[n], isStorage));
    if (parts.every((p) => p === null)) return null;
    return (leaf) => {
      const out: Record<string, unknown> = { ...o };
      for (let i = 0; i < names.length; i++) if (parts[i]) out[names[i]] = parts[i]!(leaf);
      return out;
    };
  }
  return (leaf) => leaf();
}
