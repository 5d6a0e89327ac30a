import { DEFAULT_TRAIN, TrainConfig } from './train';

export interface GptArgs {
  train: TrainConfig;
  backend: 'auto' | 'cpu' | 'webgpu';
  out: string;
  /** A model file to load and sample from instead of training. */
  sample?: string;
  prompt: string;
  length: number;
  temperature: number;
  topK: number;
  help: boolean;
}

export class ArgError extends Error {}

const NUM: Record<string, keyof TrainConfig> = {
  '--steps': 'steps',
  '--batch': 'batchSize',
  '--block': 'blockSize',
  '--embd': 'nEmbd',
  '--heads': 'nHead',
  '--layers': 'nLayer',
  '--dropout': 'dropout',
  '--lr': 'lr',
  '--warmup': 'warmup',
  '--weight-decay': 'weightDecay',
  '--clip': 'clip',
  '--eval-every': 'evalEvery',
  '--eval-batches': 'evalBatches',
  '--seed': 'seed',
};

export function helpText(): string {
  return `npm run gpt [-- options]    train a character-level GPT on the Brown corpus
npm run gpt -- --sample FILE [--prompt TEXT] [--length N] [--temperature T] [--top-k K]
options: ${Object.keys(NUM).join(' N, ')} N, --backend auto|cpu|webgpu, --out FILE (default examples/gpt/out/gpt.safetensors),
  --no-jit (the eager step; by default the step is captured and replayed with surf.jit)`;
}

export function parseArgs(argv: readonly string[]): GptArgs {
  const a: GptArgs = {
    train: { ...DEFAULT_TRAIN },
    backend: 'auto',
    out: 'examples/gpt/out/gpt.safetensors',
    prompt: 'The ',
    length: 400,
    temperature: 0.8,
    topK: 20,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new ArgError(`${k} needs a value`);
      return v;
    };
    const num = () => {
      const v = Number(val());
      if (!Number.isFinite(v) || v < 0) throw new ArgError(`${k} needs a non-negative number; got ${argv[i]}`);
      return v;
    };
    if (k === '--help' || k === '-h') a.help = true;
    else if (k === '--no-jit') a.train.jit = false;
    else if (NUM[k]) (a.train[NUM[k]] as number) = num();
    else if (k === '--backend') {
      const b = val();
      if (b !== 'auto' && b !== 'cpu' && b !== 'webgpu')
        throw new ArgError(`--backend must be auto, cpu or webgpu; got ${b}`);
      a.backend = b;
    } else if (k === '--out') a.out = val();
    else if (k === '--sample') a.sample = val();
    else if (k === '--prompt') a.prompt = val();
    else if (k === '--length') a.length = num();
    else if (k === '--temperature') a.temperature = num();
    else if (k === '--top-k') a.topK = num();
    else throw new ArgError(`unknown option ${k} (see --help)`);
  }
  const t = a.train;
  for (const key of [
    'steps',
    'batchSize',
    'blockSize',
    'nEmbd',
    'nHead',
    'nLayer',
    'evalEvery',
    'evalBatches',
  ] as const) {
    if (!Number.isInteger(t[key]) || t[key] < 1) throw new ArgError(`${key} must be a positive integer; got ${t[key]}`);
  }
  if (t.nEmbd % t.nHead !== 0) throw new ArgError(`--embd ${t.nEmbd} must be divisible by --heads ${t.nHead}`);
  if (!(a.temperature > 0)) throw new ArgError('--temperature must be > 0');
  return a;
}
