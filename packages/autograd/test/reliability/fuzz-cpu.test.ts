import { CpuBackend } from '@surf/core';
import { setBackend } from '@surf/autograd';
import { checkAgainstOracle, makeCase, runCase } from './fuzz/run';

/**
 * Random chains of public Tensor calls with random shapes, dtypes and arguments, valid and
 * not, on the CPU backend. Valid calls must return what the fuzz oracle says (shape, dtype);
 * invalid ones must raise a SurfError of the right class naming the op (and the shapes where
 * shapes are the problem); nothing may leak a tensor or a buffer.
 */
const CASES = 3000;

const failures: string[] = [];
const kinds = { ok: 0, error: 0, either: 0 };

beforeAll(async () => {
  const prev = setBackend(new CpuBackend());
  try {
    for (let seed = 1; seed <= CASES; seed++) {
      const c = makeCase(seed);
      c.steps.forEach((s) => kinds[s.expect.kind]++);
      failures.push(...checkAgainstOracle(c, await runCase(c)));
    }
  } finally {
    setBackend(prev);
  }
});

test(`fuzz: ${CASES} random op chains on the CPU backend match the oracle and raise named SurfErrors`, () => {
  // Both kinds must be well represented, or the test proves little.
  expect(kinds.ok).toBeGreaterThan(CASES);
  expect(kinds.error).toBeGreaterThan(CASES / 10);
  expect(failures.slice(0, 30)).toEqual([]);
});
