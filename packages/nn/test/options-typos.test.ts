import { CpuBackend, SurfTypeError, setCpuThreads } from '@surf/core';
import { autoTune, createWebGPUBackend, requestWebGPUAdapter, tuneMatmul } from '@surf/webgpu';
import * as surf from '@surf/nn';
import {
  DataLoader,
  TensorDataset,
  ValueError,
  nn,
  optim,
  randomSplit,
  saveCheckpoint,
  loadCheckpoint,
  tensor,
  zeros,
} from '@surf/nn';
import { backends, on, testEach } from './helpers';

// Every public function or constructor that takes an options object, called with one
// misspelt key: each must raise a ValueError that names the function, the key and the known
// key it most likely meant. A function that forgets the strict parser runs silently with its
// defaults and fails its row. The coverage checks at the end make sure every optimizer,
// scheduler and loss is in the table, so one added later without the parser fails too.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

type Row = [name: string, call: () => unknown, key: string, suggestion: string];

const param = () => tensor([1, 2], { requiresGrad: true });
const model = () => new nn.Linear(2, 2);
const x4 = () => zeros([1, 1, 3, 3]);
const w4 = () => zeros([1, 1, 2, 2]);
const sgd = () => new optim.SGD([param()], { lr: 0.1 });

function rows(): Row[] {
  return [
    // optimizers, the examples first
    ['Adam', () => new optim.Adam([param()], { lr: 0.01, weight_decay: 0.1 } as never), 'weight_decay', 'weightDecay'],
    ['AdamW', () => new optim.AdamW([param()], { amsgard: true } as never), 'amsgard', 'amsgrad'],
    ['SGD', () => new optim.SGD([param()], { momentom: 0.9 } as never), 'momentom', 'momentum'],
    ['RMSprop', () => new optim.RMSprop([param()], { centred: true } as never), 'centred', 'centered'],
    ['Adagrad', () => new optim.Adagrad([param()], { lr_decay: 0.1 } as never), 'lr_decay', 'lrDecay'],
    [
      'SGD: parameter group 0',
      () => new optim.SGD([{ params: [param()], weight_decay: 0.1 }] as never, { lr: 0.1 }),
      'weight_decay',
      'weightDecay',
    ],
    ['Adamax', () => new optim.Adamax([param()], { weight_decay: 0.1 } as never), 'weight_decay', 'weightDecay'],
    ['Adadelta', () => new optim.Adadelta([param()], { rhoo: 0.9 } as never), 'rhoo', 'rho'],
    ['NAdam', () => new optim.NAdam([param()], { momentum_decay: 0.004 } as never), 'momentum_decay', 'momentumDecay'],
    ['RAdam', () => new optim.RAdam([param()], { betass: [0.9, 0.99] } as never), 'betass', 'betas'],
    ['LBFGS', () => new optim.LBFGS([param()], { max_iter: 5 } as never), 'max_iter', 'maxIter'],
    // schedulers
    ['StepLR', () => new optim.StepLR(sgd(), { stepSize: 2, gama: 0.5 } as never), 'gama', 'gamma'],
    ['CosineAnnealingLR', () => new optim.CosineAnnealingLR(sgd(), { T_max: 10 } as never), 'T_max', 'tMax'],
    ['LinearWarmup', () => new optim.LinearWarmup(sgd(), { warmup_steps: 3 } as never), 'warmup_steps', 'warmupSteps'],
    [
      'MultiStepLR',
      () => new optim.MultiStepLR(sgd(), { milestone: [1], gamma: 0.5 } as never),
      'milestone',
      'milestones',
    ],
    ['LambdaLR', () => new optim.LambdaLR(sgd(), { lr_lambda: () => 1 } as never), 'lr_lambda', 'lrLambda'],
    [
      'OneCycleLR',
      () => new optim.OneCycleLR(sgd(), { maxLr: 1, totalSteps: 10, pct_start: 0.2 } as never),
      'pct_start',
      'pctStart',
    ],
    ['ReduceLROnPlateau', () => new optim.ReduceLROnPlateau(sgd(), { patiense: 2 } as never), 'patiense', 'patience'],
    ['ExponentialLR', () => new optim.ExponentialLR(sgd(), { gama: 0.9 } as never), 'gama', 'gamma'],
    ['LinearLR', () => new optim.LinearLR(sgd(), { start_factor: 0.5 } as never), 'start_factor', 'startFactor'],
    ['ConstantLR', () => new optim.ConstantLR(sgd(), { total_iters: 3 } as never), 'total_iters', 'totalIters'],
    [
      'CosineAnnealingWarmRestarts',
      () => new optim.CosineAnnealingWarmRestarts(sgd(), { t0: 5, eta_min: 0.01 } as never),
      'eta_min',
      'etaMin',
    ],
    [
      'SequentialLR',
      () => new optim.SequentialLR(sgd(), { schedulers: [], milestone: [] } as never),
      'milestone',
      'milestones',
    ],
    ['clipGradNorm', () => optim.clipGradNorm([param()], 1, { norm_type: 2 } as never), 'norm_type', 'normType'],
    // loss functions and loss modules
    [
      'crossEntropy',
      () => surf.crossEntropy(zeros([2, 3]), tensor([0, 1], { dtype: 'int32' }), { label_smoothing: 0.1 } as never),
      'label_smoothing',
      'labelSmoothing',
    ],
    [
      'nllLoss',
      () => surf.nllLoss(zeros([2, 3]), tensor([0, 1]), { reductoin: 'sum' } as never),
      'reductoin',
      'reduction',
    ],
    ['mseLoss', () => surf.mseLoss(zeros([2]), zeros([2]), { reductio: 'sum' } as never), 'reductio', 'reduction'],
    ['l1Loss', () => surf.l1Loss(zeros([2]), zeros([2]), { Reduction: 'sum' } as never), 'Reduction', 'reduction'],
    [
      'binaryCrossEntropyWithLogits',
      () => surf.binaryCrossEntropyWithLogits(zeros([2]), zeros([2]), { pos_weight: 2 } as never),
      'pos_weight',
      'posWeight',
    ],
    [
      'binaryCrossEntropy',
      () => surf.binaryCrossEntropy(zeros([2]), zeros([2]), { reduce: 'sum' } as never),
      'reduce',
      'reduction',
    ],
    ['huberLoss', () => surf.huberLoss(zeros([2]), zeros([2]), { delt: 2 } as never), 'delt', 'delta'],
    ['smoothL1Loss', () => surf.smoothL1Loss(zeros([2]), zeros([2]), { beat: 2 } as never), 'beat', 'beta'],
    [
      'klDivLoss',
      () => surf.klDivLoss(zeros([2]), zeros([2]), { log_target: true } as never),
      'log_target',
      'logTarget',
    ],
    [
      'CrossEntropyLoss',
      () => new nn.CrossEntropyLoss({ label_smoothing: 0.1 } as never),
      'label_smoothing',
      'labelSmoothing',
    ],
    ['NLLLoss', () => new nn.NLLLoss({ reductoin: 'sum' } as never), 'reductoin', 'reduction'],
    ['MSELoss', () => new nn.MSELoss({ reductoin: 'sum' } as never), 'reductoin', 'reduction'],
    ['L1Loss', () => new nn.L1Loss({ reductoin: 'sum' } as never), 'reductoin', 'reduction'],
    ['BCELoss', () => new nn.BCELoss({ reductoin: 'sum' } as never), 'reductoin', 'reduction'],
    ['BCEWithLogitsLoss', () => new nn.BCEWithLogitsLoss({ pos_weight: 2 } as never), 'pos_weight', 'posWeight'],
    ['HuberLoss', () => new nn.HuberLoss({ delt: 2 } as never), 'delt', 'delta'],
    ['SmoothL1Loss', () => new nn.SmoothL1Loss({ beat: 2 } as never), 'beat', 'beta'],
    ['KLDivLoss', () => new nn.KLDivLoss({ log_target: true } as never), 'log_target', 'logTarget'],
    // layers
    ['Linear', () => new nn.Linear(2, 2, { biass: false } as never), 'biass', 'bias'],
    ['Conv1d', () => new nn.Conv1d(1, 1, 2, { paddding: 1 } as never), 'paddding', 'padding'],
    ['Conv2d', () => new nn.Conv2d(1, 1, 2, { paddding: 1 } as never), 'paddding', 'padding'],
    [
      'ConvTranspose2d',
      () => new nn.ConvTranspose2d(1, 1, 2, { output_padding: 1 } as never),
      'output_padding',
      'outputPadding',
    ],
    ['MaxPool2d', () => new nn.MaxPool2d(2, { ceil_mode: true } as never), 'ceil_mode', 'ceilMode'],
    [
      'AvgPool2d',
      () => new nn.AvgPool2d(2, { count_include_pad: false } as never),
      'count_include_pad',
      'countIncludePad',
    ],
    ['BatchNorm1d', () => new nn.BatchNorm1d(2, { momentm: 0.2 } as never), 'momentm', 'momentum'],
    [
      'BatchNorm2d',
      () => new nn.BatchNorm2d(2, { track_running_stats: false } as never),
      'track_running_stats',
      'trackRunningStats',
    ],
    [
      'LayerNorm',
      () => new nn.LayerNorm(2, { elementwise_affine: false } as never),
      'elementwise_affine',
      'elementwiseAffine',
    ],
    ['RMSNorm', () => new nn.RMSNorm(2, { epss: 1e-6 } as never), 'epss', 'eps'],
    ['GroupNorm', () => new nn.GroupNorm(1, 2, { afine: false } as never), 'afine', 'affine'],
    ['GELU', () => new nn.GELU({ aproximate: 'tanh' } as never), 'aproximate', 'approximate'],
    [
      'MultiheadAttention',
      () => new nn.MultiheadAttention(4, 2, { batch_first: false } as never),
      'batch_first',
      'batchFirst',
    ],
    [
      'MultiheadAttention.forward',
      () =>
        new nn.MultiheadAttention(4, 2).forward(zeros([1, 2, 4]), undefined, undefined, { is_causal: true } as never),
      'is_causal',
      'isCausal',
    ],
    // module methods
    [
      'Linear.registerBuffer',
      () => model().registerBuffer('b', null, { persistant: false } as never),
      'persistant',
      'persistent',
    ],
    ['loadStateDict', () => model().loadStateDict({}, { strickt: false } as never), 'strickt', 'strict'],
    ['Linear.summary', () => model().summary([1, 2], { dtyp: 'float32' } as never), 'dtyp', 'dtype'],
    ['init.kaimingUniform', () => nn.init.kaimingUniform(zeros([2, 2]), { mod: 'fanIn' } as never), 'mod', 'mode'],
    // data
    ['DataLoader', () => new DataLoader(zeros([4, 2]), { batchSize: 2, shufle: true } as never), 'shufle', 'shuffle'],
    ['randomSplit', () => randomSplit(new TensorDataset(zeros([4, 2])), [2, 2], { sed: 1 } as never), 'sed', 'seed'],
    // functional ops
    [
      'conv1d',
      () => surf.conv1d(zeros([1, 1, 3]), zeros([1, 1, 2]), null, { strides: 1 } as never),
      'strides',
      'stride',
    ],
    ['conv2d', () => surf.conv2d(x4(), w4(), null, { paddding: 1 } as never), 'paddding', 'padding'],
    ['convTranspose2d', () => surf.convTranspose2d(x4(), w4(), null, { group: 1 } as never), 'group', 'groups'],
    ['maxPool2d', () => surf.maxPool2d(x4(), 2, { dilaton: 1 } as never), 'dilaton', 'dilation'],
    ['avgPool2d', () => surf.avgPool2d(x4(), 2, { ceil_mode: true } as never), 'ceil_mode', 'ceilMode'],
    [
      'batchNorm',
      () => surf.batchNorm(zeros([2, 2]), null, null, null, null, { trainig: true } as never),
      'trainig',
      'training',
    ],
    [
      'scaledDotProductAttention',
      () => surf.scaledDotProductAttention(zeros([1, 2]), zeros([1, 2]), zeros([1, 2]), { is_causal: true } as never),
      'is_causal',
      'causal',
    ],
    [
      'crossEntropy',
      () =>
        surf.softmaxCrossEntropy(zeros([2, 3]), tensor([0, 1], { dtype: 'int32' }), { labelSmoothin: 0.1 } as never),
      'labelSmoothin',
      'labelSmoothing',
    ],
    [
      'multinomial',
      () => surf.multinomial(tensor([0.5, 0.5]), 1, { replacment: true } as never),
      'replacment',
      'replacement',
    ],
    ['pad', () => surf.pad(zeros([2, 2]), [1, 1], { mdoe: 'reflect' } as never), 'mdoe', 'mode'],
    ['sort', () => surf.sort(zeros([3]), -1, { descendng: true } as never), 'descendng', 'descending'],
    ['topk', () => surf.topk(zeros([3]), 1, -1, { larges: true } as never), 'larges', 'largest'],
    [
      'backward',
      () =>
        param()
          .sum()
          .backward(undefined, { retain_graph: true } as never),
      'retain_graph',
      'retainGraph',
    ],
    // creation
    ['tensor', () => tensor([1], { requires_grad: true } as never), 'requires_grad', 'requiresGrad'],
    ['zeros', () => zeros([1], { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['ones', () => surf.ones([1], { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['full', () => surf.full([1], 2, { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['zerosLike', () => surf.zerosLike(zeros([1]), { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['onesLike', () => surf.onesLike(zeros([1]), { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['fullLike', () => surf.fullLike(zeros([1]), 2, { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['arange', () => surf.arange(0, 3, 1, { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['linspace', () => surf.linspace(0, 1, 3, { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['eye', () => surf.eye(2, 2, { dtyp: 'int32' } as never), 'dtyp', 'dtype'],
    ['rand', () => surf.rand([2], { requires_grad: true } as never), 'requires_grad', 'requiresGrad'],
    ['randn', () => surf.randn([2], { requires_grad: true } as never), 'requires_grad', 'requiresGrad'],
    // runtime
    ['jit', () => surf.jit(() => zeros([1]), { max_records: 2 } as never), 'max_records', 'maxRecords'],
    ['configureMemory', () => surf.configureMemory({ autoCollct: false } as never), 'autoCollct', 'autoCollect'],
    ['CpuBackend', () => new CpuBackend({ thread: 2 } as never), 'thread', 'threads'],
    ['setCpuThreads', () => setCpuThreads({ thread: 2 } as never), 'thread', 'threads'],
  ];
}

function expectTypo(e: unknown, name: string, key: string, suggestion: string): void {
  expect(e).toBeInstanceOf(ValueError);
  expect((e as Error).message).toContain(`${name}: unknown option '${key}'; did you mean '${suggestion}'?`);
}

testEach(
  ['cpu', 'webgpu'],
  'every options argument refuses a misspelt key and suggests the known one',
  async (kind) => {
    await on(kind === 'cpu' ? B.cpu : B.gpu(), () => {
      for (const [name, call, key, suggestion] of rows()) {
        let thrown: unknown = 'nothing was thrown';
        try {
          call();
        } catch (e) {
          thrown = e;
        }
        try {
          expectTypo(thrown, name, key, suggestion);
        } catch (e) {
          throw new Error(`row ${name}: ${(e as Error).message}`);
        }
      }
    });
  },
);

testEach(['cpu', 'webgpu'], 'async entry points refuse a misspelt key too', async (kind) => {
  await on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
    const m = model();
    const cases: [string, () => Promise<unknown>, string, string][] = [
      ['init', () => surf.init({ backnd: 'webgpu' } as never), 'backnd', 'backend'],
      [
        'createWebGPUBackend',
        () => createWebGPUBackend({ powerPreferance: 'low-power' } as never),
        'powerPreferance',
        'powerPreference',
      ],
      ['saveCheckpoint', () => saveCheckpoint({ model: m, optimiser: sgd() } as never), 'optimiser', 'optimizer'],
      [
        'loadCheckpoint',
        async () => loadCheckpoint(new Uint8Array(8), { model: m, schedular: null } as never),
        'schedular',
        'scheduler',
      ],
      [
        'requestWebGPUAdapter',
        () => requestWebGPUAdapter({ dawn_toggles: [] } as never),
        'dawn_toggles',
        'dawnToggles',
      ],
      ['tuneMatmul', () => tuneMatmul(null as never, { min_ms: 5 } as never), 'min_ms', 'minMs'],
      ['autoTune', () => autoTune(null as never, { cach: 'x' } as never), 'cach', 'cache'],
      ['gradcheck', () => surf.gradcheck((a) => a, [param()], { atl: 1e-3 } as never), 'atl', 'atol'],
      ['runGradcheckSuite', () => surf.runGradcheckSuite({ filtr: 'relu' } as never), 'filtr', 'filter'],
    ];
    for (const [name, call, key, suggestion] of cases) {
      const e = await call().then(
        () => 'nothing was thrown',
        (err: unknown) => err,
      );
      try {
        expectTypo(e, name, key, suggestion);
      } catch (err) {
        throw new Error(`row ${name}: ${(err as Error).message}`);
      }
    }
  });
});

test('every optimizer, scheduler and loss is in the table', () => {
  const names = new Set(rows().map(([n]) => n));
  const ctor = (v: unknown): v is { prototype: unknown; name: string } => typeof v === 'function';
  const optimizers = Object.values(optim).filter((v) => ctor(v) && v.prototype instanceof optim.Optimizer);
  const schedulers = Object.values(optim).filter(
    (v) => ctor(v) && (v.prototype instanceof optim.LRScheduler || v === optim.ReduceLROnPlateau),
  );
  const lossModules = Object.entries(nn).filter(([k, v]) => ctor(v) && k.endsWith('Loss'));
  const lossFns = Object.keys(nn.functional).filter((k) => /Loss$|Entropy/.test(k));
  expect(optimizers.length).toBeGreaterThanOrEqual(5);
  expect(schedulers.length).toBeGreaterThanOrEqual(7);
  expect(lossModules.length).toBeGreaterThanOrEqual(9);
  for (const c of [...optimizers, ...schedulers]) expect([c.name, names.has(c.name)]).toEqual([c.name, true]);
  for (const [k] of lossModules) expect([k, names.has(k)]).toEqual([k, true]);
  for (const k of lossFns) expect([k, names.has(k)]).toEqual([k, true]);
});

describe('values are checked by rule in the same place', () => {
  test('ranges and types', () => {
    const p = param();
    const cases: [() => unknown, RegExp, typeof ValueError | typeof SurfTypeError][] = [
      [() => new optim.Adam([p], { lr: -0.1 }), /Adam: option 'lr' must be a number >= 0; got -0.1/, ValueError],
      [
        () => new optim.Adam([p], { betas: [0.9, 1] }),
        /Adam: option 'betas' must be two numbers in \[0, 1\)/,
        ValueError,
      ],
      [() => new optim.Adam([p], { betas: 0.9 as never }), /Adam: option 'betas' must be an array/, SurfTypeError],
      [
        () => new optim.SGD([p], { momentum: '0.9' as never }),
        /SGD: option 'momentum' must be a number/,
        SurfTypeError,
      ],
      [
        () => new optim.SGD([{ params: [p], lr: -1 }]),
        /SGD: parameter group 0: option 'lr' must be a number >= 0; got -1/,
        ValueError,
      ],
      [() => new nn.LayerNorm(2, { eps: 0 }), /LayerNorm: option 'eps' must be a number > 0; got 0/, ValueError],
      [
        () => new nn.BatchNorm1d(2, { momentum: 1.5 }),
        /BatchNorm1d: option 'momentum' must be a number in \[0, 1\]/,
        ValueError,
      ],
      [
        () => new nn.MultiheadAttention(4, 2, { dropout: 2 }),
        /option 'dropout' must be a number in \[0, 1\]/,
        ValueError,
      ],
      [
        () => surf.crossEntropy(zeros([1, 2]), tensor([0], { dtype: 'int32' }), { labelSmoothing: -0.1 }),
        /crossEntropy: option 'labelSmoothing' must be a number in \[0, 1\]/,
        ValueError,
      ],
      [
        () => surf.mseLoss(zeros([1]), zeros([1]), { reduction: 'avg' as never }),
        /one of "mean", "sum", "none"/,
        ValueError,
      ],
      [
        () => new DataLoader(zeros([2]), { batchSize: 1.5 }),
        /DataLoader: option 'batchSize' must be an integer >= 1/,
        ValueError,
      ],
      [() => zeros([1], { dtype: 'float64' as never }), /unknown dtype "float64"/, surf.DTypeError],
      [() => zeros([1], { requiresGrad: 1 as never }), /zeros: option 'requiresGrad' must be a boolean/, SurfTypeError],
    ];
    for (const [call, msg, Err] of cases) {
      expect(call).toThrow(Err);
      expect(call).toThrow(msg);
    }
  });

  test('a group without overrides keeps the constructor options; a group may override one', () => {
    const a = param();
    const b = param();
    const opt = new optim.SGD([{ params: [a] }, { params: [b], lr: 0.5 }], { lr: 0.1, momentum: 0.9 });
    expect(opt.paramGroups.map((g) => [g.lr, g.momentum])).toEqual([
      [0.1, 0.9],
      [0.5, 0.9],
    ]);
  });
});

// The check itself can fail: a row that throws nothing, or throws without the suggestion.
test('a row fails when nothing is thrown or no key is suggested', () => {
  expect(() => expectTypo('nothing was thrown', 'X', 'k', 'key')).toThrow();
  expect(() => expectTypo(new ValueError("X: unknown option 'k'"), 'X', 'k', 'key')).toThrow();
});
