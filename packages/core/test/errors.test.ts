import {
  BackendError,
  CpuBackend,
  DTypeError,
  DisposedError,
  E,
  Expr,
  NDArray,
  ShapeError,
  SurfError,
  ValueError,
  View,
  createBackend,
  normAxis,
  randomArray,
  randomInts,
} from '@surf/core';

// Every bad input raises a SurfError subclass whose message names the op, what was given and
// what was expected. Each test pins the class and the message's key parts.
const b = new CpuBackend();
const f = (shape: number[]) => NDArray.full(b, shape, 1);
const i32 = (shape: number[]) => NDArray.full(b, shape, 1, 'int32');
const bool = (shape: number[]) => NDArray.full(b, shape, 1, 'bool');

function expectError(fn: () => unknown, cls: new (...a: never[]) => SurfError, ...parts: (string | RegExp)[]): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(cls);
  expect(err).toBeInstanceOf(SurfError);
  const msg = (err as Error).message;
  for (const p of parts) {
    if (typeof p === 'string') expect(msg).toContain(p);
    else expect(msg).toMatch(p);
  }
  expect((err as Error).name).toBe(cls.name);
}

async function expectRejects(
  p: Promise<unknown>,
  cls: new (...a: never[]) => SurfError,
  ...parts: string[]
): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(cls);
  for (const s of parts) expect((err as Error).message).toContain(s);
}

describe('creation', () => {
  test('fromData: wrong length names both sizes', () => {
    expectError(
      () => NDArray.fromData(b, [1, 2, 3], [2, 2]),
      ShapeError,
      'fromData',
      '3 values',
      '[2,2]',
      '4 elements',
    );
  });
  test('fromData / full: invalid shapes', () => {
    expectError(() => NDArray.fromData(b, [1], [-1]), ShapeError, 'fromData', '[-1]', 'non-negative integers');
    expectError(() => NDArray.full(b, [1.5], 0), ShapeError, 'full', '[1.5]');
    expectError(() => NDArray.full(b, 'abc' as unknown as number[], 0), ShapeError, 'full', 'expected an array');
  });
  test('fromData / full / cast: unknown dtype lists the valid ones', () => {
    expectError(
      () => NDArray.fromData(b, [1], [1], 'float64' as never),
      DTypeError,
      'fromData',
      '"float64"',
      'float32, int32, bool',
    );
    expectError(() => NDArray.full(b, [1], 0, 'f16' as never), DTypeError, 'full', '"f16"');
    expectError(() => f([2]).cast('uint8' as never), DTypeError, 'cast', '"uint8"');
  });
  test('fromData: non-numeric values', () => {
    expectError(
      () => NDArray.fromData(b, [1, 'x' as unknown as number], [2]),
      ValueError,
      'fromData',
      'index 1',
      'expected numbers',
    );
  });
  test('full: non-numeric value', () => {
    expectError(() => NDArray.full(b, [2], '3' as unknown as number), ValueError, 'full', '"3"', 'expected a number');
  });
  test('random: bad seed, bad range, bad count', () => {
    expectError(() => randomArray('uniform', 3, NaN), ValueError, 'random', 'seed NaN');
    expectError(() => randomInts(3, 5, 5, 1), ValueError, 'randint', '[5, 5)');
    expectError(() => randomArray('uniform', -1, 1), ValueError, 'random', 'count -1', 'non-negative integer');
    expectError(() => randomArray('gamma' as never, 2, 1), ValueError, 'random', '"gamma"', 'uniform or normal');
  });
  test('createBackend: unknown name lists registered ones and hints at @surf/webgpu', async () => {
    await expectRejects(createBackend('webgpu-nope'), BackendError, "'webgpu-nope'", 'registered: cpu');
    await expectRejects(createBackend('webgpu'), BackendError, "import '@surf/webgpu'");
  });
});

describe('movement', () => {
  test('reshape: element count mismatch', () => {
    expectError(() => f([2, 3]).reshape([4, 2]), ShapeError, 'reshape', '[2,3]', '6 elements', '[4,2]', '8 elements');
    expectError(() => f([2, 3]).reshape([-1, 3]), ShapeError, 'reshape', '[-1,3]');
  });
  test('permute: not a permutation, axis out of range', () => {
    expectError(() => f([2, 3]).permute([0, 0]), ShapeError, 'permute', '[0,0]', 'permutation', '[2,3]');
    expectError(() => f([2, 3]).permute([0]), ShapeError, 'permute', '[0]');
    expectError(() => f([2, 3]).permute([0, 2]), ShapeError, 'permute', 'axis 2', '2-d');
  });
  test('expand: non-1 dim, fewer dims', () => {
    expectError(() => f([2, 3]).expand([4, 3]), ShapeError, 'expand', '[2,3]', '[4,3]', 'only size-1 dims can grow');
    expectError(() => f([2, 3]).expand([3]), ShapeError, 'expand', 'fewer dims');
  });
  test('crop: out of range, reversed, wrong count, malformed', () => {
    expectError(() => f([4]).crop([[0, 5]]), ShapeError, 'crop', '[[0,5]]', '[4]', '0 <= begin <= end <= size');
    expectError(() => f([4]).crop([[3, 2]]), ShapeError, 'crop', '[[3,2]]');
    expectError(() => f([4, 4]).crop([[0, 1]]), ShapeError, 'crop', '[4,4]');
    expectError(() => f([4]).crop([5] as never), ShapeError, 'crop', '[5]');
    expectError(() => f([4]).crop(undefined as never), ShapeError, 'crop', 'undefined');
  });
  test('pad: negative, wrong count, malformed', () => {
    expectError(() => f([4]).pad([[-1, 0]]), ValueError, 'pad', '[[-1,0]]', 'non-negative');
    expectError(
      () =>
        f([4]).pad([
          [1, 0],
          [0, 0],
        ]),
      ValueError,
      'pad',
      '[4]',
      '1 pairs',
    );
    expectError(() => f([4]).pad([1] as never), ValueError, 'pad', '[1]');
    expectError(() => f([4]).pad(null as never), ValueError, 'pad', 'null');
  });
  test('flip: axis out of range, repeated', () => {
    expectError(() => f([2, 3]).flip(2), ShapeError, 'flip', 'axis 2', '2-d');
    expectError(() => f([2, 3]).flip([1, -1]), ShapeError, 'flip', 'repeated axis');
  });
  test('View-level checks: flip of an axis the view lacks', () => {
    expectError(() => View.contiguous([2, 3]).flip([3]), ShapeError, 'flip', '3', '[2,3]');
  });
});

describe('elementwise', () => {
  test('broadcast failure names both shapes and the dim', () => {
    expectError(
      () => f([2, 3]).map(E.add(E.in(0), E.in(1)), f([4])),
      ShapeError,
      'elementwise',
      '[2,3]',
      '[4]',
      'cannot broadcast',
      '3 vs 4',
    );
    expectError(
      () => NDArray.elementwise([E.in(0)], [f([2, 0]), f([3, 1])], 'add'),
      ShapeError,
      'add',
      '[2,0]',
      '[3,1]',
    );
  });
  test('operand dtypes differ', () => {
    expectError(() => f([2]).map(E.add(E.in(0), E.in(1)), i32([2])), DTypeError, 'add', 'float32 and int32', 'cast');
  });
  test('float-only ops reject int32 and bool', () => {
    for (const op of ['exp', 'log', 'sqrt', 'recip', 'sin'] as const) {
      expectError(() => i32([2]).map(E.un(op, E.in(0))), DTypeError, `${op}: got dtype int32`, 'expected float32');
      expectError(() => bool([2]).map(E.un(op, E.in(0))), DTypeError, `${op}: got dtype bool`);
    }
    expectError(() => i32([2]).map(E.pow(E.in(0), E.in(0))), DTypeError, 'pow: got dtype int32', 'expected float32');
  });
  test('arithmetic on bool is rejected, eq on bool is allowed', () => {
    expectError(() => bool([2]).map(E.add(E.in(0), E.in(0))), DTypeError, 'add: got dtype bool', 'cast first');
    expectError(() => bool([2]).map(E.neg(E.in(0))), DTypeError, 'neg: got dtype bool');
    expectError(() => bool([2]).map(E.lt(E.in(0), E.in(0))), DTypeError, 'lt: got dtype bool');
    expect(bool([2]).map(E.eq(E.in(0), E.in(0))).dtype).toBe('bool');
  });
  test('where: non-bool condition, branch dtypes differ', () => {
    expectError(
      () => f([2]).map(E.where(E.in(0), E.in(0), E.in(0))),
      DTypeError,
      'where',
      'condition has dtype float32',
      'expected bool',
    );
    expectError(() => bool([2]).map(E.where(E.in(0), E.f(1), E.i(1))), DTypeError, 'where', 'float32 and int32');
  });
  test('expression reading a missing input', () => {
    expectError(() => f([2]).map(E.add(E.in(0), E.in(3))), DTypeError, 'reads input 3', 'only 1 inputs');
  });
  test('no inputs', () => {
    expectError(() => NDArray.elementwise([E.f(1)], [], 'ones'), ValueError, 'ones', 'at least one input');
  });
  test('malformed expression nodes are rejected, not compiled to NaN', () => {
    expectError(
      () => f([2]).map({ kind: 'unary', op: 'atanh', a: E.in(0) } as unknown as Expr),
      ValueError,
      "unknown unary op 'atanh'",
      'neg, exp',
    );
    expectError(
      () => f([2]).map({ kind: 'binary', op: 'hypot', a: E.in(0), b: E.in(0) } as unknown as Expr),
      ValueError,
      "unknown binary op 'hypot'",
    );
    expectError(() => f([2]).map({ kind: 'weird' } as unknown as Expr), ValueError, 'unknown expression node', 'weird');
    expectError(() => f([2]).map(E.cast(E.in(0), 'float16' as never)), DTypeError, 'cast', '"float16"');
    expectError(() => f([2]).map(E.add(E.in(0), E.c(1, 'f64' as never))), DTypeError, 'const', '"f64"');
    expectError(
      () => f([2]).map(E.add(E.in(0), E.f('2' as unknown as number))),
      ValueError,
      'const',
      '"2"',
      'expected a number',
    );
    expectError(() => f([2]).map(E.in(-1)), DTypeError, 'reads input -1');
  });
  test('backend.elementwise validates input views against the output shape', () => {
    const x = f([3]);
    expectError(
      () => b.elementwise([E.in(0)], [{ storage: x.storage, view: View.contiguous([2]) }], [3]),
      ShapeError,
      'elementwise',
      'input 0',
      '[2]',
      '[3]',
    );
    expectError(
      () => b.elementwise([E.in(0)], [{ storage: x.storage, view: new View([3], [1], 1) }], [3]),
      ShapeError,
      'elementwise',
      'input 0',
      'outside',
      '3 elements',
    );
  });
});

describe('reduce', () => {
  test('bool is rejected', () => {
    expectError(() => bool([2]).sum(), DTypeError, 'sum: got dtype bool', 'float32 or int32');
    expectError(() => bool([2]).max(), DTypeError, 'max: got dtype bool');
  });
  test('axes out of range, repeated', () => {
    expectError(() => f([2, 3]).sum(2), ShapeError, 'sum', 'axis 2', '2-d', '-2 <= axis < 2');
    expectError(() => f([2, 3]).max([0, -2]), ShapeError, 'max', 'repeated axis');
    expectError(() => f([2, 3]).sum(0.5), ShapeError, 'sum', 'axis 0.5');
    expectError(() => NDArray.full(b, [], 1).sum(0), ShapeError, 'sum', '0-d');
  });
});

describe('matmul', () => {
  test('inner dims differ', () => {
    expectError(
      () => f([2, 3]).matmul(f([4, 5])),
      ShapeError,
      'matmul',
      '[2,3]',
      '[4,5]',
      "a's last dim 3",
      'second-to-last 4',
    );
  });
  test('1-d operands', () => {
    expectError(() => f([3]).matmul(f([3, 2])), ShapeError, 'matmul', '[3]', 'at least 2-d');
  });
  test('batch dims do not broadcast', () => {
    expectError(
      () => f([2, 2, 3]).matmul(f([3, 3, 4])),
      ShapeError,
      'matmul',
      '[2]',
      '[3]',
      '[2,2,3]',
      '[3,3,4]',
      'cannot broadcast',
    );
  });
  test('non-float dtypes', () => {
    expectError(() => i32([2, 2]).matmul(f([2, 2])), DTypeError, 'matmul', 'int32 and float32', 'expected float32');
  });
});

describe('gather', () => {
  test('index dtype, index rank, axis', () => {
    expectError(() => f([3, 2]).gather(0, f([2])), DTypeError, 'gather', 'index has dtype float32', 'int32');
    expectError(() => f([3, 2]).gather(0, i32([2, 1])), ShapeError, 'gather', '[2,1]', '1-d');
    expectError(() => f([3, 2]).gather(2, i32([2])), ShapeError, 'gather', 'axis 2', '2-d');
  });
});

describe('lifetime', () => {
  test('using a disposed array raises DisposedError naming its shape', async () => {
    const x = f([2, 5]);
    x.dispose();
    expectError(() => x.sum(), DisposedError, '[2,5]', 'after dispose()');
    expectError(() => x.reshape([10]), DisposedError, '[2,5]');
    expectError(() => x.map(E.neg(E.in(0))), DisposedError, '[2,5]');
    await expectRejects(x.data(), DisposedError, '[2,5]');
    expect(() => x.dispose()).not.toThrow();
  });
  test('a destroyed backend raises DisposedError', async () => {
    const c = new CpuBackend();
    const x = NDArray.full(c, [2], 1);
    c.destroy();
    expectError(() => NDArray.full(c, [2], 1), DisposedError, 'cpu', 'destroyed');
    expectError(() => c.fromData(new Float32Array(1), 'float32'), DisposedError, 'destroyed');
    await expectRejects(x.data(), DisposedError, 'cpu');
  });
  test('mixing backends raises BackendError', () => {
    const c = new CpuBackend();
    const y = NDArray.full(c, [2], 1);
    expectError(() => f([2]).map(E.add(E.in(0), E.in(1)), y), BackendError, 'different backends');
    expectError(() => f([2, 2]).matmul(NDArray.full(c, [2, 2], 1)), BackendError, 'matmul', 'different backends');
    expectError(
      () => f([2, 2]).gather(0, NDArray.full(c, [1], 0, 'int32')),
      BackendError,
      'gather',
      'different backends',
    );
    expectError(
      () => b.elementwise([E.in(0)], [{ storage: y.storage, view: View.contiguous([2]) }], [2]),
      BackendError,
      'elementwise',
      'another backend',
    );
  });
});

describe('axis messages', () => {
  test('a 0-d tensor has no axes', () =>
    expect(() => normAxis('sum', 0, 0)).toThrow('sum: axis 0 given for a 0-d tensor, which has no axes'));
  test('a fractional axis is not called out of range', () =>
    expect(() => normAxis('sum', 0.5, 2)).toThrow('sum: axis 0.5 is not an integer'));
  test('out of range names the valid range', () =>
    expect(() => normAxis('sum', 2, 2)).toThrow('expected -2 <= axis < 2'));
});
