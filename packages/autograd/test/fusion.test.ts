import { CpuBackend, ShapeError } from '@surf/core';
import { Tensor, memory, noGrad, setBackend, tensor } from '@surf/autograd';

// The fusion pass's edges on the CPU backend, against loops: what folds and what does not
// gives the same numbers, errors stay at the call, pending values are freed, and a pending
// root of backward serves both its saved output and its reader.

const cpu = new CpuBackend();
let prev: ReturnType<typeof setBackend>;
beforeAll(() => {
  prev = setBackend(cpu);
});
afterAll(() => {
  setBackend(prev);
});

const A = [
  [0.5, -1.5, 2],
  [1, 0.25, -0.75],
];
const W = [
  [0.3, -0.2],
  [0.7, 0.4],
  [-0.5, 0.9],
];
const prod = A.map((r) => W[0].map((_, j) => r.reduce((s, v, k) => s + v * W[k][j], 0)));

function near(got: number[][], want: number[][]): void {
  want.forEach((r, i) => r.forEach((v, j) => expect(Math.abs(got[i][j] - v)).toBeLessThan(1e-6 * (1 + Math.abs(v)))));
}

test('leakyRelu folds without grad and runs on the product with grad: same numbers', async () => {
  const leaky = (v: number) => (v > 0 ? v : 0.1 * v);
  const want = prod.map((r) => r.map((v) => leaky(v * 2)));
  const a = tensor(A),
    w = tensor(W, { requiresGrad: true });
  const folded = noGrad(() => a.matmul(w).mul(2).leakyRelu(0.1));
  const unfolded = a.matmul(w).mul(2).leakyRelu(0.1); // its backward reads the input: not folded
  near((await folded.toArray()) as number[][], want);
  near((await unfolded.toArray()) as number[][], want);
  [a, w, folded, unfolded].forEach((t) => t.dispose());
});

test('a bad operand of a folding op raises its ShapeError at the call', () => {
  const a = tensor(A),
    w = tensor(W);
  const z = a.matmul(w);
  expect(() => z.add(tensor([1, 2, 3]))).toThrow(ShapeError);
  [a, w, z].forEach((t) => t.dispose());
});

test('pending values never read are freed with their tensors', async () => {
  const a = tensor(A),
    w = tensor(W),
    b = tensor([0.1, -0.1]);
  await Promise.resolve();
  const before = memory().bytes;
  for (let i = 0; i < 5; i++) {
    const y = a.matmul(w).add(b).relu();
    y.dispose();
  }
  await Promise.resolve();
  expect(memory().bytes).toBe(before);
  [a, w, b].forEach((t) => t.dispose());
});

test('backward from a pending root: its saved output, its value and the gradients match loops', async () => {
  const a = tensor(A),
    w = tensor(W, { requiresGrad: true }),
    b = tensor([0.1, -0.1], { requiresGrad: true });
  const y: Tensor = a.matmul(w).add(b).tanh(); // pending: tanh's backward reads the output
  const g = [
    [1, 2],
    [-1, 0.5],
  ];
  y.backward(tensor(g));
  const out = prod.map((r) => r.map((v, j) => Math.tanh(v + [0.1, -0.1][j])));
  near((await y.toArray()) as number[][], out);
  const dz = out.map((r, i) => r.map((t, j) => g[i][j] * (1 - t * t)));
  near(
    (await w.grad!.toArray()) as number[][],
    W.map((r, k) => r.map((_, j) => A.reduce((s, ar, i) => s + ar[k] * dz[i][j], 0))),
  );
  near([(await b.grad!.toArray()) as number[]], [[0, 1].map((j) => dz[0][j] + dz[1][j])]);
  [a, w, b, y].forEach((t) => t.dispose());
});
