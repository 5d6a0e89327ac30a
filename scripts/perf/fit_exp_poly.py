"""Fits P in e^r = 1 + r + r^2 P(r) on |r| <= ln2/2 for relative error (Lawson-weighted least
squares on Chebyshev nodes): the coefficients of the CPU backend's vectorised exp
(packages/core/src/cpu/wasm/simd-math.ts). Prints degree, max relative error, error in units
of 2^-24, coefficients highest first.  /usr/bin/python3 scripts/perf/fit_exp_poly.py
"""
import numpy as np
L = np.log(2)/2
N = 4000
r = L*np.cos(np.pi*(np.arange(N)+0.5)/N)
r = r[np.abs(r) > 1e-6]
g = (np.exp(r) - 1 - r)/r**2
def fit(deg, iters=60):
    w = np.ones_like(r)
    for it in range(iters):
        A = np.vstack([r**k for k in range(deg+1)]).T * (w*r**2/np.exp(r))[:,None]
        b = g * (w*r**2/np.exp(r))
        c, *_ = np.linalg.lstsq(A, b, rcond=None)
        err = np.abs((1 + r + r**2*(np.vstack([r**k for k in range(deg+1)]).T @ c)) - np.exp(r))/np.exp(r)
        w = w * (err/err.max())**0.5 + 1e-12  # Lawson
        w /= w.max()
    return c, err.max()
for deg in (3,4):
    c, e = fit(deg)
    print(deg, e, e/2**-24, [float(np.float32(x)) for x in c[::-1]])
