import { SurfTypeError, ValueError, nearestKey, parseOptions, withDefaults } from '@surf/core';

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
