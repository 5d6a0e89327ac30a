import { SurfError, TypedArray } from '@surf/core';
import { Tensor, memory } from '@surf/autograd';
import { InputSpec, materialize, randomDType, randomInput, randomShape } from './inputs';
import { Rng } from './rng';
import { Step, Val, randomStep } from './steps';

/** One fuzz case: a random input and a chain of 1-3 steps; the chain ends at the first step not expected to succeed. */
export interface FuzzCase {
  seed: number;
  input: InputSpec;
  steps: Step[];
}

export function makeCase(seed: number): FuzzCase {
  const rng = new Rng(seed);
  const input = randomInput(rng, randomShape(rng), randomDType(rng));
  let val: Val = { shape: input.shape, dtype: input.dtype, exact: true };
  const steps: Step[] = [];
  const n = rng.int(1, 3);
  for (let i = 0; i < n; i++) {
    const s = randomStep(rng, val);
    steps.push(s);
    if (s.expect.kind !== 'ok') break;
    val = s.expect.out;
  }
  return { seed, input, steps };
}

export function describeCase(c: FuzzCase): string {
  return `seed ${c.seed}: x = ${`[${c.input.shape.join(',')}]`} ${c.input.dtype}${c.input.requiresGrad ? ' (requiresGrad)' : ''}; ${c.steps.map((s) => s.desc).join(' -> ')}`;
}

export interface StepResult {
  error?: unknown;
  shape?: number[];
  dtype?: string;
  data?: TypedArray;
  /** The largest |value| the step read, for a tolerance that scales with it. */
  inputMag: number;
}

export interface CaseResult {
  steps: StepResult[];
  /** Gradients of the requiresGrad inputs after sum().backward(), when the result had a graph. */
  grads: (TypedArray | null)[] | null;
  backwardError?: unknown;
  leakedTensors: number;
  leakedBuffers: number;
}

async function maxAbs(t: Tensor): Promise<number> {
  if (t.isDisposed) return 0;
  let m = 0;
  for (const v of await t.data()) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  return m;
}

/** Runs a case on the current backend, disposes everything it made, and reports leaks. */
export async function runCase(c: FuzzCase): Promise<CaseResult> {
  const before = memory();
  const owned: Tensor[] = [];
  const leaves: Tensor[] = [];
  const steps: StepResult[] = [];
  let grads: (TypedArray | null)[] | null = null;
  let backwardError: unknown;
  try {
    const x = materialize(c.input);
    owned.push(x);
    if (x.requiresGrad) leaves.push(x);
    let cur = x;
    for (const step of c.steps) {
      const fresh = step.fresh.map(materialize);
      owned.push(...fresh);
      leaves.push(...fresh.filter((t) => t.requiresGrad));
      let inputMag = await maxAbs(cur);
      for (const f of fresh) inputMag = Math.max(inputMag, await maxAbs(f));
      try {
        const out = step.apply(cur, fresh);
        owned.push(out);
        steps.push({ shape: out.shape, dtype: out.dtype, data: await out.data(), inputMag });
        cur = out;
      } catch (e) {
        steps.push({ error: e, inputMag });
        break;
      }
    }
    if (!steps[steps.length - 1].error && cur.requiresGrad) {
      try {
        const s = cur.sum();
        owned.push(s);
        s.backward();
        grads = [];
        for (const l of leaves) grads.push(l.grad ? await l.grad.data() : null);
      } catch (e) {
        backwardError = e;
      }
    }
  } finally {
    owned.forEach((t) => t.dispose());
  }
  const after = memory();
  return {
    steps,
    grads,
    backwardError,
    leakedTensors: after.tensors - before.tensors,
    leakedBuffers: after.buffers - before.buffers,
  };
}

function errorName(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/** Problems with a result judged against the oracle alone (any backend). */
export function checkAgainstOracle(c: FuzzCase, r: CaseResult): string[] {
  const out: string[] = [];
  const where = describeCase(c);
  if (r.steps.length !== c.steps.length) out.push(`${where}: ran ${r.steps.length} of ${c.steps.length} steps`);
  r.steps.forEach((res, i) => {
    const step = c.steps[i];
    const ex = step.expect;
    const at = `${where}: step ${i + 1} ${step.desc}`;
    if (res.error !== undefined) {
      const e = res.error;
      if (ex.kind === 'ok') {
        out.push(`${at}: expected a result ${JSON.stringify(ex.out)}, got ${errorName(e)}`);
        return;
      }
      if (!(e instanceof SurfError)) {
        out.push(`${at}: raised a non-Surf error ${errorName(e)}`);
        return;
      }
      if (ex.kind === 'error' && ex.type && e.name !== ex.type)
        out.push(`${at}: expected a ${ex.type}, got ${errorName(e)}`);
      const missing = ex.mention.filter((m) => !e.message.includes(m));
      if (missing.length) out.push(`${at}: message does not name ${JSON.stringify(missing)}: ${errorName(e)}`);
      return;
    }
    if (ex.kind === 'error') {
      out.push(
        `${at}: expected a ${ex.type ?? 'SurfError'} naming ${JSON.stringify(ex.mention)}, got a result of shape [${res.shape}] ${res.dtype}`,
      );
      return;
    }
    if (ex.kind === 'ok') {
      if (JSON.stringify(res.shape) !== JSON.stringify(ex.out.shape) || res.dtype !== ex.out.dtype) {
        out.push(`${at}: got shape [${res.shape}] ${res.dtype}, expected [${ex.out.shape}] ${ex.out.dtype}`);
      }
      const n = ex.out.shape.reduce((a, b) => a * b, 1);
      if (res.data!.length !== n) out.push(`${at}: read back ${res.data!.length} elements, expected ${n}`);
    }
  });
  if (r.backwardError !== undefined) out.push(`${where}: backward raised ${errorName(r.backwardError)}`);
  // Only growth counts: a drop means the garbage collector finalized something an earlier
  // case leaked (core's safety net), which can happen at any moment.
  if (r.leakedTensors > 0 || r.leakedBuffers > 0)
    out.push(
      `${where}: leaked ${r.leakedTensors} tensors and ${r.leakedBuffers} buffers${errored(r) ? ' (after an error)' : ''}`,
    );
  return out;
}

export function errored(r: CaseResult): boolean {
  return r.steps.some((s) => s.error !== undefined);
}
