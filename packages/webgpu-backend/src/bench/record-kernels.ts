/**
 * Records what the kernels would run, without a GPU: drives the WebGPU backend on a fake
 * device through every tuner candidate (and more configs) x matmul layouts and epilogues,
 * reductions in every layout, gathers and elementwise reads, and writes each shader (key and
 * WGSL), parameter block, bind group and grid to a text file. Two recordings (before and after
 * a refactor of the generators) that compare equal mean the GPU runs the same kernels with the
 * same parameters, so performance cannot have moved.
 *
 *   node scripts/run-ts.mjs packages/webgpu-backend/src/bench/record-kernels.ts before.txt
 *   (change the generators)
 *   node scripts/run-ts.mjs packages/webgpu-backend/src/bench/record-kernels.ts after.txt && cmp before.txt after.txt
 */
import { writeFileSync } from 'node:fs';
import { E, NDArray } from '@surf/core';
import { WebGPUBackend } from '../backend';
import { MATMUL_CANDIDATES } from '../tune/tuner';

/* eslint-disable @typescript-eslint/no-explicit-any */

const log: string[] = [];
let bufId = 0;
const limits = {
  maxComputeInvocationsPerWorkgroup: 1024,
  maxComputeWorkgroupSizeX: 1024,
  maxStorageBufferBindingSize: 1 << 30,
  maxBufferSize: 1 << 30,
  maxComputeWorkgroupsPerDimension: 65535,
  minUniformBufferOffsetAlignment: 256,
  maxStorageBuffersPerShaderStage: 8,
  maxComputeWorkgroupStorageSize: 65536,
};
function fakeDevice(): GPUDevice {
  const pass = {
    setPipeline: (p: any) => log.push(`setPipeline ${p.label}`),
    setBindGroup: (_i: number, bg: any, offs: number[]) => log.push(`bind ${bg.ids.join(',')} @${offs[0]}`),
    dispatchWorkgroups: (x: number, y = 1) => log.push(`dispatch ${x}x${y}`),
    end: () => undefined,
  };
  const dev: any = {
    limits,
    lost: new Promise(() => undefined),
    addEventListener: () => undefined,
    pushErrorScope: () => undefined,
    popErrorScope: async () => null,
    createBuffer: (d: any) => ({
      id: ++bufId,
      size: d.size,
      label: d.label,
      destroy() {},
      mapAsync: async () => undefined,
      getMappedRange: () => new ArrayBuffer(d.size),
      unmap() {},
    }),
    createShaderModule: (d: any) => {
      log.push(`SHADER ${d.label}\n${d.code}`);
      return { label: d.label };
    },
    createComputePipeline: (d: any) => ({ label: d.label }),
    createBindGroupLayout: (d: any) => ({ entries: d.entries }),
    createPipelineLayout: () => ({}),
    createBindGroup: (d: any) => ({ ids: d.entries.map((e: any) => e.resource.buffer.id ?? 'arena') }),
    createCommandEncoder: () => ({
      beginComputePass: () => pass,
      copyBufferToBuffer: (_s: any, so: number, d: any) => log.push(`copy @${so} -> ${d.id}`),
      finish: () => ({}),
    }),
    queue: {
      writeBuffer: (b: any, _o: number, data: ArrayBuffer, off: number, size: number) => {
        if (b.label === 'surf params arena')
          log.push(`params ${Array.from(new Uint32Array(data, off ?? 0, size / 4)).join(' ')}`);
        else log.push(`write ${b.id} ${size}`);
      },
      submit: () => log.push('submit'),
      onSubmittedWorkDone: async () => undefined,
    },
    destroy: () => undefined,
  };
  return dev as GPUDevice;
}

function make(soft = false): WebGPUBackend {
  const info = {
    vendor: soft ? 'google' : 'nvidia',
    architecture: '',
    device: soft ? 'swiftshader' : 'h200',
    description: '',
  } as unknown as GPUAdapterInfo;
  return new WebGPUBackend({ device: fakeDevice(), adapter: null, info, owned: false, instance: null });
}

const f = (b: WebGPUBackend, shape: number[], seed = 1) => {
  const n = shape.reduce((a, c) => a * c, 1);
  const d = new Float32Array(n);
  for (let i = 0; i < n; i++) d[i] = ((i * 7 + seed * 13) % 17) / 8 - 1;
  return NDArray.fromData(b, d, shape);
};

const b = make();
const cfgs = [
  ...MATMUL_CANDIDATES,
  { tileM: 64, tileN: 64, tileK: 16, threadM: 4, threadN: 4, vec4: true },
  { tileM: 32, tileN: 32, tileK: 16, threadM: 4, threadN: 4, vec4: true, unroll: false },
  { tileM: 64, tileN: 64, tileK: 16, threadM: 4, threadN: 4, vec4: false },
  { tileM: 64, tileN: 64, tileK: 8, threadM: 4, threadN: 4, vec4: true, vecA: false },
  { tileM: 32, tileN: 32, tileK: 8, threadM: 2, threadN: 2, vec4: true },
  { tileM: 32, tileN: 32, tileK: 8, threadM: 4, threadN: 8, vec4: true, epilogueAfter: false, padA: 4 },
  { tileM: 16, tileN: 16, tileK: 8, threadM: 1, threadN: 1, vec4: true },
];
const problems: [number[], number[], string][] = [
  [[64, 96], [96, 128], 'nn'],
  [[33, 17], [17, 45], 'odd'],
  [[2, 3, 40, 24], [2, 3, 24, 36], 'batch2'],
  [[3, 40, 24], [24, 36], 'bcastB'],
];
for (const [ci, c] of cfgs.entries()) {
  b.setMatmulConfig(() => c);
  for (const [as, bs, name] of problems) {
    log.push(`== cfg ${ci} ${name}`);
    const x = f(b, as, 1),
      y = f(b, bs, 2);
    x.matmul(y).dispose();
    // transposed views
    const xt = f(b, [...as.slice(0, -2), as[as.length - 1], as[as.length - 2]], 3);
    const xT = xt.permute([...as.slice(0, -2).map((_, i) => i), as.length - 1, as.length - 2]);
    const yt = f(b, [...bs.slice(0, -2), bs[bs.length - 1], bs[bs.length - 2]], 4);
    const yT = yt.permute([...bs.slice(0, -2).map((_, i) => i), bs.length - 1, bs.length - 2]);
    xT.matmul(yT).dispose();
    // epilogues: bias + relu; const scale; a 2-input one with int and bool
    const n = bs[bs.length - 1];
    const bias = f(b, [n], 5);
    x.matmul(y, { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [bias] }).dispose();
    const outShape = [...(as.length > bs.length ? as : bs).slice(0, -2), as[as.length - 2], n];
    const res = f(b, outShape, 6);
    const mask = NDArray.fromData(
      b,
      new Uint8Array(outShape.reduce((a, q) => a * q, 1)).map((_, i) => i % 3),
      outShape,
      'bool',
    );
    x.matmul(y, {
      expr: E.where(E.in(2), E.mul(E.in(0), E.f(0.5)), E.add(E.in(1), E.cast(E.i(3), 'float32'))),
      inputs: [res, mask],
    }).dispose();
    xT.matmul(y, { expr: E.add(E.in(0), E.in(1)), inputs: [res] }).dispose();
    for (const t of [x, y, xt, xT, yt, yT, bias, res, mask]) t.dispose();
  }
  b.flush();
}
b.setMatmulConfig(undefined);
log.push('== default buckets');
for (const [m, k, n] of [
  [8, 8, 8],
  [100, 50, 200],
  [300, 300, 600],
  [1024, 16, 1024],
  [2048, 8, 2048],
]) {
  const x = f(b, [m, k]),
    y = f(b, [k, n]);
  x.matmul(y).dispose();
  x.dispose();
  y.dispose();
}
b.flush();
log.push('== reduce');
for (const [shape, axes] of [
  [[1000], [0]],
  [[64, 300], [1]],
  [[300, 64], [0]],
  [
    [8, 9, 10],
    [0, 2],
  ],
  [[4, 100000], [1]],
  [[100000, 4], [0]],
  [
    [3, 5],
    [0, 1],
  ],
  [
    [2, 3, 4, 5],
    [1, 3],
  ],
  [[1 << 20], [0]],
  [[7, 333], [1]],
] as [number[], number[]][]) {
  const x = f(b, shape);
  x.sum(axes).dispose();
  x.max(axes).dispose();
  x.permute(shape.map((_, i) => shape.length - 1 - i))
    .sum(axes.map((a) => shape.length - 1 - a))
    .dispose();
  x.cast('int32').sum(axes).dispose();
  x.cast('int32').max(axes).dispose();
  x.dispose();
}
b.flush();
log.push('== gather');
{
  const x = f(b, [10, 6]);
  const i = NDArray.fromData(b, new Int32Array([3, 1, -1, 9, 12]), [5], 'int32');
  x.gather(0, i).dispose();
  x.gather(1, i).dispose();
  x.permute([1, 0]).gather(0, i).dispose();
  const xi = NDArray.fromData(
    b,
    new Int32Array(40).map((_, q) => q % 7),
    [4, 10],
    'int32',
  );
  xi.gather(1, i).dispose();
  // same buffer (index view of xi)
  const i2 = xi.reshape([40]).crop([[0, 5]]);
  xi.gather(0, i2).dispose();
  const x3 = f(b, [3, 4, 5]);
  x3.gather(1, i).dispose();
  b.flush();
}
log.push('== elementwise');
{
  const x = f(b, [4, 5]),
    y = f(b, [5]);
  x.map(E.add(E.in(0), E.in(1)), y).dispose();
  x.permute([1, 0])
    .map(E.mul(E.in(0), E.f(2)))
    .dispose();
  x.pad([
    [1, 1],
    [0, 2],
  ])
    .map(E.exp(E.in(0)))
    .dispose();
  x.crop([
    [0, 1],
    [0, 0],
  ])
    .pad([
      [0, 0],
      [0, 5],
    ])
    .map(E.neg(E.in(0)))
    .dispose();
  NDArray.elementwise(
    [E.add(E.in(0), E.in(1)), E.mul(E.in(0), E.in(1)), E.sub(E.in(0), E.in(1))],
    [x, x.flip(1)],
  ).forEach((t) => t.dispose());
  b.flush();
}
log.push('== software adapter defaults');
{
  const sb = make(true);
  const x = f(sb, [50, 40]),
    y = f(sb, [40, 30]);
  x.matmul(y).dispose();
  x.matmul(y, { expr: E.max(E.in(0), E.f(0)), inputs: [] }).dispose();
  x.sum(1).dispose();
  x.max(0).dispose();
  x.sum([0, 1]).dispose();
  x.dispose();
  y.dispose();
  sb.flush();
}
writeFileSync(process.argv[2] ?? 'kernels.txt', log.join('\n'));
console.log(`${log.length} lines`);
