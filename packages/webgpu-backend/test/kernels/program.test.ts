import { ParamBlock, Uniforms } from '../../src/kernels/program';
import { planMatmul } from '../../src/kernels/matmul/plan';
import { MatmulProgram } from '../../src/kernels/matmul/matmul';
import { matmulWgsl } from '../../src/kernels/matmul/wgsl';
import type { PooledBuffer } from '../../src/pool';
import { E } from '@surf/core';

// The program machinery without a GPU: named words land where the WGSL reads them.

function arena(words: number) {
  const buf = new ArrayBuffer(words * 4);
  return { u32: new Uint32Array(buf), i32: new Int32Array(buf), f32: new Float32Array(buf) };
}

test('uniforms lay out named runs in order and read them with their type', () => {
  const u = new Uniforms().u32('n').i32('strides', 3).f32('scale').u32('empty', 0).u32('last');
  expect(u.words).toBe(6);
  expect([u.word('n'), u.word('strides', 0), u.word('strides', 2), u.word('scale'), u.word('last')]).toEqual([
    0, 1, 3, 4, 5,
  ]);
  // word w lives at U[w / 4][w % 4]; i32 and f32 words are bitcasts of it.
  expect(u.ref('n')).toBe('U[0][0]');
  expect(u.ref('strides', 2)).toBe('bitcast<i32>(U[0][3])');
  expect(u.ref('scale')).toBe('bitcast<f32>(U[1][0])');
  expect(() => u.ref('strides', 3)).toThrow(/outside its 3 words/);
  expect(() => u.ref('nope')).toThrow(/no parameter 'nope'/);
  expect(() => u.u32('n')).toThrow(/declared twice/);
});

test('a parameter block writes each name at its word, as its type', () => {
  const u = new Uniforms().u32('n').i32('strides', 2).f32('scale').u32('consts', 4);
  const w = arena(16);
  const p = new ParamBlock(w, 8, u);
  p.set('n', 7).setAll('strides', [-3, 5]).set('scale', 0.5);
  p.setConsts('consts', [
    { value: 1.5, dtype: 'float32' },
    { value: 3e9, dtype: 'int32' },
    { value: NaN, dtype: 'int32' },
    { value: -2, dtype: 'bool' },
  ]);
  expect(Array.from(w.u32.slice(0, 8))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  expect(w.u32[8]).toBe(7);
  expect([w.i32[9], w.i32[10]]).toEqual([-3, 5]);
  expect(w.f32[11]).toBe(0.5);
  expect([w.f32[12], w.i32[13], w.i32[14], w.u32[15]]).toEqual([1.5, 2147483647, 0, 1]);
  expect(() => p.setAll('strides', [1])).toThrow(/has 2 words; got 1/);
});

test('matmul: the WGSL reads every parameter word the dispatch writes, under the same name', () => {
  const buf = (id: number) => ({ id, bytes: 1024, lastBatch: 0 }) as unknown as PooledBuffer;
  const op = (id: number, batchStrides: number[], rowStride: number, colStride: number) => ({
    buf: buf(id),
    offset: 4,
    batchStrides,
    rowStride,
    colStride,
  });
  const epi = {
    expr: E.max(E.add(E.in(0), E.in(2)), E.f(0)),
    inputs: [
      { ...op(3, [0, 0], 0, 1), dtype: 'float32' as const },
      { ...op(4, [0, 12], 4, 1), dtype: 'float32' as const },
    ],
  };
  const plan = planMatmul(
    { tileM: 32, tileN: 32, tileK: 8, threadM: 4, threadN: 4, vec4: true },
    {
      a: op(1, [96, 24], 8, 1),
      b: op(2, [0, 40], 1, 9),
      batchShape: [2, 3],
      m: 4,
      n: 4,
      k: 8,
      out: buf(5),
      epi,
    },
  );
  const prog = new MatmulProgram(plan);
  const u = prog.uniforms();
  const wgsl = matmulWgsl(plan, u);
  // Only the epilogue input the expression reads (input 2, index 1) gets words and a binding.
  expect(plan.eIdx).toEqual([1]);
  expect(u.has('e0Offset')).toBe(false);
  expect(u.has('e1Offset')).toBe(true);
  expect(prog.reads).toBe(3);
  // Every declared word is read by the shader (but the leading batch extent: its digit needs
  // no modulus), so none is written in vain or read unset.
  for (let w = 0; w < u.words; w++) if (w !== u.word('batchShape', 0)) expect(wgsl).toContain(`U[${w >> 2}][${w & 3}]`);
  expect(wgsl).not.toContain(u.ref('batchShape', 0));
  expect(wgsl).toContain(`var<uniform> U: array<vec4<u32>, ${Math.ceil(u.words / 4)}>`);
  // One loader serves both operands: A is k-contiguous (vec4 loads), B n-strided (scalar).
  expect(wgsl).toContain(
    `v = A4[u32(aBase + i32(gr) * ${u.ref('aRowStride')} + i32(gk) * ${u.ref('aColStride')}) / 4u]`,
  );
  expect(wgsl).toContain(`v = B[u32(bBase + i32(gk) * ${u.ref('bRowStride')} + i32(gc) * ${u.ref('bColStride')})]`);
});
