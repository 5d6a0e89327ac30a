/**
 * Command-line flags of `npm run mlp`. One table drives parsing, validation and --help, so
 * the help text cannot drift from what is accepted.
 */
export type BackendChoice = 'auto' | 'webgpu' | 'cpu';
export type OptimizerChoice = 'adam' | 'sgd';
export type ScheduleChoice = 'cosine' | 'constant';

export interface CliOptions {
  hidden: number[];
  epochs: number;
  batchSize: number;
  /** undefined: the optimizer's default (DEFAULT_LR). */
  lr: number | undefined;
  optimizer: OptimizerChoice;
  schedule: ScheduleChoice;
  shift: number;
  seed: number;
  backend: BackendChoice;
  logEvery: number;
  /** Stop each epoch after this many steps (quick tries); undefined = full epochs. */
  steps: number | undefined;
  out: string;
  predict: string | undefined;
  /** jit: replay the captured training step (--no-jit: the eager loop). */
  jit: boolean;
  help: boolean;
}

/** Learning rates that work for this network with each optimizer (SGD with momentum 0.9). */
export const DEFAULT_LR: Record<OptimizerChoice, number> = { adam: 2e-3, sgd: 0.05 };

export const DEFAULTS: CliOptions = {
  hidden: [128],
  epochs: 15,
  batchSize: 64,
  lr: undefined,
  optimizer: 'adam',
  schedule: 'cosine',
  shift: 1,
  seed: 0,
  backend: 'auto',
  logEvery: 10,
  steps: undefined,
  out: 'examples/mlp/out/model.safetensors',
  predict: undefined,
  jit: true,
  help: false,
};

interface Flag {
  name: string;
  key: keyof CliOptions;
  value: string;
  help: string;
  parse?: (v: string) => unknown;
}

function positiveInt(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new ArgError(`--${flag} must be a positive integer, got "${v}"`);
    return n;
  };
}

function oneOf<T extends string>(flag: string, choices: readonly T[]) {
  return (v: string): T => {
    if (!(choices as readonly string[]).includes(v))
      throw new ArgError(`--${flag} must be one of ${choices.join(', ')}, got "${v}"`);
    return v as T;
  };
}

const FLAGS: Flag[] = [
  {
    name: 'hidden',
    key: 'hidden',
    value: 'N[,N...]',
    help: 'hidden layer sizes, comma-separated',
    parse: (v) => v.split(',').map(positiveInt('hidden')),
  },
  {
    name: 'epochs',
    key: 'epochs',
    value: 'N',
    help: 'passes over the 8,000 training digits',
    parse: positiveInt('epochs'),
  },
  { name: 'batch-size', key: 'batchSize', value: 'N', help: 'digits per step', parse: positiveInt('batch-size') },
  {
    name: 'lr',
    key: 'lr',
    value: 'X',
    help: `learning rate (default ${DEFAULT_LR.adam} for adam, ${DEFAULT_LR.sgd} for sgd)`,
    parse: (v) => {
      const x = Number(v);
      if (!(x > 0 && Number.isFinite(x))) throw new ArgError(`--lr must be a positive number, got "${v}"`);
      return x;
    },
  },
  {
    name: 'optimizer',
    key: 'optimizer',
    value: 'adam|sgd',
    help: 'optimizer',
    parse: oneOf('optimizer', ['adam', 'sgd'] as const),
  },
  {
    name: 'schedule',
    key: 'schedule',
    value: 'cosine|constant',
    help: 'learning rate: cosine decay to 0 over the run, or constant',
    parse: oneOf('schedule', ['cosine', 'constant'] as const),
  },
  {
    name: 'shift',
    key: 'shift',
    value: 'N',
    help: 'shift training digits by up to N pixels (0 = no augmentation)',
    parse: (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 4) throw new ArgError(`--shift must be an integer in 0..4, got "${v}"`);
      return n;
    },
  },
  {
    name: 'seed',
    key: 'seed',
    value: 'N',
    help: 'seed for weights and batch order',
    parse: (v) => {
      const n = Number(v);
      if (!Number.isInteger(n)) throw new ArgError(`--seed must be an integer, got "${v}"`);
      return n;
    },
  },
  {
    name: 'backend',
    key: 'backend',
    value: 'auto|webgpu|cpu',
    help: 'auto = WebGPU when an adapter exists, else CPU',
    parse: oneOf('backend', ['auto', 'webgpu', 'cpu'] as const),
  },
  {
    name: 'log-every',
    key: 'logEvery',
    value: 'N',
    help: 'read the loss back every N steps (each read waits for the device)',
    parse: positiveInt('log-every'),
  },
  {
    name: 'steps',
    key: 'steps',
    value: 'N',
    help: 'stop each epoch after N steps (a quick try)',
    parse: positiveInt('steps'),
  },
  { name: 'out', key: 'out', value: 'PATH', help: 'where to save the trained model (safetensors)' },
  {
    name: 'predict',
    key: 'predict',
    value: 'PATH',
    help: 'load a saved model and report its test accuracy instead of training',
  },
];

export class ArgError extends Error {
  override name = 'ArgError';
}

export function parseArgs(argv: readonly string[]): CliOptions {
  const opts: CliOptions = { ...DEFAULTS, hidden: [...DEFAULTS.hidden] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      opts.help = true;
      continue;
    }
    if (arg === '--no-jit') {
      opts.jit = false;
      continue;
    }
    if (!arg.startsWith('--')) throw new ArgError(`unexpected argument "${arg}" (flags start with --; see --help)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const flag = FLAGS.find((f) => f.name === name);
    if (!flag) throw new ArgError(`unknown flag --${name} (see --help)`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      if (i + 1 >= argv.length) throw new ArgError(`--${name} needs a value (${flag.value})`);
      value = argv[++i];
    }
    (opts as unknown as Record<string, unknown>)[flag.key] = flag.parse ? flag.parse(value) : value;
  }
  return opts;
}

function show(v: unknown): string {
  return Array.isArray(v) ? v.join(',') : String(v);
}

export function helpText(): string {
  const rows = FLAGS.map((f) => {
    const left = `  --${f.name} ${f.value}`;
    const def = DEFAULTS[f.key];
    const suffix = def === undefined ? '' : ` (default ${show(def)})`;
    return `${left.padEnd(30)}${f.help}${suffix}`;
  });
  return [
    'Trains an MLP on 8,000 real MNIST digits and reports accuracy on 2,000 held-out ones.',
    '',
    'usage: npm run mlp -- [flags]',
    '       npm run mlp -- --predict examples/mlp/out/model.safetensors',
    '',
    ...rows,
    `${'  --no-jit'.padEnd(30)}train with the eager loop instead of replaying the captured step (jit)`,
    `${'  --help'.padEnd(30)}this text`,
  ].join('\n');
}
