import { Tensor, jit, manualSeed, nn, optim, randn, randint } from '@surf/nn';
import { backends, ceStep, on, testGpu } from '../helpers';

// A compiled replay on WebGPU binds its arguments where the step reads them once a set of
// argument buffers comes back (a loader cycling through uploaded batches), and lends the
// loss's buffer to the returned tensor (replay/args.ts, replay/program.ts): a warm step then
// issues no copies at all. What users see must not change: losses and parameters equal the
// eager loop's, results kept across steps keep their values, fresh tensors every step make no
// bind groups.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

interface Counts {
  bindGroupsCreated: number;
  replays: number;
}

/** Counts copyBufferToBuffer calls (Dawn's encoder prototype) while `fn` runs. */
async function countCopies<T>(fn: () => Promise<T>): Promise<{ value: T; copies: number }> {
  const proto = (
    globalThis as unknown as { GPUCommandEncoder: { prototype: Record<string, (...a: unknown[]) => unknown> } }
  ).GPUCommandEncoder.prototype;
  const orig = proto.copyBufferToBuffer;
  let copies = 0;
  proto.copyBufferToBuffer = function (this: unknown, ...a: unknown[]) {
    copies++;
    return orig.apply(this, a);
  };
  try {
    return { value: await fn(), copies };
  } finally {
    proto.copyBufferToBuffer = orig;
  }
}

/** A seeded 6-8-3 classifier and its SGD cross-entropy step, jitted unless `jitted` is false. */
function smallStep(seed: number, momentum: number, jitted = true, keepOutputs = false) {
  manualSeed(seed);
  const model = new nn.Sequential(new nn.Linear(6, 8), new nn.ReLU(), new nn.Linear(8, 3));
  const step = ceStep(model, new optim.SGD(model.parameters(), { lr: 0.1, momentum }));
  return { model, f: jitted ? jit(step, { keepOutputs }) : step };
}

async function train(
  jitted: boolean,
  keep: boolean,
): Promise<{ losses: number[]; params: number[][]; counts: Counts[]; copies: number[] }> {
  // Momentum: the state pairs swap every run, so each batch is met at both parities.
  const { model, f } = smallStep(11, 0.9, jitted, keep);
  manualSeed(12);
  const batches = Array.from({ length: 3 }, () => ({ x: randn([5, 6]), y: randint(0, 3, [5]) }));
  const backend = batches[0].x.ndarray.backend as unknown as { stats(): Counts };
  const counts: Counts[] = [];
  const copies: number[] = [];
  const kept: Tensor[] = [];
  const losses: number[] = [];
  for (let i = 0; i < 20; i++) {
    const { x, y } = batches[i % 3];
    counts.push(backend.stats());
    const { value: l, copies: n } = await countCopies(async () => f(x, y));
    copies.push(n);
    if (keep) kept.push(l);
    else {
      losses.push(await l.item());
      l.dispose();
    }
  }
  counts.push(backend.stats());
  // Kept results are read only now, after later runs wrote the program's loss buffer again.
  if (keep) for (const l of kept) losses.push(await l.item());
  const params = await Promise.all(model.parameters().map(async (p) => Array.from((await p.data()) as Float32Array)));
  return { losses, params, counts, copies };
}

testGpu(
  'jit on WebGPU: cycled batches are bound in place and the loss is lent (no copies once warm); kept results keep their values',
  async () => {
    await on(B.gpu(), async () => {
      const close = (a: number, b: number) => Math.abs(a - b) <= 1e-5 * (1 + Math.abs(b));
      for (const keep of [false, true]) {
        const want = await train(false, keep);
        const got = await train(true, keep);
        got.losses.forEach((l, i) => {
          if (!close(l, want.losses[i])) throw new Error(`keep ${keep}, step ${i}: loss ${l}, eager ${want.losses[i]}`);
        });
        got.params.forEach((p, i) =>
          p.forEach((v, j) => {
            if (!close(v, want.params[i][j]))
              throw new Error(`keep ${keep}: param ${i}[${j}] ${v}, eager ${want.params[i][j]}`);
          }),
        );
        const d = (i: number, k: keyof Counts) => got.counts[i + 1][k] - got.counts[i][k];
        // Steps 0-2 record (momentum buffers appear at the first), step 3 compiles. Parities
        // alternate, so batch b comes back at parity p every 6 steps: its set is bound in place
        // from its second sighting (steps 6-11 make one set each), and from step 12 on nothing
        // is made.
        for (let i = 12; i < 20; i++) expect([d(i, 'replays'), d(i, 'bindGroupsCreated')]).toEqual([1, 0]);
        // Disposed losses come back before the next run: no copies at all. Kept ones move to a
        // buffer of their own first (one copy each run, as a copy-out did before).
        expect(got.copies.slice(6)).toEqual(new Array(14).fill(keep ? 1 : 0));
      }
    });
  },
);

testGpu('jit on WebGPU: fresh argument tensors every step are copied and make no bind groups', async () => {
  await on(B.gpu(), async () => {
    const { f } = smallStep(13, 0);
    const backend = B.gpu() as unknown as { stats(): Counts };
    const held: Tensor[] = [];
    const made: number[] = [];
    const copies: number[] = [];
    for (let i = 0; i < 10; i++) {
      // Kept alive: every step's arguments are in buffers never seen before.
      const x = randn([5, 6]);
      const y = randint(0, 3, [5]);
      held.push(x, y);
      const s0 = backend.stats().bindGroupsCreated;
      const { value: l, copies: n } = await countCopies(async () => f(x, y));
      made.push(backend.stats().bindGroupsCreated - s0);
      copies.push(n);
      await l.item();
      l.dispose();
    }
    // Steps 0-1 record, 2 compiles (the loss's class-index upload is copied on the first run of
    // each parity, steps 2-3); then each replay copies its two arguments and nothing else.
    expect(made.slice(3)).toEqual(new Array(7).fill(0));
    expect(copies.slice(4)).toEqual(new Array(6).fill(2));
    for (const t of held) t.dispose();
  });
});

// A compiled replay's parameter blocks never move, so its kernels run on layouts that bind
// them at fixed offsets: a warm replay passes no dynamic offsets (Dawn records those slower).
testGpu('jit on WebGPU: a warm replay binds its parameter blocks without dynamic offsets', async () => {
  await on(B.gpu(), async () => {
    const { f } = smallStep(14, 0);
    const x = randn([5, 6]);
    const y = randint(0, 3, [5]);
    // Two recording calls, the compiling replay, one warm replay.
    for (let i = 0; i < 4; i++) {
      const l = f(x, y);
      await l.item();
      l.dispose();
    }
    const proto = (
      globalThis as unknown as { GPUComputePassEncoder: { prototype: Record<string, (...a: unknown[]) => unknown> } }
    ).GPUComputePassEncoder.prototype;
    const orig = proto.setBindGroup;
    const calls: number[] = [];
    proto.setBindGroup = function (this: unknown, ...a: unknown[]) {
      calls.push(Array.isArray(a[2]) ? a[2].length : a[2] ? 1 : 0);
      return orig.apply(this, a);
    };
    const backend = B.gpu() as unknown as { stats(): { dispatches: number; replays: number } };
    const s0 = backend.stats();
    try {
      const l = f(x, y);
      await l.item();
      l.dispose();
    } finally {
      proto.setBindGroup = orig;
    }
    const s1 = backend.stats();
    expect(s1.replays - s0.replays).toBe(1);
    // One bind group per dispatch of the replay, none with offsets.
    expect(calls.length).toBe(s1.dispatches - s0.dispatches);
    expect(calls.filter((n) => n > 0)).toEqual([]);
  });
});
