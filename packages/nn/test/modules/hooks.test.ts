import { Module, Tensor, ValueError, nn, tensor } from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// Module hooks: forward-pre (replacing arguments), forward (replacing the output), full
// backward (gradInput and gradOutput values, replacing gradInput), removal, and hooks on
// children firing when the parent runs.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

const lin = () => {
  const m = new nn.Linear(2, 3);
  m.loadStateDict({
    weight: tensor(Float32Array.from([1, 2, 3, 4, 5, 6])).reshape([3, 2]),
    bias: tensor(Float32Array.from([0.5, -1, 2])),
  });
  return m;
};
const x0 = () => tensor(Float32Array.from([1, -2]));

test('a forward pre-hook replaces the arguments and a forward hook the output; remove() undoes them', async () => {
  const m = lin();
  const seen: unknown[] = [];
  const h1 = m.registerForwardPreHook((mod, args) => {
    seen.push(mod);
    return [(args[0] as Tensor).mul(2)];
  });
  const h2 = m.registerForwardHook((_m, args, out) => (out as Tensor).add((args[0] as Tensor).sum()));
  // W·(2x) + b = [−6+0.5, −10−1, −14+2], plus sum(2x) = −2.
  expect(Array.from(await m.forward(x0()).data())).toEqual([-7.5, -13, -14]);
  expect(seen).toEqual([m]);
  expect(Object.keys(m.stateDict())).toEqual(['weight', 'bias']);
  h1.remove();
  expect(Array.from(await m.forward(x0()).data())).toEqual([-3.5, -7, -6]);
  h2.remove();
  h2.remove();
  expect(Array.from(await m.forward(x0()).data())).toEqual([-2.5, -6, -5]);
  expect(Object.prototype.hasOwnProperty.call(m, 'forward')).toBe(false);
});

test("hooks on a child fire when its parent's forward runs", () => {
  const child = new nn.ReLU();
  const model = new nn.Sequential(lin(), child);
  const shapes: number[][] = [];
  child.registerForwardHook((_m, args) => void shapes.push((args[0] as Tensor).shape));
  model.forward(x0());
  model.forward(tensor(new Float32Array(8)).reshape([4, 2]));
  expect(shapes).toEqual([[3], [4, 3]]);
});

testEach(
  ['cpu', 'webgpu'],
  'a full backward hook sees gradInput and gradOutput and may replace gradInput (%s)',
  (kind) =>
    on(kind === 'cpu' ? b.cpu : b.gpu(), async () => {
      const m = lin();
      const got: { gin: Float32Array[]; gout: Float32Array[] }[] = [];
      const grabs: Promise<void>[] = [];
      m.registerFullBackwardHook((_m, gin, gout) => {
        const rec = { gin: [] as Float32Array[], gout: [] as Float32Array[] };
        got.push(rec);
        grabs.push(
          (async () => {
            rec.gin = await Promise.all(gin.map(async (g) => (await g!.data()) as Float32Array));
            rec.gout = await Promise.all(gout.map(async (g) => (await g!.data()) as Float32Array));
          })(),
        );
        return [gin[0]!.mul(10)];
      });
      const x = x0().requiresGrad_(true);
      const c = tensor(Float32Array.from([1, 0, -1]));
      m.forward(x).mul(c).sum().backward();
      await Promise.all(grabs);
      expect(got.length).toBe(1);
      // gradOutput = c; gradInput = cᵀW = [1 − 5, 2 − 6].
      expect(Array.from(got[0].gout[0])).toEqual([1, 0, -1]);
      expect(Array.from(got[0].gin[0])).toEqual([-4, -4]);
      expect(Array.from(await x.grad!.data())).toEqual([-40, -40]);
      // The parameters' gradients are not touched by the hook.
      expect(Array.from(await m.weight.grad!.data())).toEqual([1, -2, 0, 0, -1, 2]);
    }),
);

test('a backward hook fires for a module whose input needs no grad, and for tuple outputs', async () => {
  const m = new nn.GRU(2, 3);
  let calls = 0;
  let gout: (Tensor | null)[] = [];
  m.registerFullBackwardHook((_m, gin, go) => {
    calls++;
    expect(gin).toEqual([null]);
    gout = go;
  });
  const [out, h] = m.forward(tensor(new Float32Array(8).fill(0.5)).reshape([4, 1, 2]));
  out.sum().add(h.sum()).backward();
  expect(calls).toBe(1);
  expect(gout.map((g) => g?.shape)).toEqual([
    [4, 1, 3],
    [1, 1, 3],
  ]);
});

test('hooks must be functions', () => {
  const m: Module = new nn.ReLU();
  expect(() => m.registerForwardHook(3 as never)).toThrow(ValueError);
});
