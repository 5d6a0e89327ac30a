import * as surf from '@surf/nn';
import { buildCnn } from '../src/model';

// The example's network: the shapes through the blocks, PyTorch-style parameter names (so
// the saved safetensors load into the same PyTorch model), and a clear error for bad channels.
test('buildCnn: [N,1,28,28] -> [N,10], 20,538 parameters under PyTorch names', () => {
  surf.manualSeed(0);
  const m = buildCnn();
  expect(m.forward(surf.randn([2, 1, 28, 28])).shape).toEqual([2, 10]);
  expect(m.numParameters()).toBe(16 * 9 + 2 * 16 + 32 * 16 * 9 + 2 * 32 + 32 * 7 * 7 * 10 + 10);
  expect(m.namedParameters().map(([n]) => n)).toEqual([
    '0.weight',
    '1.weight',
    '1.bias',
    '4.weight',
    '5.weight',
    '5.bias',
    '9.weight',
    '9.bias',
  ]);
  expect(buildCnn([4]).forward(surf.zeros([1, 1, 28, 28])).shape).toEqual([1, 10]);
  expect(() => buildCnn([])).toThrow(/buildCnn: channels \[\]/);
});
