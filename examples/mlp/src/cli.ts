import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ArgError, CliOptions, DEFAULT_LR, helpText, parseArgs } from './args';
import { setupBackend } from './backend';
import { loadMnist } from './data/mnist-node';
import { predictFile } from './predict';
import { ProgressBar } from './progress';
import { saveModel } from './saved-model';
import { train } from './train';

/** `npm run mlp`: trains the MNIST MLP, or with --predict scores a saved one. */
const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

async function runTrain(o: CliOptions): Promise<void> {
  const bar = new ProgressBar(process.stdout);
  const arch = [784, ...o.hidden, 10].join('-');
  console.log(
    `Surf MNIST MLP ${arch}, ${o.optimizer === 'adam' ? 'Adam' : 'SGD'} lr ${o.lr ?? DEFAULT_LR[o.optimizer]} (${o.schedule}), batch ${o.batchSize}, ${o.epochs} epochs, shifts up to ${o.shift} px, seed ${o.seed}`,
  );
  const backend = await setupBackend(o.backend);
  console.log(`backend: ${backend.line}`);
  const data = loadMnist();
  console.log(
    `data: ${data.train.count} training and ${data.test.count} test digits (the mnist package, pixels scaled to [0, 1])`,
  );
  const t0 = performance.now();
  const result = await train({
    data,
    hidden: o.hidden,
    epochs: o.epochs,
    batchSize: o.batchSize,
    lr: o.lr,
    optimizer: o.optimizer,
    schedule: o.schedule,
    shift: o.shift,
    seed: o.seed,
    logEvery: o.logEvery,
    maxStepsPerEpoch: o.steps,
    jit: o.jit,
    onLoss: (p) =>
      bar.update({
        epoch: p.epoch,
        epochs: o.epochs,
        step: p.step,
        steps: p.stepsInEpoch,
        stepsPerSec: p.stepsPerSec,
        loss: p.loss,
      }),
    onEpoch: (e) =>
      bar.line(
        `epoch ${String(e.epoch).padStart(String(o.epochs).length)}/${o.epochs}  train loss ${e.trainLoss.toFixed(4)}  test accuracy ${pct(e.testAccuracy)}  ${e.seconds.toFixed(1)} s  (${e.stepsPerSec.toFixed(1)} steps/s)`,
      ),
  });
  const total = (performance.now() - t0) / 1000;
  console.log(`final test accuracy ${pct(result.testAccuracy)} after ${result.steps} steps in ${total.toFixed(1)} s`);
  const out = resolve(o.out);
  mkdirSync(dirname(out), { recursive: true });
  const bytes = await saveModel(result.model, { hidden: o.hidden, testAccuracy: result.testAccuracy });
  writeFileSync(out, bytes);
  console.log(`saved the model to ${o.out} (${(bytes.length / 1024).toFixed(0)} KiB, safetensors)`);
  console.log(`score it again: npm run mlp -- --predict ${o.out}`);
}

async function runPredict(o: CliOptions, path: string): Promise<void> {
  const backend = await setupBackend(o.backend);
  console.log(`backend: ${backend.line}`);
  const r = await predictFile(path, loadMnist());
  console.log(`model ${path}: ${r.architecture}`);
  console.log(
    `test accuracy ${pct(r.testAccuracy)} on ${r.count} test digits${r.savedAccuracy !== undefined ? ` (${pct(r.savedAccuracy)} when saved)` : ''}`,
  );
}

async function main(): Promise<void> {
  let o: CliOptions;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof ArgError) {
      console.error(`mlp: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  if (o.help) {
    console.log(helpText());
    return;
  }
  if (o.predict) await runPredict(o, o.predict);
  else await runTrain(o);
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    // The message names what went wrong; the stack only matters when debugging Surf itself.
    console.error(process.env.DEBUG ? (e.stack ?? String(e)) : `mlp: ${e.message}`);
    process.exit(1);
  },
);
