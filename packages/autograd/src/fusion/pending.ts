import { Backend, DType, Expr, NDArray, shapesEqual } from '@surf/core';

/** Runs the kernel on its operands with an epilogue (input 0 = its result, 1.. = inputs). */
export type EpilogueKernel = (
  operands: readonly NDArray[],
  epilogue?: { expr: Expr; inputs: readonly NDArray[] },
) => NDArray;

/** A matmul as an EpilogueKernel (NDArray.matmul's own epilogue argument). */
export const matmulKernel: EpilogueKernel = ([a, b], epilogue) => a.matmul(b, epilogue);

/**
 * The fusion pass's one idea: a matmul result is not computed when the op runs but kept as
 * a *pending* value (the operands plus an elementwise epilogue, initially none). An
 * elementwise op whose input is a pending result folds itself into the epilogue and returns
 * a new pending result (fusion/fold.ts), so `x.matmul(W).add(b).relu()` is one kernel. The
 * value is computed, once, the first time something reads it; what is never read (an
 * intermediate folded into its consumer) never runs.
 *
 * Why this is safe: every operand and epilogue input is held as an alias, and arrays are
 * never written in place (optimizers and assign() swap in new arrays), so computing later
 * gives exactly what computing now would have. Results nobody read by the end of the current
 * synchronous run (the "frontier": an unconsumed `a.matmul(b)`) are computed at the next
 * microtask, so work is never silently dropped or deferred past an `await`.
 */
/**
 * An array held by several pending results at once (a fold's result and the value it folded
 * share their operands): one count, instead of one alias NDArray per holder.
 */
export class Held {
  refs = 1;
  constructor(readonly nd: NDArray) {}
  share(): this {
    this.refs++;
    return this;
  }
  drop(): void {
    if (--this.refs === 0) this.nd.dispose();
  }
}

const hold = (x: NDArray): Held => new Held(x);
const ndOf = (h: Held): NDArray => h.nd;
const share = (h: Held): Held => h.share();

export class PendingResult {
  private refs = 1;
  private value: NDArray | null = null;
  private parts: { operands: Held[]; inputs: Held[] } | null;

  /**
   * Takes ownership of `operands` and `inputs`. `kernel` is any op taking an epilogue (the
   * matmul; a conv could be one too). `expr` reads input 0 = the kernel's result and inputs
   * 1.. = `inputs` (broadcast to the result's shape `full`); `shape` is the shape the value
   * shows (the result reshaped: a 1-d operand's unit dim dropped, a linear's rows unfolded).
   */
  constructor(
    readonly kernel: EpilogueKernel,
    operands: (NDArray | Held)[],
    readonly expr: Expr | null,
    inputs: (NDArray | Held)[],
    readonly shape: readonly number[],
    readonly full: readonly number[],
  ) {
    const h = (x: NDArray | Held): Held => (x instanceof Held ? x : hold(x));
    this.parts = { operands: operands.map(h), inputs: inputs.map(h) };
  }

  /** True once the value exists (or it was released): nothing more can fold into it. */
  get computed(): boolean {
    return this.parts === null;
  }

  /** The operands and epilogue inputs, shared (counted), for a pending value built on this one. */
  shareParts(): { operands: Held[]; inputs: Held[] } {
    const p = this.parts!;
    return { operands: p.operands.map(share), inputs: p.inputs.map(share) };
  }

  get inputCount(): number {
    return this.parts ? this.parts.inputs.length : 0;
  }
  get inputDTypes(): DType[] {
    return this.parts ? this.parts.inputs.map((x) => x.nd.dtype) : [];
  }
  get backend(): Backend | null {
    return this.parts ? this.parts.operands[0].nd.backend : (this.value?.backend ?? null);
  }

  /** The value, computed on the first call; owned by this object (alias it to keep it). */
  get(): NDArray {
    if (this.value) return this.value;
    const p = this.parts;
    if (!p) throw new Error('PendingResult: read after release');
    const prod = this.kernel(
      p.operands.map(ndOf),
      this.expr ? { expr: this.expr, inputs: p.inputs.map(ndOf) } : undefined,
    );
    if (shapesEqual(prod.shape, this.shape)) this.value = prod;
    else {
      this.value = prod.reshape(this.shape);
      prod.dispose();
    }
    this.dropParts();
    return this.value;
  }

  retain(): this {
    this.refs++;
    return this;
  }

  /** Drops one holder; the last one frees the operands and the value. */
  release(): void {
    if (--this.refs > 0) return;
    this.dropParts();
    this.value?.dispose();
    this.value = null;
  }

  /** The value for a holder that is going away: handed over when it is the last holder. */
  take(): NDArray {
    const v = this.get();
    if (this.refs === 1) {
      this.value = null;
      this.refs = 0;
      return v;
    }
    this.release();
    return v.reshape(v.shape);
  }

  private dropParts(): void {
    const p = this.parts;
    if (!p) return;
    this.parts = null;
    for (const x of p.operands) x.drop();
    for (const x of p.inputs) x.drop();
  }
}

/** A saved-for-backward reference to a pending value: resolves it on first use. */
export class SavedPending {
  constructor(private p: PendingResult | null) {}
  get(): NDArray {
    if (!this.p) throw new Error('SavedPending: read after dispose');
    return this.p.get();
  }
  dispose(): void {
    this.p?.release();
    this.p = null;
  }
}

/** Something that can compute its pending value now (a Tensor). */
export interface Materializable {
  _materialize(): void;
}

// Pending results not consumed by a fold, computed at the next microtask.
const frontier = new Set<Materializable>();
let scheduled = false;

function flush(): void {
  scheduled = false;
  const ts = [...frontier];
  frontier.clear();
  for (const t of ts) {
    // A failure (a backend refusing the size) is raised again where the value is read.
    try {
      t._materialize();
    } catch {
      /* kept pending; reported on read */
    }
  }
}

/** Registers a new pending result; it is computed at the next microtask unless folded first. */
export function addToFrontier(t: Materializable): void {
  frontier.add(t);
  if (!scheduled) {
    scheduled = true;
    queueMicrotask(flush);
  }
}

/** A pending result folded into a consumer (or computed, or disposed) leaves the frontier. */
export function leaveFrontier(t: Materializable): void {
  frontier.delete(t);
}

/** Computes every pending result now (tests, and callers about to time or record work). */
export function flushPending(): void {
  flush();
}
