import type { Backend, Storage } from '../backend';
import { DType, TypedArray, arrayFor } from '../dtype';
import { NDArray } from '../ndarray';
import { Comparison, EXACT, Tolerance, compare } from './compare';
import { RefArray } from './reference';

/**
 * One row of the shared op table. `run` computes on the given backend and returns what it
 * got next to what the reference says; it knows nothing about jest, so the same table runs
 * under jest (CPU, WebGPU via Dawn) and on a browser page.
 */
export interface OpCase {
  /** Unique, e.g. 'elementwise/add f32 [7,33]+[33]'. */
  readonly name: string;
  /** The first part of the name: elementwise, cast, ieee, movement, reduce, matmul, gather, backend, attention. */
  readonly group: string;
  /** Part of the small representative subset (browser page, SwiftShader smoke runs). */
  readonly quick?: boolean;
  run(backend: Backend): Promise<CaseResult>;
}

/** One compared output. */
export interface Check {
  readonly label: string;
  readonly got: TypedArray;
  readonly gotShape: readonly number[];
  readonly gotDType: DType;
  readonly want: RefArray;
  readonly tol: Tolerance;
  /** Per-element magnitude the tolerance is relative to (see compare.ts). */
  readonly mag?: ArrayLike<number>;
}

export interface CaseResult {
  readonly checks: readonly Check[];
}

export interface CaseReport {
  readonly name: string;
  readonly ok: boolean;
  /** One line per check plus any leak or exception; the failing ones first. */
  readonly message: string;
  readonly checks: number;
}

/**
 * What a case body works with: uploads tracked for disposal, and `check` to read a result
 * back and record it. Everything is disposed when the body ends, so runCase can verify that
 * the backend's live-buffer count returned to where it started.
 */
export class CaseContext {
  readonly checks: Check[] = [];
  private arrays: NDArray[] = [];
  private storages: Storage[] = [];

  constructor(readonly backend: Backend) {}

  /** Uploads a reference array as an NDArray of its dtype. */
  upload(x: RefArray): NDArray {
    return this.keep(NDArray.fromData(this.backend, toTyped(x), x.shape, x.dtype));
  }

  /** Uploads a reference array as a raw storage (for calling the backend directly). */
  storage(x: RefArray): Storage {
    return this.keepStorage(this.backend.fromData(toTyped(x), x.dtype));
  }

  keep<T extends NDArray | NDArray[]>(x: T): T {
    if (Array.isArray(x)) this.arrays.push(...x);
    else this.arrays.push(x);
    return x;
  }

  keepStorage<T extends Storage | Storage[]>(s: T): T {
    if (Array.isArray(s)) this.storages.push(...s);
    else this.storages.push(s);
    return s;
  }

  /** Reads an NDArray back (through its view) and records it against `want`. */
  async check(
    label: string,
    got: NDArray,
    want: RefArray,
    tol: Tolerance = EXACT,
    mag?: ArrayLike<number>,
  ): Promise<void> {
    this.keep(got);
    const data = await got.data();
    this.checks.push({ label, got: data, gotShape: got.shape.slice(), gotDType: got.dtype, want, tol, mag });
  }

  /** Reads a raw storage back (as a contiguous array of `shape`) and records it. */
  async checkStorage(
    label: string,
    got: Storage,
    shape: readonly number[],
    want: RefArray,
    tol: Tolerance = EXACT,
    mag?: ArrayLike<number>,
  ): Promise<void> {
    this.keepStorage(got);
    const data = await this.backend.read(got);
    this.checks.push({ label, got: data, gotShape: shape.slice(), gotDType: got.dtype, want, tol, mag });
  }

  disposeAll(): void {
    for (const a of this.arrays) a.dispose();
    for (const s of this.storages) this.backend.dispose(s);
    this.arrays = [];
    this.storages = [];
  }
}

export function toTyped(x: RefArray): TypedArray {
  const out = arrayFor(x.dtype, x.data.length);
  for (let i = 0; i < x.data.length; i++) out[i] = x.data[i];
  return out;
}

export interface CaseOptions {
  quick?: boolean;
}

/** Builds an OpCase from a body; the group is the name's first path segment. */
export function defineCase(
  name: string,
  body: (t: CaseContext) => Promise<void> | void,
  opts: CaseOptions = {},
): OpCase {
  return {
    name,
    group: name.split('/')[0],
    quick: opts.quick,
    async run(backend: Backend): Promise<CaseResult> {
      const t = new CaseContext(backend);
      try {
        await body(t);
      } finally {
        t.disposeAll();
      }
      return { checks: t.checks };
    },
  };
}

export function compareCheck(c: Check): Comparison {
  const label = c.label;
  const shapeOk = c.gotShape.length === c.want.shape.length && c.gotShape.every((d, i) => d === c.want.shape[i]);
  if (!shapeOk)
    return {
      ok: false,
      bad: c.got.length,
      worst: null,
      message: `${label}: got shape [${c.gotShape.join(',')}], expected [${c.want.shape.join(',')}]`,
    };
  if (c.gotDType !== c.want.dtype)
    return {
      ok: false,
      bad: c.got.length,
      worst: null,
      message: `${label}: got dtype ${c.gotDType}, expected ${c.want.dtype}`,
    };
  return compare(c.got, c.want.data, { tol: c.tol, shape: c.gotShape, mag: c.mag, label });
}

/**
 * Runs a case and judges it: every check within tolerance, at least one check, no exception,
 * and the backend's live buffers back to their count before the case (no leak).
 */
export async function runCase(c: OpCase, backend: Backend): Promise<CaseReport> {
  const before = backend.memory().buffers;
  let result: CaseResult;
  try {
    result = await c.run(backend);
  } catch (e) {
    const err = e as Error;
    return {
      name: c.name,
      ok: false,
      checks: 0,
      message: `threw ${err?.name ?? 'error'}: ${err?.message ?? String(e)}${err?.stack ? `\n${err.stack}` : ''}`,
    };
  }
  await backend.sync();
  const after = backend.memory().buffers;
  const lines: string[] = [];
  let ok = true;
  const judged = result.checks.map(compareCheck);
  for (const j of judged)
    if (!j.ok) {
      ok = false;
      lines.push(j.message);
    }
  for (const j of judged) if (j.ok) lines.push(j.message);
  if (result.checks.length === 0) {
    ok = false;
    lines.unshift('the case recorded no checks');
  }
  if (after !== before) {
    ok = false;
    lines.unshift(`live buffers went from ${before} to ${after} (a leak, or a double free)`);
  }
  return { name: c.name, ok, checks: result.checks.length, message: lines.join('\n') };
}

/** runCase, throwing an Error with the report when the case fails (for test runners). */
export async function assertCase(c: OpCase, backend: Backend): Promise<void> {
  const r = await runCase(c, backend);
  if (!r.ok) throw new Error(`${c.name} failed:\n${r.message}`);
}
