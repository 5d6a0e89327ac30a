import { Module, Tensor, ValueError, nn, tensor } from '@surf/nn';
import { backends, testEach } from '../helpers';
import { checkCase, loadCases } from './torch-cases';

// The activation layers against PyTorch (scripts/interop/make-modules-fixtures.py): values and
// gradients on inputs spread over ±9, default options included, on the CPU and on WebGPU.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

const cases = loadCases('activations');
const build: Record<string, () => Module> = {
  elu: () => new nn.ELU(),
  elu_alpha: () => new nn.ELU({ alpha: 0.5 }),
  selu: () => new nn.SELU(),
  celu: () => new nn.CELU(),
  celu_alpha: () => new nn.CELU({ alpha: 0.7 }),
  softplus: () => new nn.Softplus(),
  softplus_beta_threshold: () => new nn.Softplus({ beta: 2, threshold: 1 }),
  mish: () => new nn.Mish(),
  prelu: () => new nn.PReLU(),
  prelu_channels: () => new nn.PReLU({ numParameters: 3 }),
  hardswish: () => new nn.Hardswish(),
  hardsigmoid: () => new nn.Hardsigmoid(),
  relu6: () => new nn.ReLU6(),
  softsign: () => new nn.Softsign(),
  tanhshrink: () => new nn.Tanhshrink(),
  hardtanh: () => new nn.Hardtanh(),
  hardtanh_range: () => new nn.Hardtanh({ minVal: -0.5, maxVal: 2 }),
  logsigmoid: () => new nn.LogSigmoid(),
  softshrink: () => new nn.Softshrink(),
  hardshrink: () => new nn.Hardshrink(),
  threshold: () => new nn.Threshold(0.1, 20),
  softmin: () => new nn.Softmin(1),
  glu: () => new nn.GLU(),
};

test('every activation fixture has a layer', () => {
  expect(Object.keys(cases).sort()).toEqual(Object.keys(build).sort());
});

describe.each(Object.keys(build))('%s matches PyTorch', (name) => {
  testEach(['cpu', 'webgpu'], '%s', (kind) =>
    checkCase(kind === 'cpu' ? b.cpu : b.gpu(), cases[name], build[name], (m, [x]) => [m.forward(x)]),
  );
});

test("PReLU starts at PyTorch's 0.25 (one parameter) and takes init", async () => {
  expect(Array.from(await new nn.PReLU().weight.data())).toEqual([0.25]);
  expect(Array.from(await new nn.PReLU({ numParameters: 2, init: 0.1 }).weight.data())).toEqual([
    Math.fround(0.1),
    Math.fround(0.1),
  ]);
});

test('large inputs give finite gradients where a branch would overflow', async () => {
  for (const m of [new nn.ELU(), new nn.SELU(), new nn.CELU({ alpha: 0.1 }), new nn.Softplus(), new nn.Mish()]) {
    const x = tensor([-200, -3, 0.5, 95]).requiresGrad_(true);
    m.forward(x).sum().backward();
    expect(Array.from(await x.grad!.data()).every(Number.isFinite)).toBe(true);
  }
});

test("SELU's constants are PyTorch's to float32 precision", async () => {
  const y = await new nn.SELU().forward(tensor([1, -1])).data();
  expect(y[0]).toBe(Math.fround(1.0507009873554805));
  expect(Math.abs(y[1] - 1.0507009873554805 * 1.6732632423543772 * (Math.exp(-1) - 1))).toBeLessThan(2e-7);
});

test("PyTorch's positional forms work too", async () => {
  const x = tensor(Float32Array.from([-2, -0.3, 0.4, 3]));
  const same = async (a: Tensor, b: Tensor) => expect(Array.from(await a.data())).toEqual(Array.from(await b.data()));
  await same(new nn.ELU(0.5).forward(x), new nn.ELU({ alpha: 0.5 }).forward(x));
  await same(new nn.Softplus(2, 1).forward(x), new nn.Softplus({ beta: 2, threshold: 1 }).forward(x));
  await same(new nn.Hardtanh(-0.5, 2).forward(x), new nn.Hardtanh({ minVal: -0.5, maxVal: 2 }).forward(x));
  await same(new nn.Softshrink(0.35).forward(x), nn.functional.softshrink(x, { lambd: 0.35 }));
  expect(new nn.PReLU(3, 0.1).weight.shape).toEqual([3]);
  await same(nn.functional.celu(x, 0.7), new nn.CELU({ alpha: 0.7 }).forward(x));
});

test('options are checked', () => {
  expect(() => new nn.Softplus({ beta: 0 })).toThrow(ValueError);
  expect(() => new nn.ELU({ aplha: 1 } as never)).toThrow(/unknown option 'aplha'/);
  expect(() => new nn.Hardtanh({ minVal: 1, maxVal: 1 })).toThrow(/greater than minVal/);
  expect(() => new nn.PReLU({ num_parameters: 3 } as never)).toThrow(/numParameters/);
  expect(() => new nn.GLU().forward(tensor([1, 2, 3]))).toThrow(/even size/);
});
