import { Module, SurfTypeError, Tensor, nn, tensor, zeros } from '@surf/nn';
import { backends, on, testEach } from './helpers';

// Every module's forward refuses a non-Tensor input with a SurfTypeError naming the module and
// the expected type (one check on Module's call path), instead of a raw TypeError in an op.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

testEach(['cpu', 'webgpu'], 'forward with a non-Tensor input names the module and the expected type', async (kind) => {
  await on(kind === 'cpu' ? B.cpu : B.gpu(), () => {
    const modules: Module[] = [
      new nn.Linear(2, 3),
      new nn.Conv2d(1, 1, 2),
      new nn.LayerNorm(2),
      new nn.ReLU(),
      new nn.Embedding(3, 2),
      new nn.MultiheadAttention(4, 2),
      new nn.Sequential(new nn.Linear(2, 2)),
      new nn.MSELoss(),
    ];
    for (const m of modules) {
      const name = m.constructor.name;
      expect(() => m.forward(undefined as never)).toThrow(SurfTypeError);
      expect(() => m.forward(undefined as never)).toThrow(
        new SurfTypeError(`${name}.forward: the input is undefined; expected a Tensor (make one with tensor(data))`),
      );
      expect(() => m.forward([[1, 2]] as never)).toThrow(`${name}.forward: the input is [[1, 2]]; expected a Tensor`);
      expect(() => (m.forward as () => Tensor)()).toThrow(`${name}.forward: the input is missing`);
    }
    // A Tensor still goes through, and the check is not a field of the module.
    const lin = new nn.Linear(2, 3);
    expect(lin.forward(zeros([1, 2])).shape).toEqual([1, 3]);
    expect(Object.prototype.hasOwnProperty.call(lin, 'forward')).toBe(false);
    expect(Object.keys(lin.stateDict()).sort()).toEqual(['bias', 'weight']);
  });
});

testEach(['cpu', 'webgpu'], 'a module whose forward takes other inputs opts out', async (kind) => {
  await on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
    class Pair extends Module {
      static override tensorInput = false;
      readonly lin = new nn.Linear(2, 1);
      forward(batch: { x: Tensor }): Tensor {
        return this.lin.forward(batch.x);
      }
    }
    const m = new Pair();
    expect(m.forward({ x: tensor([[1, 2]]) }).shape).toEqual([1, 1]);
    // Its children are still checked.
    expect(() => m.forward({ x: 3 as never })).toThrow('Linear.forward: the input is 3; expected a Tensor');
    expect(() => new nn.ModuleList([]).forward()).toThrow(/ModuleList has no forward/);
  });
});
