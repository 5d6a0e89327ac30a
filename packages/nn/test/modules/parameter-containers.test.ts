import { Module, Tensor, ValueError, nn, ones, optim, tensor, zeros } from '@surf/nn';

// ParameterList / ParameterDict: registration under PyTorch's names, training through them,
// loading state dicts.
class Net extends Module {
  readonly scales = new nn.ParameterList([ones([2]), zeros([2])]);
  readonly extra = new nn.ParameterDict({ shift: zeros([2]) });
  forward(x: Tensor): Tensor {
    let y = x;
    for (const s of this.scales) y = y.mul(s.add(1));
    return y.add(this.extra.get('shift'));
  }
}

test("parameters are registered under PyTorch's names and train", async () => {
  const n = new Net();
  expect(Object.keys(n.stateDict())).toEqual(['scales.0', 'scales.1', 'extra.shift']);
  expect(n.parameters().every((p) => nn.isParameter(p) && p.requiresGrad)).toBe(true);
  const opt = new optim.SGD(n.parameters(), { lr: 0.5 });
  n.forward(tensor(Float32Array.from([1, 2])))
    .sum()
    .backward();
  opt.step();
  // d/d shift = 1, d/d scales.1 = x·(1+1) = [2, 4].
  expect(Array.from(await n.extra.get('shift').data())).toEqual([-0.5, -0.5]);
  expect(Array.from(await n.scales.at(1).data())).toEqual([-1, -2]);
  n.loadStateDict({ 'scales.0': zeros([2]), 'scales.1': zeros([2]), 'extra.shift': ones([2]) });
  expect(Array.from(await n.forward(tensor(Float32Array.from([3, 4]))).data())).toEqual([4, 5]);
});

test('append, set, delete, keys and bad input', () => {
  const l = new nn.ParameterList();
  l.append(ones([1])).extend([zeros([3])]);
  expect(l.length).toBe(2);
  expect(l.at(-1).shape).toEqual([3]);
  const d = new nn.ParameterDict([['a', ones([1])]]);
  d.set('b', zeros([1]));
  expect(d.keys()).toEqual(['a', 'b']);
  expect(d.delete('a')).toBe(true);
  expect(Object.keys(d.stateDict())).toEqual(['b']);
  expect(() => l.append(3 as never)).toThrow(ValueError);
  expect(() => d.set('x.y', ones([1]))).toThrow(/without '\.'/);
  expect(() => d.get('zz')).toThrow(/no parameter named "zz"; have b/);
});
