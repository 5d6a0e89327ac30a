/**
 * Winograd minimal filtering F(m, r) built from interpolation points (Toom-Cook), in float64:
 * the 1-d correlation y[i] = sum_k g[k] d[i + k] (i < m, k < r) over a tile of alpha = m + r - 1
 * inputs is y = AT · ((G · g) ⊙ (BT · d)), and the 2-d one nests it: Y = AT (G g Gᵀ ⊙ BT d B) A.
 *
 * Derivation (why these matrices): the linear convolution s = h * g of a length-m h and a
 * length-r g is s = V⁻¹ ((Eh h) ⊙ (Eg g)), where Eh, Eg evaluate the polynomials at the points
 * and V is the Vandermonde matrix of degree alpha - 1 (the point at infinity picks the leading
 * coefficient). Correlation is that bilinear form's transpose in h: dᵀs = Σ_j (V⁻ᵀ d)_j (Eg g)_j
 * (Eh h)_j, so y = ∂(dᵀs)/∂h = Ehᵀ ((Eg g) ⊙ (V⁻ᵀ d)). Hence AT = Ehᵀ, G = Eg, BT = V⁻ᵀ; row j of
 * BT is scaled by Π_{l≠j}(p_j - p_l) and row j of G divided by it, which leaves the product the
 * same and makes BT small integers for integer points. BT depends only on the points, so F(m, r)
 * and F(r, m) share it.
 */
export interface Winograd {
  m: number;
  r: number;
  alpha: number;
  /** m x alpha */
  AT: number[][];
  /** alpha x r */
  G: number[][];
  /** alpha x alpha */
  BT: number[][];
}

/** Finite points in order of preference (small magnitudes first keep the transforms well conditioned). */
const POINTS = [0, 1, -1, 2, -2, 0.5, -0.5, 3, -3];

export function winograd(m: number, r: number): Winograd {
  const alpha = m + r - 1;
  if (!(m >= 1 && r >= 1 && alpha - 1 <= POINTS.length))
    throw new Error(`winograd: F(${m}, ${r}) needs ${alpha - 1} finite points; have ${POINTS.length}`);
  const p = POINTS.slice(0, alpha - 1);
  // Row j of an evaluation matrix with n columns: powers of p_j; the last row is the point at infinity.
  const evalRows = (n: number) =>
    Array.from({ length: alpha }, (_, j) =>
      Array.from({ length: n }, (_, i) => (j < alpha - 1 ? p[j] ** i : i === n - 1 ? 1 : 0)),
    );
  const Eh = evalRows(m),
    G = evalRows(r),
    V = evalRows(alpha);
  const Vinv = invert(V);
  const BT = Array.from({ length: alpha }, (_, j) => Array.from({ length: alpha }, (_, l) => Vinv[l][j]));
  for (let j = 0; j < alpha - 1; j++) {
    let f = 1;
    for (let l = 0; l < alpha - 1; l++) if (l !== j) f *= p[j] - p[l];
    BT[j] = BT[j].map((v) => v * f);
    G[j] = G[j].map((v) => v / f);
  }
  const AT = Array.from({ length: m }, (_, i) => Array.from({ length: alpha }, (_, j) => Eh[j][i]));
  const clean = (a: number[][]) =>
    a.map((row) => row.map((v) => (Math.abs(v - Math.round(v)) < 1e-12 ? Math.round(v) + 0 : v)));
  return { m, r, alpha, AT: clean(AT), G: clean(G), BT: clean(BT) };
}

/** Gauss-Jordan inverse with partial pivoting (alpha <= 10: exact enough in float64). */
function invert(a: number[][]): number[][] {
  const n = a.length;
  const M = a.map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let i = c + 1; i < n; i++) if (Math.abs(M[i][c]) > Math.abs(M[piv][c])) piv = i;
    [M[c], M[piv]] = [M[piv], M[c]];
    const d = M[c][c];
    if (d === 0) throw new Error('winograd: singular Vandermonde (repeated point)');
    for (let j = 0; j < 2 * n; j++) M[c][j] /= d;
    for (let i = 0; i < n; i++) {
      if (i === c || M[i][c] === 0) continue;
      const f = M[i][c];
      for (let j = 0; j < 2 * n; j++) M[i][j] -= f * M[c][j];
    }
  }
  return M.map((row) => row.slice(n));
}
