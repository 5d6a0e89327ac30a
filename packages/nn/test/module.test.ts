import {
  DTypeError,
  Module,
  ShapeError,
  Tensor,
  ValueError,
  manualSeed,
  memory,
  nn,
  ones,
  optim,
  tensor,
  tidy,
  zeros,
} from '@surf/nn';
import { arr, backends, on } from './helpers';

// Module registration by field discovery, PyTorch-style names, modes, state dicts, printing.

class Block extends Module {
  fc = new nn.Linear(2, 2);
  act = new nn.ReLU();
  forward(x: Tensor): Tensor {
    return this.act.forward(this.fc.forward(x));
  }
}

class Net extends Module {
  readonly width = 2;
  embed = new nn.Linear(3, 2, { bias: false });
  blocks = [new Block(), new Block()];
  scale = nn.parameter(ones([2]));
  // Not a parameter: a tensor that does not require grad, and plain values.
  mask = tensor([1, 0]);
  head = new nn.Sequential(new nn.Linear(2, 1));
  forward(x: Tensor): Tensor {
    let h = this.embed.forward(x);
    for (const b of this.blocks) h = b.forward(h);
    return this.head.forward(h.mul(this.scale));
  }
}

const B = backends();

test('parameters are found from fields and arrays, with dotted names in PyTorch order', () =>
  on(B.cpu, () => {
    const net = new Net();
    // As PyTorch's named_parameters: a module's own parameters first, then its children's.
    expect(net.namedParameters().map(([n, p]) => `${n} ${p.shape.join('x')}`)).toEqual([
      'scale 2',
      'embed.weight 2x3',
      'blocks.0.fc.weight 2x2',
      'blocks.0.fc.bias 2',
      'blocks.1.fc.weight 2x2',
      'blocks.1.fc.bias 2',
      'head.0.weight 1x2',
      'head.0.bias 1',
    ]);
    expect(net.parameters()).toHaveLength(8);
    expect(net.parameters().every((p) => p.requiresGrad)).toBe(true);
    expect(net.numParameters()).toBe(6 + 6 + 6 + 2 + 3);
    expect(net.namedChildren().map(([n]) => n)).toEqual(['embed', 'blocks.0', 'blocks.1', 'head']);
    expect(net.namedModules().map(([n, m]) => `${n}:${m.constructor.name}`)).toEqual([
      ':Net',
      'embed:Linear',
      'blocks.0:Block',
      'blocks.0.fc:Linear',
      'blocks.0.act:ReLU',
      'blocks.1:Block',
      'blocks.1.fc:Linear',
      'blocks.1.act:ReLU',
      'head:Sequential',
      'head.0:Linear',
    ]);
  }));

test('a parameter shared by two modules is listed once (weight tying)', () =>
  on(B.cpu, () => {
    const a = new nn.Linear(2, 2);
    const b = new nn.Linear(2, 2);
    (b as unknown as { weight: Tensor }).weight = a.weight;
    const s = new nn.Sequential(a, b);
    expect(s.namedParameters().map(([n]) => n)).toEqual(['0.weight', '0.bias', '1.bias']);
  }));

test('train() and eval() reach every descendant', () =>
  on(B.cpu, () => {
    const net = new Net();
    expect(net.modules().every((m) => m.training)).toBe(true);
    expect(net.eval()).toBe(net);
    expect(net.modules().every((m) => !m.training)).toBe(true);
    net.train();
    expect(net.modules().every((m) => m.training)).toBe(true);
  }));

test('a model built inside tidy() keeps its parameters', () =>
  on(B.cpu, async () => {
    const m = tidy(() => new nn.Linear(2, 2));
    expect(m.weight.isDisposed).toBe(false);
    expect((await arr(m.forward(tensor([[1.5, 2]])))).length).toBe(2);
  }));

test('stateDict returns the live parameters by name', () =>
  on(B.cpu, () => {
    const net = new Net();
    const sd = net.stateDict();
    expect(Object.keys(sd)).toEqual(net.namedParameters().map(([n]) => n));
    expect(sd['blocks.1.fc.bias']).toBe(net.blocks[1].fc.bias);
  }));

test('loadStateDict copies values in, keeping the parameter objects (an optimizer stays valid)', () =>
  on(B.cpu, async () => {
    manualSeed(1);
    const a = new Net();
    manualSeed(2);
    const b = new Net();
    const x = tensor([[1, -2, 0.5]]);
    const before = b.parameters();
    const opt = new optim.SGD(b.parameters(), { lr: 0.1 });
    expect(await arr(b.forward(x))).not.toEqual(await arr(a.forward(x)));
    expect(b.loadStateDict(a.stateDict())).toEqual({ missingKeys: [], unexpectedKeys: [] });
    expect(b.parameters()).toEqual(before);
    expect(await arr(b.forward(x))).toEqual(await arr(a.forward(x)));
    // Training b afterwards leaves a alone.
    b.forward(x).sum().backward();
    opt.step();
    expect(await arr(b.forward(x))).not.toEqual(await arr(a.forward(x)));
    expect(await arr(a.stateDict()['scale'])).toEqual([1, 1]);
  }));

test('loadStateDict names missing, extra, mis-shaped and mis-typed keys, writing nothing on error', () =>
  on(B.cpu, async () => {
    const m = new nn.Linear(2, 3);
    const w0 = await arr(m.weight);
    expect(() => m.loadStateDict({ weight: zeros([3, 2]) })).toThrow(ValueError);
    expect(() => m.loadStateDict({ weight: zeros([3, 2]) })).toThrow(
      /loadStateDict: the state dict does not match Linear's parameters \(missing keys: bias\); pass \{ strict: false \}/,
    );
    expect(() => m.loadStateDict({ weight: zeros([3, 2]), bias: zeros([3]), extra: zeros([1]) })).toThrow(
      /unexpected keys: extra/,
    );
    expect(() => m.loadStateDict({ weight: zeros([2, 3]), bias: zeros([3]) })).toThrow(ShapeError);
    expect(() => m.loadStateDict({ weight: zeros([2, 3]), bias: zeros([3]) })).toThrow(
      /'weight' has shape \[2,3\]; the parameter has shape \[3,2\]/,
    );
    expect(() => m.loadStateDict({ weight: zeros([3, 2]), bias: tensor([1, 2, 3], { dtype: 'int32' }) })).toThrow(
      DTypeError,
    );
    expect(() =>
      m.loadStateDict({ bias: zeros([3]), weight: zeros([3, 2], {}), x: 1 as unknown as Tensor }, { strict: false }),
    ).not.toThrow();
    expect(await arr(m.weight)).toEqual([0, 0, 0, 0, 0, 0]);
    const m2 = new nn.Linear(2, 3);
    const w2 = await arr(m2.weight);
    // A shape error in the second key leaves the first untouched.
    expect(() => m2.loadStateDict({ weight: ones([3, 2]), bias: ones([4]) })).toThrow(ShapeError);
    expect(await arr(m2.weight)).toEqual(w2);
    const r = m2.loadStateDict({ weight: ones([3, 2]), other: ones([1]) }, { strict: false });
    expect(r).toEqual({ missingKeys: ['bias'], unexpectedKeys: ['other'] });
    expect(await arr(m2.weight)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(w0.length).toBe(6);
  }));

test('toString prints the tree with settings, shapes and parameter counts', () =>
  on(B.cpu, () => {
    const net = new nn.Sequential(
      new nn.Linear(4, 8),
      new nn.GELU(),
      new nn.Dropout(0.1),
      new nn.LayerNorm(8),
      new nn.Linear(8, 2, { bias: false }),
    );
    expect(net.toString()).toBe(
      [
        'Sequential(',
        '  (0): Linear(inFeatures=4, outFeatures=8, bias=true)  # weight [8,4], bias [8] (40 params)',
        '  (1): GELU()',
        '  (2): Dropout(p=0.1)',
        '  (3): LayerNorm([8], eps=0.00001, elementwiseAffine=true)  # weight [8], bias [8] (16 params)',
        '  (4): Linear(inFeatures=8, outFeatures=2, bias=false)  # weight [2,8] (16 params)',
        ')',
        'Total parameters: 72',
      ].join('\n'),
    );
    expect(String(new Net())).toContain(
      '  (blocks.0): Block(\n    (fc): Linear(inFeatures=2, outFeatures=2, bias=true)  # weight [2,2], bias [2] (6 params)\n    (act): ReLU()\n  )',
    );
    expect(String(new Net())).toContain('Net(\n  # scale [2] (2 params)\n');
  }));

test('parameter() rejects non-leaves and non-tensors', () =>
  on(B.cpu, () => {
    expect(() => nn.parameter(ones([2], { requiresGrad: true }).mul(2))).toThrow(
      /parameter: the tensor was made by an op/,
    );
    expect(() => nn.parameter(3 as unknown as Tensor)).toThrow(/parameter: expected a Tensor; got number/);
    expect(memory().backend).toBe('cpu');
  }));
