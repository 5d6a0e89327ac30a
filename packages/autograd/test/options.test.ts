import { ValueError } from '@surf/core';
import { ones, softmaxCrossEntropy, tensor, zeros } from '@surf/autograd';

// An options argument that is not an object is a ValueError naming the function and the
// expected shape, never silently the defaults.
test('creation functions and softmaxCrossEntropy reject non-object options', () => {
  expect(() => tensor([1, 2], 'float32' as never)).toThrow(ValueError);
  expect(() => tensor([1, 2], 'float32' as never)).toThrow(
    /tensor: the options argument must be an object like \{ dtype, requiresGrad \}; got "float32"/,
  );
  expect(() => zeros([2], true as never)).toThrow(/options argument must be an object/);
  expect(() => ones([2], null as never)).toThrow(/got null/);
  expect(tensor([1, 2]).dtype).toBe('float32');
  expect(() => softmaxCrossEntropy(zeros([1, 2]), tensor([0]), 0.1 as never)).toThrow(
    /crossEntropy: the options argument must be an object like \{ labelSmoothing, reduction, ignoreIndex, weight \}/,
  );
});
