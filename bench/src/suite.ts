/**
 * `npm run bench`: Surf against its peers in one run, on one adapter.
 *
 *   npm run bench -- [--quick] [--only=matmul,reduce,...] [--backend=webgpu|cpu]
 *                    [--peers=tfjs,jax,torch,ort | --no-peers] [--json path] [--list]
 *
 * GPU rows compare Surf's WebGPU backend with TF.js (webgpu) and jax-js (webgpu) on the same
 * Dawn adapter, and PyTorch CUDA when python3 has it; CPU rows compare Surf's CPU backend with
 * TF.js cpu/wasm, jax-js wasm and onnxruntime-node (native, CPU EP). Every figure is checked against a float64 reference (kernel
 * rows) or a falling loss (training rows). See docs/performance.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AdapterFacts, adapterLabel, machineFacts, peerVersions, setupWebGPU } from './env';
import { Framework, FrameworkId, NotAvailable, RowInputs } from './framework';
import { JaxFramework } from './peers/jax';
import { OrtFramework } from './peers/ort';
import { TfjsFramework } from './peers/tfjs';
import { LABELS, Outcome, RowResult, fmtNum, isMeasured, notes, ratios, rowJson, table } from './report';
import { GPT_FALLBACK, GROUPS, GptBenchConfig, Row, buildRows, toUnit } from './rows';
import { SurfFramework } from './surf';
import { checkTargets, targetLines } from './targets';
import { FULL_TIMING, QUICK_TIMING, timeRunner } from './timing';
import { runTorch, torchUnavailable } from './torch';
import { JobProgress } from './job-progress';
import { zooSummary } from './zoo/summary';

interface Options {
  quick: boolean;
  json: string;
  only: string[] | null;
  backend: 'webgpu' | 'cpu' | null;
  peers: Set<string>;
  list: boolean;
  help: boolean;
  torchTimeoutS: number;
  /** Limit for one framework on one row (prepare, timing, check); 0 = none. */
  rowTimeoutS: number;
  /** The CPU backend's threads (undefined: its default). */
  cpuThreads?: number;
  /** Stop starting measurements this many seconds after start (write what there is); 0 = none. */
  deadlineS: number;
}

const USAGE = `usage: npm run bench -- [options]
  --quick               small sizes, few iterations (SwiftShader / CPU boxes: a few minutes)
  --only=A,B            groups (${GROUPS.join(', ')}) or row-id prefixes (e.g. matmul/1024; a
                        trailing $ matches the id exactly: zoo/ffn$)
  --backend=webgpu|cpu  only the GPU rows or only the CPU rows
  --peers=tfjs,jax,torch,ort  which peers run (default all); --no-peers for Surf alone
  --json PATH           where the JSON goes (default bench/results/latest.json)
  --torch-timeout=S     limit for the PyTorch run (default 300 s)
  --row-timeout=S       limit for one framework on one row (default 120 s); a framework that
                        times out is skipped for the rest of the run
  --deadline=S          start no measurement after S seconds; the tables and JSON still come
                        out (the GPU host's 10-minute limit: use --deadline=500)
  --cpu-threads=N       threads of Surf's CPU backend (default: min(cores, 4))
  --list                print the rows and exit`;

function parseArgs(argv: string[]): Options {
  const o: Options = {
    quick: false,
    json: 'bench/results/latest.json',
    only: null,
    backend: null,
    peers: new Set(['tfjs', 'jax', 'torch', 'ort']),
    list: false,
    help: false,
    torchTimeoutS: 300,
    rowTimeoutS: 120,
    deadlineS: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [k, v] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => v ?? argv[++i];
    switch (k) {
      case '--quick':
        o.quick = true;
        break;
      case '--json':
        o.json = val();
        break;
      case '--only':
        o.only = val()
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case '--backend': {
        const b = val();
        if (b !== 'webgpu' && b !== 'cpu') throw new Error(`--backend: expected webgpu or cpu, got ${b}`);
        o.backend = b;
        break;
      }
      case '--peers':
        o.peers = new Set(
          val()
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        );
        break;
      case '--no-peers':
        o.peers = new Set();
        break;
      case '--torch-timeout':
        o.torchTimeoutS = Number(val());
        break;
      case '--row-timeout':
        o.rowTimeoutS = Number(val());
        break;
      case '--deadline':
        o.deadlineS = Number(val());
        break;
      case '--cpu-threads':
        o.cpuThreads = Number(val());
        break;
      case '--list':
        o.list = true;
        break;
      case '-h':
      case '--help':
        o.help = true;
        break;
      default:
        throw new Error(`unknown option ${a}\n${USAGE}`);
    }
  }
  return o;
}

function selectRows(all: Row[], o: Options): Row[] {
  return all.filter((r) => {
    if (o.backend === 'webgpu' && r.device !== 'gpu') return false;
    if (o.backend === 'cpu' && r.device !== 'cpu') return false;
    if (!o.only) return true;
    return o.only.some((s) => (s.endsWith('$') ? r.id === s.slice(0, -1) : r.group === s || r.id.startsWith(s)));
  });
}

const log = (s: string) => console.log(`# ${s}`);

/**
 * The GPT row's model and optimiser settings: examples/gpt's DEFAULT_TRAIN through the example's
 * package exports, so the row follows the example; the vocabulary size is the Brown corpus's
 * (the corpus itself is not on the GPU host). The fallback copy when the example is missing.
 */
async function gptConfig(): Promise<GptBenchConfig> {
  try {
    const m = (await import('@surf/example-gpt/train')) as {
      DEFAULT_TRAIN?: Partial<Record<keyof GptBenchConfig, number>>;
    };
    const d = m.DEFAULT_TRAIN;
    if (!d) return GPT_FALLBACK;
    const pick = (k: keyof GptBenchConfig) =>
      typeof d[k] === 'number' ? (d[k] as number) : (GPT_FALLBACK[k] as number);
    return {
      ...GPT_FALLBACK,
      blockSize: pick('blockSize'),
      nEmbd: pick('nEmbd'),
      nHead: pick('nHead'),
      nLayer: pick('nLayer'),
      batchSize: pick('batchSize'),
      lr: pick('lr'),
      warmup: pick('warmup'),
      steps: pick('steps'),
      weightDecay: pick('weightDecay'),
      clip: pick('clip'),
      source: 'examples/gpt DEFAULT_TRAIN',
    };
  } catch (e) {
    log(
      `GPT row: the example's defaults did not load (${(e as Error).message.split('\n')[0]}); using ${GPT_FALLBACK.source}`,
    );
    return GPT_FALLBACK;
  }
}

const TIMED_OUT = Symbol('timed out');

/** Resolves to TIMED_OUT when `p` takes longer than `seconds` (0: never); `p` is left running. */
function withTimeout<T>(p: Promise<T>, seconds: number): Promise<T | typeof TIMED_OUT> {
  if (!(seconds > 0)) return p;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), seconds * 1000);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/**
 * Rows whose work is a JavaScript loop warm up this long first (timing.ts, `warmupMs`), every
 * framework alike, PyTorch included: V8 tiers the loop up over its first thousands of steps,
 * and a row measures the steady state. CPU training rows 4 s (an eager loop without tidy takes
 * ~3,000 steps, ~3 s, to get there: docs/tuning-log.md, "CPU threads and FMA"); GPU training,
 * model and dispatch rows 2 s (their repeats fell 40-50% from the first to the last without
 * it: docs/tuning-log.md, "Warm-up of the GPU rows").
 */
function warmupMsOf(row: Row, quick: boolean): number {
  if (quick) return 0;
  if (row.kind === 'train') return row.device === 'cpu' ? 4000 : 2000;
  return row.kind === 'overhead' || row.kind === 'gpt' || row.kind === 'cnn' || row.kind === 'zoo' ? 2000 : 0;
}

async function measure(fw: Framework, row: Row, inputs: RowInputs, quick: boolean): Promise<Outcome> {
  let runner;
  try {
    runner = await fw.prepare(row, inputs);
  } catch (e) {
    return {
      na: e instanceof NotAvailable ? e.message : `prepare failed: ${(e as Error).message?.split('\n')[0] ?? e}`,
    };
  }
  try {
    if (runner.reported) {
      await runner.step(0);
      await runner.step(1);
      const value = runner.reported();
      const check = await runner.check();
      return { value, secondsPerIter: NaN, iters: 1, repeats: 1, samples: [], check };
    }
    const timing = { ...(quick ? QUICK_TIMING : FULL_TIMING), warmupMs: warmupMsOf(row, quick) };
    const t = await timeRunner(runner, timing);
    const check = await runner.check();
    return {
      value: toUnit(row, t.secondsPerIter),
      secondsPerIter: t.secondsPerIter,
      iters: t.iters,
      repeats: t.repeats,
      samples: t.samples,
      check,
    };
  } catch (e) {
    return { na: `failed: ${(e as Error).message?.split('\n')[0] ?? e}` };
  } finally {
    try {
      await runner.dispose();
    } catch {
      /* a failed run may leave half-made state */
    }
    await fw.afterRow?.();
  }
}

function describeOutcome(fw: FrameworkId, row: Row, o: Outcome): string {
  if (!isMeasured(o)) return `${LABELS[fw]} n/a`;
  const c = o.check;
  const chk =
    c.relErr !== undefined
      ? `err ${c.relErr.toExponential(1)}`
      : c.lossFirst !== undefined
        ? `loss ${c.lossFirst.toFixed(3)}->${c.lossLast?.toFixed(3)}`
        : '';
  return `${LABELS[fw]} ${fmtNum(o.value)} ${row.unit}${chk ? ` (${chk})` : ''}${c.ok ? '' : ' WRONG'}`;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) {
    console.log(USAGE);
    return;
  }
  const rows = selectRows(buildRows(o.quick, { gpt: await gptConfig() }), o);
  if (o.list) {
    for (const r of rows) console.log(`${r.id.padEnd(40)} ${r.unit.padEnd(8)} ${r.label}`);
    return;
  }
  const machine = machineFacts();
  log(
    `Surf bench ${o.quick ? '--quick' : '(full)'}: ${rows.length} rows; ${machine.cpu} x${machine.cores}, ${machine.hostname}, Node ${machine.node}${machine.gpu ? `, GPU ${machine.gpu}` : ''}`,
  );

  const wantGpu = rows.some((r) => r.device === 'gpu');
  const wantCpu = rows.some((r) => r.device === 'cpu');
  let adapter: AdapterFacts | null = null;
  let gpuError: string | null = null;
  if (wantGpu) {
    const g = await setupWebGPU(log);
    if ('error' in g) gpuError = g.error;
    else adapter = g.facts;
    log(adapter ? `adapter: ${adapterLabel(adapter)}` : `no WebGPU: ${gpuError}`);
  }

  const frameworks: Framework[] = [];
  if (wantGpu) {
    frameworks.push(new SurfFramework('webgpu', log));
    if (o.peers.has('tfjs')) frameworks.push(new TfjsFramework('webgpu', log));
    if (o.peers.has('jax')) frameworks.push(new JaxFramework('webgpu'));
  }
  if (wantCpu) {
    frameworks.push(new SurfFramework('cpu', log, o.cpuThreads));
    if (o.peers.has('tfjs')) frameworks.push(new TfjsFramework('cpu', log), new TfjsFramework('wasm', log));
    if (o.peers.has('jax')) frameworks.push(new JaxFramework('wasm'));
    if (o.peers.has('ort')) frameworks.push(new OrtFramework());
  }

  const results: RowResult[] = rows.map((row) => ({ row, results: {} }));
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;

  // PyTorch first, alone on the GPU (before any WebGPU device exists), so that the reference
  // figures are there even if the run is cut short.
  let torchEnv: Record<string, unknown> | null = null;
  const gpuRows = rows.filter((r) => r.device === 'gpu' && r.kind !== 'example');
  if (o.peers.has('torch') && gpuRows.length) {
    const why = torchUnavailable();
    if (why) {
      log(`PyTorch not run: ${why}`);
      torchEnv = { skipped: why };
    } else {
      const t = runTorch(
        gpuRows,
        o.quick ? QUICK_TIMING : FULL_TIMING,
        o.quick,
        log,
        o.torchTimeoutS,
        Object.fromEntries(gpuRows.map((r) => [r.id, warmupMsOf(r, o.quick)])),
      );
      if ('error' in t) {
        log(`PyTorch failed: ${t.error}`);
        torchEnv = { error: t.error };
        for (const r of results) if (gpuRows.includes(r.row)) r.results['torch-cuda'] = { na: t.error };
      } else {
        torchEnv = t.env;
        for (const r of results) {
          const got = t.results[r.row.id];
          if (got) r.results['torch-cuda'] = got;
        }
      }
    }
  }

  const hung = new Map<FrameworkId, string>();
  // progress: one unit per (row, framework) measurement
  const bar = new JobProgress(
    'bench',
    results.reduce((a, rr) => a + frameworks.filter((f) => f.device === rr.row.device).length, 0),
    'runs',
  );
  let runs = 0;
  for (const rr of results) {
    const row = rr.row;
    const inputs = new RowInputs(row, o.quick);
    for (const fw of frameworks.filter((f) => f.device === row.device)) {
      bar.update(runs++);
      if (row.kind === 'example' && !fw.id.startsWith('surf')) continue;
      if (row.device === 'gpu' && gpuError) {
        rr.results[fw.id] = { na: `no WebGPU adapter: ${gpuError}` };
        continue;
      }
      if (hung.has(fw.id)) {
        rr.results[fw.id] = { na: `skipped: ${hung.get(fw.id)}` };
        continue;
      }
      if (o.deadlineS > 0 && elapsed() > o.deadlineS) {
        rr.results[fw.id] = { na: `skipped: past the --deadline of ${o.deadlineS} s` };
        continue;
      }
      const out = await withTimeout(measure(fw, row, inputs, o.quick), o.rowTimeoutS);
      if (out === TIMED_OUT) {
        const why = `timed out after ${o.rowTimeoutS} s on ${row.id}`;
        hung.set(fw.id, why);
        rr.results[fw.id] = { na: why };
        bar.line(`# ${fw.label} ${why}; it is skipped from now on`);
      } else {
        rr.results[fw.id] = out;
      }
    }
    const parts = (Object.entries(rr.results) as [FrameworkId, Outcome][])
      .filter(([fw]) => fw !== 'torch-cuda' || isMeasured(rr.results[fw]))
      .map(([fw, out]) => describeOutcome(fw, row, out));
    bar.line(`# ${row.id}: ${parts.join(' | ')}  [${elapsed().toFixed(0)} s]`);
  }
  bar.clear();

  const present = new Set<FrameworkId>();
  for (const r of results) for (const k of Object.keys(r.results)) present.add(k as FrameworkId);
  const versions = peerVersions();
  const header = [
    `machine: ${machine.cpu} x${machine.cores}, ${machine.memoryGiB} GiB, ${machine.hostname}, ${machine.os}${machine.gpu ? `; nvidia-smi: ${machine.gpu}` : ''}`,
    `adapter: ${adapter ? adapterLabel(adapter) : (gpuError ?? '(no GPU rows)')}`,
    `node ${machine.node}; TF.js ${versions['@tensorflow/tfjs-core'] ?? '?'}; jax-js ${versions['@jax-js/jax'] ?? '?'}; webgpu (Dawn) ${versions.webgpu ?? '?'}${torchEnv && 'torch' in torchEnv ? `; torch ${torchEnv.torch} (${torchEnv.device})` : ''}; ${machine.date}; ${o.quick ? 'quick' : 'full'} mode`,
    'Surf/X: how many times faster Surf is than X (> 1: Surf faster; for µs/op the inverse ratio).',
  ];
  const gpuTable = table(results, 'gpu', present);
  const cpuTable = table(results, 'cpu', present);
  console.log('');
  for (const h of header) console.log(h);
  if (gpuTable)
    console.log(
      `\nGPU rows (${adapter ? adapterLabel(adapter) : 'no adapter'}${present.has('torch-cuda') ? '; PyTorch on CUDA' : ''}):\n\n${gpuTable}`,
    );
  if (cpuTable) console.log(`\nCPU rows (${machine.cpu} x${machine.cores}):\n\n${cpuTable}`);
  const n = notes(results);
  if (n.length) console.log(`\n${n.join('\n')}`);
  const zoo = zooSummary(results);
  if (zoo.length) console.log(`\n${zoo.join('\n')}`);
  // The targets are GPU-host figures: a --quick run (small sizes) is not held to them.
  const tl = o.quick ? [] : targetLines(results);
  if (tl.length) console.log(`\nTargets (issues 7, 12-14; '?' = no peer figure in this run):\n${tl.join('\n')}`);

  const json = {
    suite: 'surf-bench',
    schema: 1,
    mode: o.quick ? 'quick' : 'full',
    machine,
    adapter,
    versions,
    torch: torchEnv,
    frameworks: Object.fromEntries(frameworks.map((f) => [f.id, f.describe()])),
    rows: results.map(rowJson),
    targets: checkTargets(results),
    summary: results.map((r) => ({
      id: r.row.id,
      unit: r.row.unit,
      surf: (() => {
        const s = r.results[r.row.device === 'gpu' ? 'surf-webgpu' : 'surf-cpu'];
        return isMeasured(s) ? s.value : null;
      })(),
      ratios: ratios(r),
    })),
    seconds: elapsed(),
  };
  const path = resolve(o.json);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(json, null, 1));
  console.log(`\nJSON: ${path} (${json.seconds.toFixed(0)} s)`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
