import { ArgError, DEFAULTS, helpText, parseArgs } from '../src/args';

describe('mlp flags', () => {
  test('no flags give the defaults: 784-128-10, Adam', () => {
    const o = parseArgs([]);
    expect(o).toEqual(DEFAULTS);
    expect(o.hidden).toEqual([128]);
    expect(o.optimizer).toBe('adam');
    expect(o.lr).toBeUndefined();
  });

  test('every flag is read, in both --k v and --k=v forms', () => {
    const o = parseArgs([
      '--hidden',
      '256,64',
      '--epochs=3',
      '--batch-size',
      '32',
      '--lr',
      '0.01',
      '--optimizer=sgd',
      '--schedule',
      'constant',
      '--shift',
      '0',
      '--seed',
      '-4',
      '--backend',
      'cpu',
      '--log-every',
      '5',
      '--steps',
      '7',
      '--out',
      'a.st',
      '--predict=b.st',
    ]);
    expect(o).toMatchObject({
      hidden: [256, 64],
      epochs: 3,
      batchSize: 32,
      lr: 0.01,
      optimizer: 'sgd',
      schedule: 'constant',
      shift: 0,
      seed: -4,
      backend: 'cpu',
      logEvery: 5,
      steps: 7,
      out: 'a.st',
      predict: 'b.st',
    });
    expect(parseArgs(['-h']).help).toBe(true);
  });

  test('bad values are refused with the flag named', () => {
    expect(() => parseArgs(['--epochs', '0'])).toThrow(ArgError);
    expect(() => parseArgs(['--epochs', '1.5'])).toThrow(/--epochs must be a positive integer/);
    expect(() => parseArgs(['--lr', '-1'])).toThrow(/--lr/);
    expect(() => parseArgs(['--backend', 'tpu'])).toThrow(/one of auto, webgpu, cpu/);
    expect(() => parseArgs(['--hidden', '128,x'])).toThrow(/--hidden/);
    expect(() => parseArgs(['--shift', '9'])).toThrow(/--shift/);
    expect(() => parseArgs(['--bogus', '1'])).toThrow(/unknown flag --bogus/);
    expect(() => parseArgs(['--seed'])).toThrow(/needs a value/);
    expect(() => parseArgs(['model.st'])).toThrow(/unexpected argument/);
  });

  test('help lists every flag with its default', () => {
    const h = helpText();
    for (const f of [
      '--hidden',
      '--epochs',
      '--batch-size',
      '--lr',
      '--optimizer',
      '--schedule',
      '--shift',
      '--seed',
      '--backend',
      '--log-every',
      '--steps',
      '--out',
      '--predict',
      '--help',
    ])
      expect(h).toContain(f);
    expect(h).toContain('(default 128)');
    expect(h).toContain('(default adam)');
    expect(h).toContain('default 0.002 for adam');
  });
});

test('--no-jit selects the eager loop (jit is the default)', () => {
  expect(parseArgs([]).jit).toBe(true);
  expect(parseArgs(['--no-jit']).jit).toBe(false);
  expect(helpText()).toMatch(/--no-jit/);
});
