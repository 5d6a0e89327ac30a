import { NDArray, attentionBackwardNd, attentionNd } from '@surf/core';
import type { WebGPUBackend, WebGPUBackendOptions } from '@surf/webgpu';
import { expectClose, twin } from '../../cpu-compare';
import { describeGpu, gpuBackend } from '../../gpu';

// The register-tiled attention kernels (head dims 32 and 64, no mask) against the CPU backend, on
// shapes with partial tiles on both sides (L, S not multiples of the tiles), causal with
// L != S, broadcast batch dims and a strided view; with the row-max reduction through
// subgroup shuffles (as many lanes as the adapter's smallest subgroup) and through workgroup
// memory alone.

function pipelineKeys(b: WebGPUBackend): string[] {
  return [...(b as unknown as { rt: { pipelines: Map<string, unknown> } }).rt.pipelines.keys()];
}

async function check(
  b: WebGPUBackend,
  qShape: number[],
  kShape: number[],
  causal: boolean,
  seed: number,
  transposeQ = false,
): Promise<void> {
  const E = qShape[qShape.length - 1];
  const [qg0, qc0] = twin(b, transposeQ ? [qShape[0], qShape[2], qShape[1], E] : qShape, seed);
  const qg = transposeQ ? qg0.permute([0, 2, 1, 3]) : qg0,
    qc = transposeQ ? qc0.permute([0, 2, 1, 3]) : qc0;
  const [kg, kc] = twin(b, kShape, seed + 1);
  const [vg, vc] = twin(b, kShape, seed + 2);
  const opts = { scale: 0.125 + 0.01 * seed, causal };
  const og = attentionNd(qg, kg, vg, opts),
    oc = attentionNd(qc, kc, vc, opts);
  const [gg, gc] = twin(b, [...og.out.shape], seed + 3);
  const bg = attentionBackwardNd(qg, kg, vg, og.out, og.lse, gg, opts);
  const bc = attentionBackwardNd(qc, kc, vc, oc.out, oc.lse, gc, opts);
  const what = `${JSON.stringify(qShape)} x ${JSON.stringify(kShape)}${causal ? ' causal' : ''}`;
  const pairs: [string, NDArray, NDArray][] = [
    ['out', og.out, oc.out],
    ['lse', og.lse, oc.lse],
    ['dq', bg.dq, bc.dq],
    ['dk', bg.dk, bc.dk],
    ['dv', bg.dv, bc.dv],
  ];
  for (const [name, g, c] of pairs) {
    const want = await c.data();
    const peak = Math.max(...Array.from(want, Math.abs));
    expectClose(await g.data(), want, 1e-4, 1e-5 * peak + 1e-6, `${what} ${name}`);
  }
  [qg0, qc0, kg, kc, vg, vc, gg, gc, og.out, og.lse, oc.out, oc.lse, bg.dq, bg.dk, bg.dv, bc.dq, bc.dk, bc.dv].forEach(
    (x) => x.dispose(),
  );
  if (transposeQ) {
    qg.dispose();
    qc.dispose();
  }
}

const variants: [string, WebGPUBackendOptions['attention']][] = [
  ['default (subgroup shuffles where the adapter has them)', undefined],
  // Both knobs in one backend: they change different parts of the generated code (the row
  // maxima, the loop structure), and one set of pipelines to compile halves their test time.
  ['row maxima through workgroup memory only, fully unrolled loops', { shuffle: 1, unroll: 64 }],
];

describeGpu.each(variants)('tiled attention, %s', (_name, attention) => {
  let b: WebGPUBackend;
  beforeAll(async () => {
    b = await gpuBackend({ attention });
  });
  afterAll(() => b?.destroy());

  test('values and gradients match the CPU backend: partial tiles, causal with L != S', async () => {
    await check(b, [2, 45, 64], [2, 37, 64], true, 2);
    // The other variants differ in code generation only (SwiftShader's time goes to running
    // these kernels): one causal shape with partial tiles covers them.
    if (attention === undefined) {
      await check(b, [2, 37, 64], [2, 45, 64], false, 1);
      await check(b, [1, 70, 64], [1, 70, 64], true, 3);
    }
    expect(pipelineKeys(b).some((k) => k.startsWith('attention tiled dkv'))).toBe(true);
  });

  // The operand addressing is the same code in every variant: once is enough.
  if (attention === undefined) {
    test('broadcast batch dims and a strided query view', async () => {
      await check(b, [2, 3, 19, 64], [1, 3, 23, 64], true, 4, true);
    });

    // Tiles that divide L and S, contiguous operands: sizes compiled in, no bounds checks, vec4
    // loads and stores. S = 48 divides the forward's streamed tile but not dQ's or dK/dV's, so
    // that problem mixes the aligned forward with the general backward.
    test('the aligned path: tiles dividing L and S, a broadcast batch, mixed with the general kernels', async () => {
      const fixedKeys = () => pipelineKeys(b).filter((k) => k.startsWith('attention tiled') && /\|f\d+,\d+\|/.test(k));
      await check(b, [2, 1, 64, 64], [1, 1, 64, 64], true, 9);
      await check(b, [1, 64, 64], [1, 128, 64], false, 10);
      expect(fixedKeys().length).toBeGreaterThanOrEqual(6);
      const before = fixedKeys().length;
      await check(b, [1, 64, 64], [1, 48, 64], false, 11);
      expect(
        fixedKeys()
          .filter((k) => k.includes('|f64,48|'))
          .map((k) => k.split('|')[0]),
      ).toEqual(['attention tiled']);
      expect(fixedKeys().length).toBe(before + 1);
    });

    // Head dim 32 (the GPT example's 128 / 4 heads): 8 vec4 columns, so every kernel owns 64
    // rows (a 32-row dK/dV tile becomes 64 rows of the same streamed tile); general and aligned.
    test('head dim 32: partial tiles and the aligned path match the CPU backend', async () => {
      await check(b, [2, 45, 32], [2, 37, 32], true, 12);
      await check(b, [2, 64, 32], [2, 64, 32], true, 13);
      const keys = pipelineKeys(b).filter((k) => k.startsWith('attention tiled') && k.includes('|E32|'));
      expect(keys.filter((k) => /\|f64,64\|/.test(k)).length).toBe(3);
      expect(keys.filter((k) => k.includes('|g|')).length).toBe(3);
    });
  }
});

describeGpu('tiled attention: what stays on the row kernels', () => {
  test("'rows' and shapes the tiles do not take (E not 32 or 64, a mask) use the row kernels", async () => {
    const b = await gpuBackend({ attention: 'rows' });
    await check(b, [1, 9, 64], [1, 11, 64], true, 5);
    expect(pipelineKeys(b).some((k) => k.startsWith('attention tiled'))).toBe(false);
    b.destroy();
    const t = await gpuBackend();
    const [q] = twin(t, [1, 5, 48], 6);
    const [q64] = twin(t, [1, 5, 64], 7);
    const [mask] = twin(t, [5, 5], 8);
    attentionNd(q, q, q, { scale: 1 }).out.dispose();
    const r = attentionNd(q64, q64, q64, { scale: 1, mask });
    expect(pipelineKeys(t).some((k) => k.startsWith('attention tiled'))).toBe(false);
    [q, q64, mask, r.out, r.lse].forEach((x) => x.dispose());
    t.destroy();
    await expect(gpuBackend({ attention: { unroll: 3 } })).rejects.toThrow(
      /attention.unroll 3; expected a power of two/,
    );
  });
});
