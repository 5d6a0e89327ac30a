import { planMatmul } from '../../../src/kernels/matmul/plan';
import { MatmulConfig, MatmulProgram } from '../../../src/kernels/matmul/matmul';
import { matmulWgsl } from '../../../src/kernels/matmul/wgsl';
import { workgroupBytes } from '../../../src/tune/choose';
import type { PooledBuffer } from '../../../src/pool';

// Per-thread staged rows and double buffering (no GPU needed): the workgroup memory the shader
// declares is what the validator counts, and the inner loop reads
// its rows at constant indices through one pointer per buffer.
const buf = (id: number) => ({ id, bytes: 1 << 20, lastBatch: 0 }) as unknown as PooledBuffer;
const op = (id: number, rowStride: number, colStride: number) => ({
  buf: buf(id),
  offset: 0,
  batchStrides: [],
  rowStride,
  colStride,
});

function shaderFor(cfg: MatmulConfig): string {
  const plan = planMatmul(cfg, {
    a: op(1, 256, 1),
    b: op(2, 256, 1),
    batchShape: [],
    m: 256,
    n: 256,
    k: 256,
    out: buf(3),
  });
  const prog = new MatmulProgram(plan);
  return matmulWgsl(plan, prog.uniforms());
}

/** Bytes of every `var<workgroup>` array of vec4s (possibly nested) the shader declares. */
function declaredBytes(wgsl: string): number {
  let bytes = 0;
  for (const m of wgsl.matchAll(/var<workgroup> \w+: (array<.*>);/g)) {
    const dims = [...m[1].matchAll(/, (\d+)>/g)].map((d) => Number(d[1]));
    bytes += dims.reduce((a, b) => a * b, m[1].includes('vec4') ? 16 : 4);
  }
  return bytes;
}

const base = { vec4: true, interleave: true } as const;
test.each([
  ['flat 128x128x16 pad 4', { ...base, tileM: 128, tileN: 128, tileK: 16, threadM: 8, threadN: 8, padA: 4 }],
  ['rows 64x128x16 8x8', { ...base, tileM: 64, tileN: 128, tileK: 16, threadM: 8, threadN: 8, rows: true }],
  [
    'rows+db 128x128x16 8x8',
    { ...base, tileM: 128, tileN: 128, tileK: 16, threadM: 8, threadN: 8, rows: true, doubleBuffer: true },
  ],
  [
    'rows+db 32x32x8 4x4 (odd B rows, no pad)',
    { ...base, tileM: 32, tileN: 32, tileK: 8, threadM: 4, threadN: 4, rows: true, doubleBuffer: true },
  ],
] as [string, MatmulConfig][])('%s: declared workgroup memory = workgroupBytes', (_, cfg) => {
  expect(declaredBytes(shaderFor(cfg))).toBe(workgroupBytes(cfg));
});

test('rows + double buffer: constant-index reads through one pointer per buffer, one barrier per k-step', () => {
  const w = shaderFor({
    ...base,
    tileM: 128,
    tileN: 128,
    tileK: 16,
    threadM: 8,
    threadN: 8,
    rows: true,
    doubleBuffer: true,
  });
  expect(w).toContain('let pa1 = &As4[16u + ty];');
  expect(w).toContain('let b1 = (*pb1)[31];');
  expect(w).toContain('let a4_1 = (*pa)[31];');
  // Prologue barrier plus one per half-iteration.
  expect(w.match(/workgroupBarrier\(\)/g)!.length).toBe(3);
});
