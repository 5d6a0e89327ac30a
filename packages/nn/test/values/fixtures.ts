import { readFileSync } from 'fs';
import { join } from 'path';

/** PyTorch's values from scripts/values/make-fixtures.py; "nan"/"inf"/"-inf" decoded. */
type Raw = number | string | Raw[] | { [k: string]: Raw } | null | boolean;
function decode(v: Raw): unknown {
  if (v === 'nan') return NaN;
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  if (Array.isArray(v)) return v.map(decode);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
  return v;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const edge: any = decode(
  JSON.parse(readFileSync(join(__dirname, '../fixtures/values/edge-values.json'), 'utf8')) as Raw,
);

/** Elementwise closeness with NaN = NaN and equal infinities (relative tolerance `rel`). */
export function expectClose(got: ArrayLike<number>, want: readonly number[], rel = 1e-5): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const g = got[i],
      w = want[i];
    if (Number.isNaN(w) || !Number.isFinite(w)) expect([i, g]).toEqual([i, w]);
    else if (!(Math.abs(g - w) <= rel * Math.max(1, Math.abs(w)))) expect([i, g]).toEqual([i, w]);
  }
}
