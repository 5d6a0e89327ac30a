// What each dispatch of a jitted step's compiled replay costs on the GPU (shared by
// step-kernels.ts and gpt-kernels.ts): the dispatches are captured while the program is built,
// then each is timed alone, REPS times back to back in one pass on its captured buffers and
// parameters (so each waits for the one before, as in the step), wall time over an empty
// submit's, median of 5; then the whole list the same way.
import type { WebGPUBackend } from '@surf/webgpu';

export interface CapturedKernel {
  name: string;
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
  paramBytes: number;
}
export interface Captured {
  k: CapturedKernel;
  bufs: { buffer: GPUBuffer }[];
  params: Uint32Array<ArrayBuffer>;
  groups: number;
}

/** Records every dispatch the backend issues while a jit program is being captured. */
export function captureDispatches(be: WebGPUBackend): Captured[] {
  // The runtime is private: watch its dispatches while the program is captured (compile time).
  const rt = (
    be as unknown as {
      rt: {
        capture: unknown;
        words: { u32: Uint32Array<ArrayBuffer> };
        dispatch: (k: CapturedKernel, bufs: { buffer: GPUBuffer }[], w: number, g: number) => void;
      };
    }
  ).rt;
  const seen: Captured[] = [];
  const orig = rt.dispatch.bind(rt);
  rt.dispatch = (k, bufs, w, g) => {
    if (rt.capture)
      seen.push({ k, bufs: bufs.slice(), params: rt.words.u32.slice(w, w + k.paramBytes / 4), groups: g });
    orig(k, bufs, w, g);
  };
  return seen;
}

/** µs per dispatch of each captured dispatch, then of the whole list (see the header). */
export async function timeEach(device: GPUDevice, list: Captured[], reps: number): Promise<number[]> {
  const bound = list.map((s) => {
    const u = device.createBuffer({ size: Math.max(16, s.k.paramBytes), usage: 0x40 | 0x08 });
    device.queue.writeBuffer(u, 0, s.params);
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: u, offset: 0, size: s.k.paramBytes } }];
    s.bufs.forEach((b, i) => entries.push({ binding: i + 1, resource: { buffer: b.buffer } }));
    return { s, bg: device.createBindGroup({ layout: s.k.layout, entries }) };
  });
  const run = async (items: typeof bound, n: number): Promise<number> => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    for (let r = 0; r < n; r++) {
      for (const { s, bg } of items) {
        pass.setPipeline(s.k.pipeline);
        pass.setBindGroup(0, bg, [0]);
        pass.dispatchWorkgroups(s.groups);
      }
    }
    pass.end();
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    return (performance.now() - t0) * 1000;
  };
  const median = async (items: typeof bound, n: number): Promise<number> => {
    await run(items, n);
    const r: number[] = [];
    for (let i = 0; i < 5; i++) r.push(await run(items, n));
    return r.sort((a, b) => a - b)[2];
  };
  // Node would exit with onSubmittedWorkDone pending on a slow adapter: keep the loop alive.
  const alive = setInterval(() => undefined, 1000);
  try {
    const empty = await median([], 0);
    const out: number[] = [];
    for (const b of bound) out.push(((await median([b], reps)) - empty) / reps);
    out.push(((await median(bound, reps)) - empty) / reps);
    return out;
  } finally {
    clearInterval(alive);
  }
}
