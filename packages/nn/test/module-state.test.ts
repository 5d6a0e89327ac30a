import {
  BackendError,
  Module,
  Tensor,
  ValueError,
  load,
  manualSeed,
  nn,
  optim,
  save,
  tensor,
  tidy,
  zeros,
} from '@surf/nn';
import { arr, backends, on, testGpu } from './helpers';

// Module semantics as PyTorch's: frozen parameters and buffers in the state dict, containers,
// requiresGrad_, apply, zeroGrad and moving between backends.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

/** A layer with a persistent and a non-persistent buffer, as BatchNorm and RoPE caches have. */
class Norm extends Module {
  weight = nn.parameter(tensor([1, 2], { dtype: 'float32' }));
  declare runningMean: Tensor;
  declare cache: Tensor;
  constructor() {
    super();
    this.registerBuffer('runningMean', tensor([0.5, -0.5]));
    this.registerBuffer('cache', tensor([9]), { persistent: false });
  }
  forward(x: Tensor): Tensor {
    return x.sub(this.runningMean).mul(this.weight);
  }
}

class Net extends Module {
  fc = new nn.Linear(2, 2);
  norm = new Norm();
  forward(x: Tensor): Tensor {
    return this.norm.forward(this.fc.forward(x));
  }
}

test('a frozen parameter stays in parameters() and stateDict(); buffers follow the parameters of their module', () =>
  on(B.cpu, () => {
    const net = new Net();
    net.fc.weight.requiresGrad = false;
    expect(net.namedParameters().map(([n]) => n)).toEqual(['fc.weight', 'fc.bias', 'norm.weight']);
    expect(net.namedBuffers().map(([n]) => n)).toEqual(['norm.runningMean', 'norm.cache']);
    expect(net.buffers()).toEqual([net.norm.runningMean, net.norm.cache]);
    // PyTorch's order: each module's parameters, then its persistent buffers, then its children.
    expect(Object.keys(net.stateDict())).toEqual(['fc.weight', 'fc.bias', 'norm.weight', 'norm.runningMean']);
    expect(net.stateDict()['norm.runningMean']).toBe(net.norm.runningMean);
    // Printing counts parameters only and lists buffers apart.
    expect(String(net)).toContain('(norm): Norm()  # weight [2] (2 params); buffers runningMean [2], cache [1]');
  }));

test('the state-dict round trip of a model with frozen parameters and buffers is exact (strict load)', () =>
  on(B.cpu, async () => {
    manualSeed(3);
    const a = new Net();
    a.fc.requiresGrad_(false);
    a.norm.runningMean.assign(tensor([0.1234567, -7.654321]));
    const bytes = await save(a);
    manualSeed(4);
    const b = new Net();
    expect(b.loadStateDict(load(bytes))).toEqual({ missingKeys: [], unexpectedKeys: [] });
    for (const [k, t] of Object.entries(a.stateDict())) expect(await arr(b.stateDict()[k])).toEqual(await arr(t));
    // The non-persistent buffer is not saved and keeps its value.
    expect(Object.keys(load(bytes))).not.toContain('norm.cache');
    expect(await arr(b.norm.cache)).toEqual([9]);
    // A missing buffer is a missing key.
    const sd = { ...a.stateDict() };
    delete sd['norm.runningMean'];
    expect(() => b.loadStateDict(sd)).toThrow(/missing keys: norm.runningMean/);
  }));

test('registerBuffer: survives tidy, reassigning keeps it a buffer, bad input is refused', () =>
  on(B.cpu, async () => {
    const n = tidy(() => new Norm());
    expect(n.runningMean.isDisposed).toBe(false);
    n.runningMean = tensor([3, 4.5]);
    expect(n.namedBuffers().map(([k]) => k)).toEqual(['runningMean', 'cache']);
    expect(await arr(n.stateDict().runningMean)).toEqual([3, 4.5]);
    n.registerBuffer('empty', null);
    expect(n.namedBuffers().map(([k]) => k)).toEqual(['runningMean', 'cache']);
    expect(() => n.registerBuffer('weight', zeros([2]))).toThrow(/'weight' already holds a parameter/);
    expect(() => n.registerBuffer('a.b', zeros([2]))).toThrow(ValueError);
    expect(() => n.registerBuffer('x', 3 as unknown as Tensor)).toThrow(/must be a Tensor or null; got number/);
    expect(() => n.registerBuffer('x', zeros([1]), true as never)).toThrow(
      /options argument must be an object like \{ persistent \}; got true/,
    );
    // A tensor requiring grad registered as a buffer is still a buffer, not a parameter.
    n.registerBuffer('g', zeros([1], { requiresGrad: true }));
    expect(n.namedParameters().map(([k]) => k)).toEqual(['weight']);
  }));

test('ModuleList, ModuleDict and Identity register with PyTorch names', () =>
  on(B.cpu, async () => {
    class M extends Module {
      layers = new nn.ModuleList([new nn.Linear(2, 2), new nn.Identity()]);
      heads = new nn.ModuleDict({ a: new nn.Linear(2, 1), b: new nn.Linear(2, 1, { bias: false }) });
      forward(x: Tensor): Tensor {
        for (const l of this.layers) x = l.forward(x);
        return this.heads.get('a').forward(x).add(this.heads.get('b').forward(x));
      }
    }
    const m = new M();
    m.layers.append(new nn.Linear(2, 2, { bias: false }));
    expect(Object.keys(m.stateDict())).toEqual([
      'layers.0.weight',
      'layers.0.bias',
      'layers.2.weight',
      'heads.a.weight',
      'heads.a.bias',
      'heads.b.weight',
    ]);
    expect(m.namedModules().map(([n]) => n)).toEqual([
      '',
      'layers',
      'layers.0',
      'layers.1',
      'layers.2',
      'heads',
      'heads.a',
      'heads.b',
    ]);
    expect(m.layers.length).toBe(3);
    expect(m.layers.at(-1)).toBeInstanceOf(nn.Linear);
    expect(m.heads.keys()).toEqual(['a', 'b']);
    expect(m.forward(tensor([[1, 2]], { dtype: 'float32' })).shape).toEqual([1, 1]);
    const x = tensor([1, 2]);
    expect(new nn.Identity().forward(x)).toBe(x);
    expect(() => m.layers.at(5)).toThrow(/index 5 is out of range for 3 modules/);
    expect(() => m.heads.get('c')).toThrow(/no module named "c"; have a, b/);
    expect(() => new nn.ModuleList([3 as unknown as Module])).toThrow(/item 0 is number; expected a Module/);
    expect(() => m.heads.set('x.y', new nn.Identity())).toThrow(ValueError);
  }));

test('modules in a Map, a plain object or a nested array are a clear error, not silently dropped', () =>
  on(B.cpu, () => {
    class InMap extends Module {
      blocks = new Map([['a', new nn.Linear(2, 2)]]);
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    class InObject extends Module {
      blocks = { a: new nn.Linear(2, 2) };
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    class Nested extends Module {
      blocks = [[new nn.Linear(2, 2)]];
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    class Harmless extends Module {
      config = { width: 2, mask: tensor([1]) };
      names = new Map([['a', 1]]);
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    expect(() => new InMap().parameters()).toThrow(
      /InMap: field 'blocks' is a Map holding modules or parameters.*use nn.ModuleDict/,
    );
    expect(() => new InObject().stateDict()).toThrow(/field 'blocks' is a plain object/);
    expect(() => new Nested().parameters()).toThrow(/field 'blocks\[0\]' is a nested array/);
    expect(new Harmless().parameters()).toEqual([]);
  }));

test('requiresGrad_, zeroGrad and apply reach every parameter and module', () =>
  on(B.cpu, () => {
    const net = new Net();
    expect(net.requiresGrad_(false)).toBe(net);
    expect(net.parameters().map((p) => p.requiresGrad)).toEqual([false, false, false]);
    net.norm.requiresGrad_(true);
    net
      .forward(tensor([[1, 2]], { dtype: 'float32' }))
      .sum()
      .backward();
    expect(net.fc.weight.grad).toBeNull();
    expect(net.norm.weight.grad).not.toBeNull();
    // An optimizer accepts frozen parameters and skips them (no grad).
    const opt = new optim.SGD(net.parameters(), { lr: 1 });
    opt.step();
    net.zeroGrad();
    expect(net.parameters().every((p) => p.grad === null)).toBe(true);
    const order: string[] = [];
    net.apply((m) => order.push(m.constructor.name));
    // Children first, then the module itself, as PyTorch's apply.
    expect(order).toEqual(['Linear', 'Norm', 'Net']);
    expect(() => net.apply(3 as never)).toThrow(/apply: expected a function/);
    expect(() => net.requiresGrad_('yes' as never)).toThrow(/expected a boolean/);
  }));

testGpu('tensor.to / module.to move data between backends, keeping parameter identity', async () => {
  const gpu = B.gpu();
  await on(B.cpu, async () => {
    manualSeed(5);
    const net = new Net();
    const x = tensor([[0.5, -1]]);
    const want = await arr(net.forward(x));
    const params = net.parameters();
    const opt = new optim.Adam(net.parameters(), { lr: 0.01 });
    // Mixed backends name where each operand lives and how to move.
    net.to(gpu);
    expect(net.fc.weight.device).toBe('webgpu');
    expect(net.norm.runningMean.device).toBe('webgpu');
    expect(net.parameters()).toEqual(params);
    expect(() => net.forward(x)).toThrow(BackendError);
    expect(() => x.add(net.norm.runningMean)).toThrow(
      /add: operands live on different backends \(operand 0 \[1,2\] on cpu, operand 1 \[2\] on webgpu\).*tensor.to\(getBackend\(\)\)/,
    );
    const xg = x.to(gpu);
    expect(x.to(B.cpu)).toBe(x);
    expect(xg.device).toBe('webgpu');
    const got = await arr(net.forward(xg));
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i], 5));
    net.forward(xg).sum().backward();
    opt.step();
    // Back from the GPU needs a readback: the sync form says so.
    expect(() => net.to(B.cpu)).toThrow(/use await module.toAsync/);
    expect(() => xg.to(B.cpu)).toThrow(/use await toAsync/);
    await net.toAsync(B.cpu);
    expect(net.fc.weight.device).toBe('cpu');
    expect(net.fc.weight.grad!.device).toBe('cpu');
    expect((await xg.toAsync('cpu')).device).toBe('cpu');
    expect(() => x.to('tpu' as never)).toThrow(/expected a backend/);
    const y = tensor([1], { requiresGrad: true }).mul(2);
    expect(() => y.to(gpu)).toThrow(/detach\(\) it first/);
  });
});
