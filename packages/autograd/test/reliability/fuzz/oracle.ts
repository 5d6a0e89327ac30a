/**
 * The fuzz test's own statement of which calls are valid and what they return (shape and
 * dtype), written from the documented semantics (PyTorch's rules reduced to Surf's three
 * dtypes) and sharing no code with core or autograd, so a disagreement is a finding.
 */
export type DT = 'float32' | 'int32' | 'bool';

const RANK: Record<DT, number> = { bool: 0, int32: 1, float32: 2 };

export function promote(...dts: DT[]): DT {
  return dts.reduce<DT>((best, d) => (RANK[d] > RANK[best] ? d : best), 'bool');
}

export function scalarDT(v: number | boolean): DT {
  return typeof v === 'boolean' ? 'bool' : Number.isInteger(v) ? 'int32' : 'float32';
}

export function fmt(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

export function size(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** NumPy broadcasting of any number of shapes, or null when they do not broadcast. */
export function broadcast(...shapes: (readonly number[])[]): number[] | null {
  const n = Math.max(0, ...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let j = 0; j < n; j++) {
    let d = 1;
    for (const s of shapes) {
      const k = s.length - n + j;
      if (k < 0) continue;
      const e = s[k];
      if (e === 1) continue;
      if (d !== 1 && d !== e) return null;
      d = e;
    }
    out.push(d);
  }
  return out;
}

/** A dim in [-n, n) resolved to [0, n), or null. */
export function dimOf(d: number, n: number): number | null {
  if (!Number.isInteger(d) || d < -n || d >= n) return null;
  return d < 0 ? d + n : d;
}

/** Resolved, sorted dims, or null when one is out of range or repeated. */
export function dimsOf(dims: number | readonly number[] | undefined, n: number): number[] | null {
  if (dims === undefined) return Array.from({ length: n }, (_, i) => i);
  const list = typeof dims === 'number' ? [dims] : dims;
  const out: number[] = [];
  for (const d of list) {
    const r = dimOf(d, n);
    if (r === null || out.includes(r)) return null;
    out.push(r);
  }
  return out.sort((a, b) => a - b);
}

export function reducedShape(shape: readonly number[], dims: readonly number[], keepdim: boolean): number[] {
  const out: number[] = [];
  shape.forEach((d, i) => {
    if (!dims.includes(i)) out.push(d);
    else if (keepdim) out.push(1);
  });
  return out;
}

/** reshape's target with one -1 resolved, or null when it cannot hold `n` elements. */
export function reshapeTarget(target: readonly number[], n: number): number[] | null {
  const free = target.filter((d) => d === -1).length;
  if (free > 1 || target.some((d) => !Number.isInteger(d) || d < -1)) return null;
  const known = target.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  if (free === 0) return known === n ? target.slice() : null;
  if (known === 0 || n % known !== 0) return null;
  return target.map((d) => (d === -1 ? n / known : d));
}

/** torch.matmul's result shape (1-d operands promoted and their unit dims dropped), or null. */
export function matmulShape(a: readonly number[], b: readonly number[]): number[] | null {
  if (a.length === 0 || b.length === 0) return null;
  const a2 = a.length === 1 ? [1, a[0]] : a.slice();
  const b2 = b.length === 1 ? [b[0], 1] : b.slice();
  if (a2[a2.length - 1] !== b2[b2.length - 2]) return null;
  const batch = broadcast(a2.slice(0, -2), b2.slice(0, -2));
  if (!batch) return null;
  const out = [...batch];
  if (a.length > 1) out.push(a2[a2.length - 2]);
  if (b.length > 1) out.push(b2[b2.length - 1]);
  return out;
}
