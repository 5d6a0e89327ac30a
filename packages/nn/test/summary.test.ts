import { ShapeError, Tensor, ValueError, nn, tensor } from '@surf/nn';
import { arr, backends, on } from './helpers';

// model.summary(): output shapes worked out by hand for each layer, parameter counts from the
// layer sizes, and the pass leaves the model as it was (mode, running statistics, forward).

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

class Net extends nn.Module {
  features = new nn.Sequential(new nn.Conv2d(1, 4, 3), new nn.BatchNorm2d(4), new nn.ReLU(), new nn.Flatten());
  heads = [new nn.Linear(4 * 6 * 6, 5), new nn.Linear(5, 2)];
  unused = new nn.Linear(2, 2);
  forward(x: Tensor): Tensor {
    return this.heads[1].forward(this.heads[0].forward(this.features.forward(x)).relu());
  }
}

test('rows, output shapes, parameter counts and totals', async () => {
  await on(B.cpu, async () => {
    const net = new Net();
    net.heads[1].bias!.requiresGrad_(false);
    const s = net.summary([3, 1, 8, 8]);
    const conv = 4 * 9 + 4,
      bn = 8,
      fc1 = 144 * 5 + 5,
      fc2 = 5 * 2 + 2,
      unused = 6;
    expect(s.rows.map((r) => [r.name, r.type, r.depth, r.outputShape, r.params])).toEqual([
      ['', 'Net', 0, [3, 2], conv + bn + fc1 + fc2 + unused],
      ['features', 'Sequential', 1, [3, 144], conv + bn],
      ['features.0', 'Conv2d', 2, [3, 4, 6, 6], conv],
      ['features.1', 'BatchNorm2d', 2, [3, 4, 6, 6], bn],
      ['features.2', 'ReLU', 2, [3, 4, 6, 6], 0],
      ['features.3', 'Flatten', 2, [3, 144], 0],
      ['heads.0', 'Linear', 1, [3, 5], fc1],
      ['heads.1', 'Linear', 1, [3, 2], fc2],
      ['unused', 'Linear', 1, null, unused],
    ]);
    expect(s.totalParams).toBe(conv + bn + fc1 + fc2 + unused);
    expect(s.trainableParams).toBe(s.totalParams - 2);
    // parameters plus BatchNorm's running_mean, running_var (4 floats each) and the int32 count
    expect(s.stateBytes).toBe((s.totalParams + 8) * 4 + 4);
    const text = String(s);
    expect(text).toContain('├─ Conv2d (features.0)');
    expect(text).toMatch(/Linear \(unused\)\s+--\s+6/);
    expect(text).toContain(`Total params: ${(conv + bn + fc1 + fc2 + unused).toLocaleString('en-US')}`);
    expect(text).toContain('Non-trainable params: 2');
  });
});

test('the pass changes nothing: mode, running statistics and forward are restored', async () => {
  await on(B.cpu, async () => {
    const net = new Net();
    const bn = net.features.children()[1] as nn.BatchNorm2d;
    const before = await arr(bn.running_var!);
    net.summary([2, 1, 8, 8]);
    expect(net.training && bn.training).toBe(true);
    expect(await arr(bn.running_var!)).toEqual(before);
    expect(await arr(bn.num_batches_tracked!)).toEqual([0]);
    expect(Object.prototype.hasOwnProperty.call(net, 'forward')).toBe(false);
    net.eval();
    net.summary([2, 1, 8, 8]);
    expect(net.training).toBe(false);
  });
});

test('several inputs, an int32 input, and bad input shapes', async () => {
  await on(B.cpu, async () => {
    class Two extends nn.Module {
      emb = new nn.Embedding(10, 3);
      forward(i: Tensor, x: Tensor) {
        return this.emb.forward(i).add(x);
      }
    }
    // Both inputs are int32 zeros: indices for the Embedding, and x promotes in the add.
    const two = new Two().summary(
      [
        [2, 4],
        [2, 4, 3],
      ],
      { dtype: 'int32' },
    );
    expect(two.rows.map((r) => r.outputShape)).toEqual([
      [2, 4, 3],
      [2, 4, 3],
    ]);
    expect(two.inputShapes).toEqual([
      [2, 4],
      [2, 4, 3],
    ]);
    const lin = new nn.Linear(4, 2);
    expect(() => lin.summary([3, 5])).toThrow(ShapeError);
    expect(() => lin.summary([3, 5])).toThrow(/summary.*\[3,5\]|\[3, 5\]/);
    expect(() => lin.summary('x' as unknown as number[])).toThrow(ValueError);
    expect(() => lin.summary([2, 4], 'int32' as never)).toThrow(ValueError);
    expect(Object.prototype.hasOwnProperty.call(lin, 'forward')).toBe(false);
    expect(await arr(lin.forward(tensor([[0, 0, 0, 0]], { dtype: 'float32' })))).toEqual(await arr(lin.bias!));
  });
});
