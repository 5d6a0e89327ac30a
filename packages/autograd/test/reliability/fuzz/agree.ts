import { compare } from '@surf/core/testing';
import { CaseResult, FuzzCase, describeCase } from './run';

function errText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/**
 * Differences between the same case run on two backends. Errors must be the same class with
 * the same message (validation happens before any kernel, so a backend-specific message
 * means a backend error leaked through). Results must have the same shape and dtype; values
 * bit-exact where the oracle says the value is exact, else within a tolerance that scales
 * with the magnitudes the step read (a reordered f32 sum is off by a multiple of those).
 */
export function disagreements(c: FuzzCase, a: CaseResult, b: CaseResult, names = ['cpu', 'webgpu']): string[] {
  const out: string[] = [];
  const where = describeCase(c);
  const n = Math.max(a.steps.length, b.steps.length);
  for (let i = 0; i < n; i++) {
    const x = a.steps[i],
      y = b.steps[i];
    const at = `${where}: step ${i + 1} ${c.steps[i].desc}`;
    if (!x || !y) {
      out.push(`${at}: ran on only one backend`);
      break;
    }
    if (x.error !== undefined || y.error !== undefined) {
      if (errText(x.error) !== errText(y.error))
        out.push(
          `${at}: ${names[0]} ${x.error === undefined ? 'returned a result' : errText(x.error)}; ${names[1]} ${y.error === undefined ? 'returned a result' : errText(y.error)}`,
        );
      break;
    }
    if (JSON.stringify(x.shape) !== JSON.stringify(y.shape) || x.dtype !== y.dtype) {
      out.push(`${at}: ${names[0]} gave [${x.shape}] ${x.dtype}, ${names[1]} [${y.shape}] ${y.dtype}`);
      break;
    }
    const ex = c.steps[i].expect;
    const exact = ex.kind === 'ok' && ex.out.exact;
    const mag = Math.max(1, x.inputMag);
    const r = compare(y.data!, x.data!, {
      tol: exact ? { rtol: 0, atol: 0 } : { rtol: 1e-4, atol: 2e-5 * mag },
      shape: x.shape,
      label: `${names[1]} vs ${names[0]}`,
    });
    if (!r.ok) out.push(`${at}: ${r.message}`);
  }
  if (errText(a.backwardError) !== errText(b.backwardError))
    out.push(`${where}: backward: ${errText(a.backwardError)} vs ${errText(b.backwardError)}`);
  if (a.grads && b.grads) {
    a.grads.forEach((g, k) => {
      const h = b.grads![k];
      if (!g || !h) {
        if (g !== h) out.push(`${where}: grad ${k} present on one backend only`);
        return;
      }
      const mag = Math.max(1, ...Array.from(g, (v) => (Number.isFinite(v) ? Math.abs(v) : 0)));
      const r = compare(h, g, { tol: { rtol: 1e-3, atol: 1e-4 * mag }, label: `grad ${k}` });
      if (!r.ok) out.push(`${where}: ${r.message}`);
    });
  } else if (!!a.grads !== !!b.grads) out.push(`${where}: gradients on one backend only`);
  return out;
}
