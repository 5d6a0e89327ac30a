/**
 * Proves that a move or refactor of the WebGPU kernels left what the GPU runs unchanged,
 * without a GPU: drives the backend on a recording fake device through a fixed list of
 * representative problems for every kernel family (matmul configs, layouts and epilogues;
 * reductions; gathers; elementwise, transposes and groups; conv direct, Winograd, Winograd
 * over the weight and Winograd through the matmul; pool and its backward; attention by rows
 * and tiled, forward and backward; scatter; sort; index checks; cross-entropy rows) and hashes
 * each shader's WGSL text and each section's full command stream (parameter words, bind
 * groups, grids, copies).
 *
 *   node scripts/run-ts.mjs scripts/lint/wgsl-snapshot.ts           # compare with the record
 *   node scripts/run-ts.mjs scripts/lint/wgsl-snapshot.ts --write   # record anew (after an intended change)
 *   node scripts/run-ts.mjs scripts/lint/wgsl-snapshot.ts --dump out.txt   # the full log, to diff
 *
 * The record is scripts/lint/wgsl-snapshot.txt: one line per shader (label and hash) and one
 * per section (hash of every command in it). A difference names the shaders or sections that
 * changed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  E,
  NDArray,
  attentionBackwardNd,
  attentionNd,
  convNd,
  poolBackwardNd,
  poolNd,
  scatterFlat,
  sortAlong,
  type ConvParams,
  type PoolParams,
} from '@surf/core';
import { MATMUL_CANDIDATES, WebGPUBackend, type WebGPUBackendOptions } from '@surf/webgpu';

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

function fakeDevice(features: string[]): GPUDevice {
  const pass = {
    setPipeline: (p: any) => log.push(`setPipeline ${p.label}`),
    setBindGroup: (_i: number, bg: any, offs?: number[]) => log.push(`bind ${bg.ids.join(',')} @${offs?.[0] ?? '-'}`),
    dispatchWorkgroups: (x: number, y = 1, z = 1) => log.push(`dispatch ${x}x${y}x${z}`),
    end: () => undefined,
    writeTimestamp: () => undefined,
  };
  const dev: any = {
    limits,
    features: new Set(features),
    lost: new Promise(() => undefined),
    addEventListener: () => undefined,
    pushErrorScope: () => undefined,
    popErrorScope: async () => null,
    createBuffer: (d: any) => ({
      id: ++bufId,
      size: d.size,
      label: d.label,
      usage: d.usage,
      destroy() {},
      mapAsync: async () => undefined,
      getMappedRange: () => new ArrayBuffer(d.size),
      unmap() {},
    }),
    createShaderModule: (d: any) => {
      log.push(`SHADER ${d.label}\n${d.code}`);
      return { label: d.label };
    },
    createComputePipeline: (d: any) => ({ label: d.label, getBindGroupLayout: () => ({}) }),
    createComputePipelineAsync: async (d: any) => ({ label: d.label, getBindGroupLayout: () => ({}) }),
    createBindGroupLayout: (d: any) => ({ entries: d.entries }),
    createPipelineLayout: () => ({}),
    createQuerySet: () => ({ destroy() {} }),
    createBindGroup: (d: any) => ({ ids: d.entries.map((e: any) => e.resource.buffer?.id ?? 'arena') }),
    createCommandEncoder: () => ({
      beginComputePass: () => pass,
      copyBufferToBuffer: (s: any, so: number, d: any, dof: number, n: number) =>
        log.push(`copy ${s.id}@${so} -> ${d.id}@${dof} ${n}`),
      clearBuffer: (b: any, o = 0, n?: number) => log.push(`clear ${b.id}@${o} ${n ?? ''}`),
      resolveQuerySet: () => undefined,
      finish: () => ({}),
    }),
    queue: {
      writeBuffer: (b: any, _o: number, data: ArrayBuffer | ArrayBufferView, off = 0, size?: number) => {
        const ab = ArrayBuffer.isView(data) ? data.buffer : data;
        const base = ArrayBuffer.isView(data) ? data.byteOffset : 0;
        const n = size ?? (ArrayBuffer.isView(data) ? data.byteLength : ab.byteLength) - off;
        if (b.label === 'surf params arena')
          log.push(`params ${Array.from(new Uint32Array(ab, base + off, n >> 2)).join(' ')}`);
        else log.push(`write ${b.id} ${n}`);
      },
      submit: () => log.push('submit'),
      onSubmittedWorkDone: async () => undefined,
    },
    destroy: () => undefined,
  };
  return dev as GPUDevice;
}

function make(opts: WebGPUBackendOptions = {}, soft = false, subgroups = 0): WebGPUBackend {
  const info = {
    vendor: soft ? 'google' : 'nvidia',
    architecture: '',
    device: soft ? 'swiftshader' : 'gpu',
    description: '',
    subgroupMinSize: subgroups || undefined,
  } as unknown as GPUAdapterInfo;
  const device = fakeDevice(subgroups ? ['subgroups'] : []);
  const acq = { device, adapter: null, info, owned: false, instance: null };
  return new (WebGPUBackend as any)(acq, opts) as WebGPUBackend;
}

const f = (b: WebGPUBackend, shape: number[], seed = 1): NDArray => {
  const n = shape.reduce((a, c) => a * c, 1);
  const d = new Float32Array(n);
  for (let i = 0; i < n; i++) d[i] = ((i * 7 + seed * 13) % 17) / 8 - 1;
  return NDArray.fromData(b, d, shape);
};
const ints = (b: WebGPUBackend, vals: number[], shape = [vals.length]): NDArray =>
  NDArray.fromData(b, new Int32Array(vals), shape, 'int32');
const section = (name: string): void => void log.push(`== ${name}`);

function matmuls(): void {
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
    { tileM: 32, tileN: 32, tileK: 16, threadM: 4, threadN: 4, vec4: true, splitK: 4 },
  ];
  const problems: [number[], number[], string][] = [
    [[64, 96], [96, 128], 'nn'],
    [[33, 17], [17, 45], 'odd'],
    [[2, 3, 40, 24], [2, 3, 24, 36], 'batch2'],
    [[3, 40, 24], [24, 36], 'bcastB'],
  ];
  for (const [ci, c] of cfgs.entries()) {
    b.setMatmulConfig(() => c as any);
    for (const [as, bs, name] of problems) {
      section(`matmul cfg ${ci} ${name}`);
      const x = f(b, as, 1),
        y = f(b, bs, 2);
      x.matmul(y).dispose();
      const xt = f(b, [...as.slice(0, -2), as[as.length - 1], as[as.length - 2]], 3);
      const xT = xt.permute([...as.slice(0, -2).map((_, i) => i), as.length - 1, as.length - 2]);
      const yt = f(b, [...bs.slice(0, -2), bs[bs.length - 1], bs[bs.length - 2]], 4);
      const yT = yt.permute([...bs.slice(0, -2).map((_, i) => i), bs.length - 1, bs.length - 2]);
      xT.matmul(yT).dispose();
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
  section('matmul default buckets');
  for (const [m, k, n] of [
    [8, 8, 8],
    [100, 50, 200],
    [300, 300, 600],
    [1024, 16, 1024],
    [2048, 8, 2048],
    [64, 4096, 64],
  ]) {
    const x = f(b, [m, k]),
      y = f(b, [k, n]);
    x.matmul(y).dispose();
    x.dispose();
    y.dispose();
  }
  b.flush();
}

function reductions(b: WebGPUBackend): void {
  section('reduce');
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
    const xi = x.cast('int32');
    xi.sum(axes).dispose();
    xi.max(axes).dispose();
    xi.dispose();
    x.dispose();
  }
  b.flush();
}

function gathers(b: WebGPUBackend): void {
  section('gather');
  const x = f(b, [10, 6]);
  const i = ints(b, [3, 1, -1, 9, 12]);
  x.gather(0, i).dispose();
  x.gather(1, i).dispose();
  x.permute([1, 0]).gather(0, i).dispose();
  const xi = ints(
    b,
    Array.from({ length: 40 }, (_, q) => q % 7),
    [4, 10],
  );
  xi.gather(1, i).dispose();
  const i2 = xi.reshape([40]).crop([[0, 5]]);
  xi.gather(0, i2).dispose();
  const x3 = f(b, [3, 4, 5]);
  x3.gather(1, i).dispose();
  for (const t of [x, i, xi, x3]) t.dispose();
  b.flush();
}

function elementwise(b: WebGPUBackend): void {
  section('elementwise');
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
  section('elementwise vec4 and transpose');
  const big = f(b, [64, 256]);
  big.map(E.tanh(E.in(0))).dispose();
  big.permute([1, 0]).contiguous().dispose();
  f(b, [8, 64, 96]).permute([0, 2, 1]).contiguous().dispose();
  big.map(E.where(E.lt(E.f(0), E.in(0)), E.in(0), E.mul(E.in(0), E.f(0.01)))).dispose();
  big.map(E.erf(E.in(0))).dispose();
  big.dispose();
  section('elementwise groups');
  const p = f(b, [300]),
    g = f(b, [300], 2),
    m = f(b, [40], 3),
    h = f(b, [40], 4);
  b.elementwiseGroups!([
    { outs: [E.sub(E.in(0), E.mul(E.f(0.1), E.in(1)))], inputs: [p.strided, g.strided], shape: [300] },
    {
      outs: [E.sub(E.in(0), E.mul(E.f(0.1), E.in(1))), E.mul(E.in(1), E.f(0.9))],
      inputs: [m.strided, h.strided],
      shape: [40],
    },
  ]).forEach((s) => s.forEach((q) => b.dispose(q)));
  for (const t of [x, y, p, g, m, h]) t.dispose();
  b.flush();
}

const conv2 = (groups = 1, stride = 1, pad = 1, dil = 1): ConvParams => ({
  stride: [stride, stride],
  padding: [
    [pad, pad],
    [pad, pad],
  ],
  dilation: [dil, dil],
  lhsDilation: [1, 1],
  groups,
});

function convs(): void {
  const cases: [string, number[], number[], ConvParams][] = [
    ['3x3 pad 1', [2, 8, 12, 12], [16, 8, 3, 3], conv2()],
    ['5x5', [1, 4, 14, 14], [8, 4, 5, 5], conv2(1, 1, 2)],
    ['stride 2', [2, 6, 11, 11], [10, 6, 3, 3], conv2(1, 2, 1)],
    ['dilated', [1, 4, 13, 13], [4, 4, 3, 3], conv2(1, 1, 2, 2)],
    ['groups', [2, 8, 9, 9], [8, 2, 3, 3], conv2(4)],
    ['1x1', [2, 16, 7, 7], [40, 16, 1, 1], conv2(1, 1, 0)],
    ['weight grad shape (oH 3)', [8, 5, 7, 7], [6, 5, 5, 5], conv2(1, 1, 0)],
    ['weight grad shape (oH 5)', [8, 5, 9, 9], [6, 5, 5, 5], conv2(1, 1, 0)],
    [
      'transposed (lhs dilation)',
      [1, 6, 5, 5],
      [4, 6, 3, 3],
      {
        stride: [1, 1],
        padding: [
          [2, 2],
          [2, 2],
        ],
        dilation: [1, 1],
        lhsDilation: [2, 2],
        groups: 1,
      },
    ],
    ['big 3x3', [2, 32, 24, 24], [64, 32, 3, 3], conv2()],
  ];
  const conv1: ConvParams = { stride: [1], padding: [[1, 1]], dilation: [1], lhsDilation: [1], groups: 1 };
  for (const [label, opts, soft] of [
    ['default', {}, false],
    ['software', {}, true],
    ['wino from 0 flops', { conv: { wino: 1e-9 } }, false],
    ['wino 2x2 tiles', { conv: { wino: 1e-9, winoTile: 2, winoBlock: 2 } }, false],
  ] as [string, WebGPUBackendOptions, boolean][]) {
    const b = make(opts, soft);
    for (const [name, xs, ws, p] of cases) {
      section(`conv ${label} ${name}`);
      const x = f(b, xs, 1),
        w = f(b, ws, 2);
      convNd(x, w, p).dispose();
      const y = convNd(x, w, p);
      const bias = f(b, [1, ws[0], 1, 1], 3);
      convNd(x, w, p, { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [bias] }).dispose();
      convNd(x, w, p, { expr: E.add(E.in(0), E.in(1)), inputs: [y] }).dispose();
      for (const t of [x, w, y, bias]) t.dispose();
      b.flush();
    }
    section(`conv ${label} 1-d`);
    const x1 = f(b, [2, 4, 20]),
      w1 = f(b, [6, 4, 3], 2);
    convNd(x1, w1, conv1).dispose();
    x1.dispose();
    w1.dispose();
    b.flush();
  }
}

function pools(b: WebGPUBackend): void {
  const pp = (
    kind: 'max' | 'avg',
    k: number,
    s: number,
    pad: number,
    inHW: number,
    countIncludePad = true,
    dil = 1,
  ): PoolParams => {
    const out = Math.floor((inHW + 2 * pad - dil * (k - 1) - 1) / s) + 1;
    return {
      kind,
      kernel: [k, k],
      stride: [s, s],
      padding: [pad, pad],
      dilation: [dil, dil],
      out: [out, out],
      countIncludePad,
    };
  };
  for (const [name, shape, p] of [
    ['max 2x2', [2, 3, 8, 8], pp('max', 2, 2, 0, 8)],
    ['avg 2x2', [2, 3, 8, 8], pp('avg', 2, 2, 0, 8)],
    ['max 3x3 s2 pad1', [1, 4, 9, 9], pp('max', 3, 2, 1, 9)],
    ['avg 3x3 pad1 no pad count', [1, 4, 9, 9], pp('avg', 3, 1, 1, 9, false)],
    ['max dilated', [1, 2, 10, 10], pp('max', 2, 1, 0, 10, true, 2)],
    ['max 2x2 odd', [2, 5, 7, 7], pp('max', 2, 2, 0, 7)],
    ['max 2x2 wide rows', [2, 16, 32, 32], pp('max', 2, 2, 0, 32)],
  ] as [string, number[], PoolParams][]) {
    section(`pool ${name}`);
    const x = f(b, shape);
    const [y, arg] = poolNd(x, p);
    poolBackwardNd(y, arg, p, shape).dispose();
    y.dispose();
    arg?.dispose();
    x.dispose();
    b.flush();
  }
}

function attentions(): void {
  for (const [label, opts, sg] of [
    ['rows', { attention: 'rows' }, 0],
    ['tiled', {}, 0],
    ['tiled subgroups 32', {}, 32],
  ] as [string, WebGPUBackendOptions, number][]) {
    const b = make(opts, false, sg);
    for (const [name, L, S, D, causal, masked] of [
      ['small', 5, 7, 8, false, 0],
      ['causal', 40, 40, 16, true, 0],
      ['float mask', 33, 70, 32, false, 1],
      ['bool mask', 64, 64, 64, false, 2],
      ['long', 130, 130, 64, true, 0],
      ['long float mask', 128, 96, 64, false, 1],
    ] as [string, number, number, number, boolean, number][]) {
      section(`attention ${label} ${name}`);
      const q = f(b, [2, 2, L, D], 1),
        k = f(b, [2, 2, S, D], 2),
        v = f(b, [2, 2, S, D], 3);
      const mask =
        masked === 1
          ? f(b, [L, S], 4)
          : masked === 2
            ? NDArray.fromData(
                b,
                new Uint8Array(L * S).map((_, i) => (i % 5 === 0 ? 0 : 1)),
                [L, S],
                'bool',
              )
            : null;
      const o = { scale: 1 / Math.sqrt(D), causal, mask };
      const { out, lse } = attentionNd(q, k, v, o);
      const g = f(b, [2, 2, L, D], 5);
      const r = attentionBackwardNd(q, k, v, out, lse, g, o);
      for (const t of [q, k, v, out, lse, g, r.dq, r.dk, r.dv]) t.dispose();
      mask?.dispose();
      b.flush();
    }
  }
}

function indexing(b: WebGPUBackend): void {
  section('scatter');
  const base = f(b, [20]);
  const idx = ints(b, [3, 0, 19, 3, 7]);
  const src = f(b, [5], 2);
  scatterFlat('set', base, idx, src).dispose();
  scatterFlat('add', base, idx, src).dispose();
  const bi = ints(
    b,
    Array.from({ length: 20 }, (_, i) => i),
  );
  scatterFlat('add', bi, idx, ints(b, [1, 2, 3, 4, 5])).dispose();
  b.flush();
  section('sort');
  for (const shape of [[10], [3, 17], [4, 300], [2, 1025]]) {
    const x = f(b, shape);
    for (const desc of [false, true]) sortAlong(x, shape.length - 1, desc).forEach((t) => t.dispose());
    sortAlong(x, 0, false).forEach((t) => t.dispose());
    x.dispose();
  }
  const xi = ints(b, [5, 3, 9, 1, 0, 2]);
  sortAlong(xi, 0, true).forEach((t) => t.dispose());
  b.flush();
  section('index check');
  b.checkIndices!(idx.strided, 0, 20, { op: 'snapshot', name: 'idx', range: '[0, 20)' });
  b.checkIndices!(idx.strided, -20, 20, { op: 'snapshot', name: 'idx', range: '[-20, 20)' });
  b.flush();
  section('cross-entropy rows');
  for (const [n, c] of [
    [4, 10],
    [64, 1000],
    [300, 7],
  ]) {
    const z = f(b, [n, c]);
    const y = ints(
      b,
      Array.from({ length: n }, (_, i) => (i * 3) % c),
    );
    const site = { op: 'snapshot', name: 'target', range: `[0, ${c})` };
    b.crossEntropyRows!(z.strided, y.strided, { smoothing: 0, scale: 1, site }).forEach((s) => b.dispose(s));
    b.crossEntropyRows!(z.strided, y.strided, { smoothing: 0.1, scale: 1 / n, site, total: true }).forEach((s) =>
      b.dispose(s),
    );
    z.dispose();
    y.dispose();
  }
  for (const t of [base, idx, src, bi, xi]) t.dispose();
  b.flush();
}

function software(): void {
  section('software adapter defaults');
  const sb = make({}, true);
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

matmuls();
{
  const b = make();
  reductions(b);
  gathers(b);
  elementwise(b);
  pools(b);
  indexing(b);
}
convs();
attentions();
software();

// Hash each shader and each section's whole stream of commands.
const hash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);
const shaders = new Map<string, string>();
const sections: [string, string[]][] = [['(start)', []]];
for (const line of log) {
  if (line.startsWith('== ')) sections.push([line.slice(3), []]);
  else sections[sections.length - 1][1].push(line);
  if (line.startsWith('SHADER ')) {
    const nl = line.indexOf('\n');
    const label = line.slice(7, nl);
    const h = hash(line.slice(nl + 1));
    const key = shaders.has(label) && shaders.get(label) !== h ? `${label} #${h}` : label;
    shaders.set(key, h);
  }
}
const record = [
  `# ${shaders.size} shaders, ${sections.length} sections: scripts/lint/wgsl-snapshot.ts`,
  ...[...shaders].map(([l, h]) => `shader ${h} ${l}`).sort(),
  ...sections.filter(([, ls]) => ls.length).map(([n, ls]) => `section ${hash(ls.join('\n'))} ${n}`),
].join('\n');

const args = process.argv.slice(2);
const file = join(dirname(fileURLToPath(import.meta.url)), 'wgsl-snapshot.txt');
const dump = args.indexOf('--dump');
if (dump >= 0) writeFileSync(args[dump + 1] ?? 'kernels.txt', log.join('\n'));
// run-ts bundles into .out/, so the record is found beside the source, not the bundle.
const recordPath = existsSync(file) ? file : join(process.cwd(), 'scripts/lint/wgsl-snapshot.txt');
if (args.includes('--write')) {
  writeFileSync(recordPath, record + '\n');
  console.log(`wrote ${recordPath}: ${shaders.size} shaders, ${sections.length} sections`);
} else {
  const want = existsSync(recordPath) ? readFileSync(recordPath, 'utf8').trimEnd().split('\n') : [];
  const got = record.split('\n');
  const missing = want.filter((l) => !got.includes(l));
  const extra = got.filter((l) => !want.includes(l));
  if (missing.length || extra.length) {
    console.error(`WGSL snapshot differs from ${recordPath}:`);
    for (const l of missing) console.error(`- ${l}`);
    for (const l of extra) console.error(`+ ${l}`);
    process.exit(1);
  }
  console.log(`WGSL snapshot unchanged: ${shaders.size} shaders, ${sections.length} sections`);
}
