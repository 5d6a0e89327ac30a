#!/usr/bin/python3
"""Reference values for Surf's Philox4x32-10 generator, written independently of the TypeScript
code (numpy uint64 arithmetic). Run with /usr/bin/python3 from the repository root:

    /usr/bin/python3 scripts/rng/make-philox-fixtures.py

Writes test-support/fixtures/philox.json. The three published Random123 known-answer
vectors (kat_vectors, philox4x32 R=10) are asserted before anything is written.
"""
import json
import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(ctr, key):
    c = [np.uint64(v) for v in ctr]
    k0, k1 = key
    for r in range(10):
        p0 = M0 * c[0]
        p1 = M1 * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & MASK
        hi1, lo1 = p1 >> np.uint64(32), p1 & MASK
        c = [hi1 ^ c[1] ^ np.uint64(k0), lo1, hi0 ^ c[3] ^ np.uint64(k1), lo0]
        k0 = (k0 + W0) & 0xFFFFFFFF
        k1 = (k1 + W1) & 0xFFFFFFFF
    return [int(v) for v in c]


# Random123 1.09, tests/kat_vectors: "philox4x32 10 <ctr x4> <key x2> <expected x4>".
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]
for ctr, key, want in KAT:
    got = philox4x32_10(ctr, key)
    assert got == list(want), (ctr, key, [hex(v) for v in got])

rng = np.random.default_rng(20261129)
more = []
for _ in range(16):
    ctr = [int(v) for v in rng.integers(0, 2**32, 4, dtype=np.uint64)]
    key = [int(v) for v in rng.integers(0, 2**32, 2, dtype=np.uint64)]
    more.append({"ctr": ctr, "key": key, "out": philox4x32_10(ctr, key)})

# Surf's draws: counter offset + j (64 bits in words 0 and 1, words 2 and 3 zero) with key
# (seed low 32 bits, seed high bits) gives the four words of elements 4j .. 4j + 3.
TWO_M24 = np.float32(2.0**-24)


def words(key, offset, n):
    """The Philox word of each element, and the four words of its counter."""
    out = []
    for i in range(n):
        c = offset + i // 4
        w = philox4x32_10((c & 0xFFFFFFFF, (c >> 32) & 0xFFFFFFFF, 0, 0), key)
        out.append((w[i % 4], w, i % 4))
    return out


def uniform(e):
    return float(np.float32(e[0] >> 8) * TWO_M24)


def normal(e):
    # Box-Muller on the pair (w0, w1) for elements 0 and 1 of a counter, (w2, w3) for 2 and 3:
    # cos for the even element, sin for the odd one. ln, cos and sin from float64 libm, the
    # product rounded to float32 (the kernels' float32 polynomials stay within a few ulp).
    _, w, m = e
    a, b = w[m & 2], w[(m & 2) + 1]
    u1 = ((a >> 8) + 1) * 2.0**-24
    u2 = (b >> 8) * 2.0**-24
    trig = np.sin if m & 1 else np.cos
    return float(np.float32(np.sqrt(-2.0 * np.log(u1)) * trig(2.0 * np.pi * u2)))


draws = []
# (seed, offset, n): offset 2 follows the first 8-element draw of seed 42; 2^32 - 1 carries
# into the counter's high word at element 4.
for seed, offset, n in [(0, 0, 8), (42, 0, 8), (42, 2, 8), (2**32 + 7, 2**32 - 1, 7), (123456789, 1000, 9)]:
    key = (seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF)
    w = words(key, offset, n)
    draws.append(
        {
            "seed": seed,
            "offset": offset,
            "key": list(key),
            "words": [x[0] for x in w],
            "uniform": [uniform(x) for x in w],
            "normal": [normal(x) for x in w],
            # randint(low, high): low + word mod (high - low)
            "randint": {"low": -5, "high": 7, "values": [-5 + x[0] % 12 for x in w]},
        }
    )

out = {
    "kat": [{"ctr": list(c), "key": list(k), "out": list(o)} for c, k, o in KAT],
    "more": more,
    "draws": draws,
}
with open("test-support/fixtures/philox.json", "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote test-support/fixtures/philox.json")
