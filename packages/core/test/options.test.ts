import { SurfTypeError, ValueError, nearestKey, parseOptions, unknownOptionError, withDefaults } from '@surf/core';

interface Opts {
  lr: number;
  weightDecay: number;
  betas: [number, number];
  mode: 'mean' | 'sum';
  amsgrad: boolean;
}
const spec = {
  lr: 'nonnegative',
  weightDecay: 'nonnegative',
  betas: 'array',
  mode: ['mean', 'sum'],
  amsgrad: 'boolean',
} as const;

describe('parseOptions', () => {
  test('keeps only the given keys, undefined counts as absent', () => {
    expect(parseOptions<Opts>('f', { lr: 0.1, amsgrad: undefined }, spec)).toEqual({ lr: 0.1 });
    expect(parseOptions<Opts>('f', undefined, spec)).toEqual({});
  });
  test('an unknown key names the function, the key and the nearest known key', () => {
    expect(() => parseOptions<Opts>('Adam', { weight_decay: 0.1 }, spec)).toThrow(
      /Adam: unknown option 'weight_decay'; did you mean 'weightDecay'\?/,
    );
    expect(() => parseOptions<Opts>('Adam', { amsgard: true }, spec)).toThrow(/did you mean 'amsgrad'/);
    expect(() => parseOptions<Opts>('Adam', { zzz: 1 }, spec)).toThrow(ValueError);
    expect(() => parseOptions<Opts>('Adam', { zzz: 1 }, spec)).not.toThrow(/did you mean/);
  });
  test('values are checked by their rule', () => {
    expect(() => parseOptions<Opts>('f', { lr: -1 }, spec)).toThrow(/f: option 'lr' must be a number >= 0; got -1/);
    expect(() => parseOptions<Opts>('f', { lr: 'abc' }, spec)).toThrow(SurfTypeError);
    expect(() => parseOptions<Opts>('f', { mode: 'avg' }, spec)).toThrow(/one of "mean", "sum"/);
    expect(() => parseOptions<Opts>('f', { amsgrad: 1 }, spec)).toThrow(/must be a boolean/);
  });
  test('non-objects are refused; inherited keys are not options', () => {
    expect(() => parseOptions<Opts>('f', 0.1, spec)).toThrow(/options argument must be an object/);
    expect(() => parseOptions<Opts>('f', null, spec)).toThrow(ValueError);
    expect(() => parseOptions<Opts>('f', [1], spec)).toThrow(ValueError);
    const o = Object.create({ lr: -5 }) as object;
    expect(parseOptions<Opts>('f', o, spec)).toEqual({});
  });
  test('withDefaults fills every key', () => {
    const d: Opts = { lr: 1, weightDecay: 0, betas: [0.9, 0.99], mode: 'mean', amsgrad: false };
    expect(withDefaults('f', { lr: 2 }, spec, d)).toEqual({ ...d, lr: 2 });
  });
  test('nearestKey', () => {
    expect(nearestKey('paddding', ['padding', 'stride'])).toBe('padding');
    expect(nearestKey('label_smoothing', ['labelSmoothing'])).toBe('labelSmoothing');
    expect(nearestKey('momentom', ['momentum', 'dampening'])).toBe('momentum');
    expect(nearestKey('q', ['momentum'])).toBeUndefined();
  });
});

describe('suggestions for transposed letters and old keyword spellings; the probability rule', () => {
  test('a swap of two neighbouring letters is one typo', () => {
    expect(nearestKey('dtpye', ['dtype', 'requiresGrad'])).toBe('dtype');
    expect(nearestKey('beat', ['reduction', 'beta'])).toBe('beta');
  });
  test("a truncated spelling suggests the one key it starts (PyTorch's old `reduce`)", () => {
    expect(nearestKey('reduce', ['reduction', 'delta'])).toBe('reduction');
    expect(nearestKey('red', ['reduction'])).toBeUndefined();
  });
  test('without a suggestion the message still reads as sentences', () => {
    expect(unknownOptionError('f', 'zzz', ['alpha']).message).toBe("f: unknown option 'zzz'. Known options: alpha.");
  });
  test("'probability' takes [0, 1] and says so", () => {
    const spec = { p: 'probability' } as const;
    expect(parseOptions('Dropout', { p: 0 }, spec)).toEqual({ p: 0 });
    expect(parseOptions('Dropout', { p: 1 }, spec)).toEqual({ p: 1 });
    expect(() => parseOptions('Dropout', { p: 1.01 }, spec)).toThrow(
      new ValueError("Dropout: option 'p' must be a number in [0, 1]; got 1.01"),
    );
    expect(() => parseOptions('Dropout', { p: -0.1 }, spec)).toThrow(ValueError);
    expect(() => parseOptions('Dropout', { p: '0.5' }, spec)).toThrow(SurfTypeError);
  });
});
