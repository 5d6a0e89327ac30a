import { CpuBackend } from '@surf/core';
import { Tensor, memory, setBackend, tensor } from '@surf/autograd';

/**
 * Regression tests for bugs the reliability fuzz (autograd) found, each reproduced in a few
 * lines: errors must name the op the user called (not the internal op it is built from), and a
 * rejected call must validate its arguments before it allocates, so it leaks nothing.
 */
let prev: ReturnType<typeof setBackend>;
beforeAll(() => {
  prev = setBackend(new CpuBackend());
});
afterAll(() => {
  setBackend(prev);
});

const f32 = (xs: number[]) => tensor(Float32Array.from(xs));
const bool = (xs: number[]) => tensor(Uint8Array.from(xs));

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  return '(no error)';
}

// Errors name the op the user called, not the internal op a public op is built from.
test('fixed bug (autograd): std with a bad dim names std, not var', () => {
  expect(messageOf(() => f32([1, 2]).std(3))).toMatch(/^std: /);
});
test('fixed bug (autograd): broadcastTo to an incompatible shape names broadcastTo, not expand', () => {
  expect(messageOf(() => f32([1, 2, 3]).broadcastTo([3, 4]))).toMatch(/^broadcastTo: /);
});
test('fixed bug (autograd): dot of int32 vectors names dot, not matmul', () => {
  expect(messageOf(() => tensor([1, 2], { dtype: 'int32' }).dot(tensor([3, 4], { dtype: 'int32' })))).toMatch(/^dot: /);
});
test('fixed bug (autograd): relu and abs of a bool tensor name relu/abs, not max/neg', () => {
  expect(
    [messageOf(() => bool([1, 0]).relu()), messageOf(() => bool([1, 0]).abs())].map((m) => m.split(':')[0]),
  ).toEqual(['relu', 'abs']);
});
test('fixed bug (autograd): maximum and minimum of bool tensors name maximum/minimum, not max/lt', () => {
  expect(
    [messageOf(() => bool([1]).maximum(bool([0]))), messageOf(() => bool([1]).minimum(bool([0])))].map(
      (m) => m.split(':')[0],
    ),
  ).toEqual(['maximum', 'minimum']);
});
test('fixed bug (autograd): a matmul batch mismatch names both operand shapes, not just the batch dims', () => {
  const a = f32(new Array(24).fill(1)).reshape(3, 4, 2);
  const b = f32(new Array(8).fill(1)).reshape(2, 2, 2);
  expect(messageOf(() => a.matmul(b))).toMatch(/\[3,4,2\].*\[2,2,2\]/);
});

// Validation before allocation: a rejected call must not leak what it would cast or alias.
test('fixed bug (autograd): sum of a bool tensor with a bad dim frees the int32 copy it made', () => {
  const x = bool([1, 0, 1]);
  const before = memory().buffers;
  expect(() => x.sum(5)).toThrow();
  expect(memory().buffers).toBe(before);
});
test('fixed bug (autograd): argmax with a bad dim, softmax of int32 with a bad dim and a rejected matmul free their temporaries', () => {
  const x = f32([1, 2, 3]);
  const i = tensor([1, 2, 3]);
  const m: Tensor = f32(new Array(24).fill(1)).reshape(3, 4, 2);
  const n: Tensor = f32(new Array(8).fill(1)).reshape(2, 2, 2);
  const before = memory().buffers;
  expect(() => x.argmax(4)).toThrow();
  expect(() => i.softmax(3)).toThrow();
  expect(() => m.matmul(n)).toThrow();
  expect(memory().buffers).toBe(before);
});
