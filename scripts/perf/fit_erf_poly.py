"""Fits the two polynomials of the CPU backend's vectorised erf
(packages/core/src/cpu/wasm/simd-math.ts), by Lawson-weighted least squares on Chebyshev nodes
for relative error: erf(x) = x * S(x^2) below SPLIT, and erfc(x) = exp(-x^2) * L(x) from SPLIT
to 4 (erf = 1 - that). Prints each fit's max relative error and its float32 coefficients,
highest degree first.  /usr/bin/python3 scripts/perf/fit_erf_poly.py
"""
import math

import numpy as np

# Split where the small fit stays short (z <= 2.25: little cancellation in Horner's rule) and
# erfc/erf (0.036) shrinks the large one's error to a quarter of an ulp.
SPLIT = 1.5


def lawson(t, f, deg, iters=80):
    """Minimax-like fit of f(t) by a polynomial in t of degree deg, relative error."""
    w = np.ones_like(t)
    V = np.vstack([t**k for k in range(deg + 1)]).T
    for _ in range(iters):
        sw = np.sqrt(w) / np.abs(f)
        c, *_ = np.linalg.lstsq(V * sw[:, None], f * sw, rcond=None)
        err = np.abs(V @ c - f) / np.abs(f)
        w = w * err / err.max() + 1e-15
        w /= w.sum()
    return c, err.max()


def nodes(a, b, n=3000):
    return (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)


z = nodes(1e-8, SPLIT * SPLIT)
s = np.array([math.erf(math.sqrt(v)) / math.sqrt(v) for v in z])
for deg in (8,):
    c, e = lawson(z, s, deg)
    print("small", deg, e, [float(np.float32(v)) for v in c[::-1]])
x = nodes(SPLIT, 4.0)
g = np.array([math.erfc(v) * math.exp(v * v) for v in x])
for deg in (8,):
    c, e = lawson(x, g, deg)
    print("large", deg, e, [float(np.float32(v)) for v in c[::-1]])
