/**
 * The differential suite's exceptions, in one place.
 *
 * DIVERGENCES: where Surf differs from PyTorch on purpose; each reason is listed in docs/api.md
 * ("Where Surf differs from PyTorch").
 * KNOWN_BUGS: cases that fail because of a known bug (NaN propagation, zero-variance gradients,
 * ...) being fixed elsewhere; a key may start with 'cpu:' or 'webgpu:' when only one backend
 * fails. Remove an entry when its fix lands: the suite then checks the case.
 * GPU_LAYOUTS: ops whose WebGPU run takes only some layouts (each layout of a matmul operand is
 * its own pipeline, 1-2 s to compile on SwiftShader); the others are covered on WebGPU by the op
 * table's cases (core/src/testing/cases), which the WebGPU tests run.
 * TOLERANCES: per-op (or per-case, 'op/layout') tolerances where float32 summation order or approximations differ
 * (default: forward rtol 1e-5 / atol 1e-6, gradients rtol 1e-4 / atol 1e-5).
 */

const AXIS_ON_0D = 'Surf refuses an axis on a 0-d tensor (ShapeError); PyTorch accepts dim 0 / -1 there';
const F32_ACC =
  "Surf accumulates float32 in float32 (as PyTorch on CUDA); PyTorch's CPU accumulates in float64, so rows mixing ±1e30 with small values differ";

export const DIVERGENCES: Record<string, string> = {
  'sumDim/scalar': AXIS_ON_0D,
  'meanDim/scalar': AXIS_ON_0D,
  'maxDim/scalar': AXIS_ON_0D,
  'argminDim/scalar': AXIS_ON_0D,
  'varDim/scalar': AXIS_ON_0D,
  'stdDim/scalar': AXIS_ON_0D,
  'logsumexp/scalar': AXIS_ON_0D,
  'softmax/scalar': AXIS_ON_0D,
  'logSoftmax/scalar': AXIS_ON_0D,
  'prodDim/scalar': AXIS_ON_0D,
  'norm1Dim/scalar': AXIS_ON_0D,
  'varDim/special': F32_ACC,
  'stdDim/special': F32_ACC,
  'cumsum/special': F32_ACC,
  'webgpu:sumDim/special': F32_ACC,
  'webgpu:meanDim/special': F32_ACC,
  'binaryCrossEntropy/special':
    'PyTorch checks 0 <= input <= 1 on the host and raises for NaN; Surf does not read values back to check (NaN in gives NaN out)',
};

const NAN_GRAD = 'NaN/±Inf propagation in gradients (values work: NaN propagation)';

export const KNOWN_BUGS: Record<string, string> = {
  'relu/special': `${NAN_GRAD}: PyTorch passes the gradient through at NaN (out <= 0 is false), Surf gives 0`,
  'linearRelu/special': `${NAN_GRAD}: as relu/special (NaN rows through the fused ReLU epilogue)`,
  'maximum/special': `${NAN_GRAD}: PyTorch sends the gradient to the NaN operand, Surf gives 0`,
  'minimum/special': `${NAN_GRAD}: PyTorch sends the gradient to the NaN operand, Surf gives 0`,
  'pow/special': `${NAN_GRAD}: d/dy of 0^y for y < 0 is Inf in PyTorch (0^y·log 0), 0 in Surf`,
  'remainder/special': `${NAN_GRAD}: d/db at ±Inf is NaN in PyTorch, ±Inf in Surf`,
  'max/special': `${NAN_GRAD}: the gradient of a NaN max goes to the NaN element in PyTorch; Surf gives NaN everywhere`,
  'maxDim/special': `${NAN_GRAD}: as max/special`,
  'min/special': `${NAN_GRAD}: as max/special`,
  'prod/special': `${NAN_GRAD}: the gradient at a zero/NaN/Inf product differs`,
  'prodDim/special': `${NAN_GRAD}: as prod/special`,
  'huberLoss/special': `${NAN_GRAD}: PyTorch clamps the gradient at ±Inf differences to ±delta/n, Surf gives NaN`,
  'smoothL1Loss/special': `${NAN_GRAD}: as huberLoss/special`,
  'var/scalar':
    'std/var gradient with no degrees of freedom (values work: std/var zero-variance gradient): PyTorch -Inf, Surf NaN',
  'scaledDotProductAttention/special':
    'NaN is swallowed by attention (values work: NaN propagation): a NaN query row gives 0, PyTorch NaN',
  'webgpu:sin/special':
    "WGSL's sin/cos are specified on [-π, π] only: at ±1e30 SwiftShader gives ±Inf/NaN, PyTorch the reduced-argument value",
  'webgpu:cos/special': 'as webgpu:sin/special',
  'webgpu:softmaxCrossEntropy/special':
    'NaN is swallowed by the WebGPU cross-entropy rows (values work: NaN propagation): Infinity where PyTorch gives NaN',
  'webgpu:crossEntropy/special': 'as webgpu:softmaxCrossEntropy/special (the gradient of a NaN row is 0, PyTorch NaN)',
  'webgpu:labelSmoothing/special': 'as webgpu:softmaxCrossEntropy/special',
  'adaptiveAvgPool2d/special':
    'NaN/Inf in one window makes every output NaN (values work: NaN propagation): the pooling weights 0·Inf = NaN',
};

const MM_LAYOUTS = {
  layouts: ['contiguous', 'special', 'empty03', 'empty0'],
  why: "matmul operand layouts: the op table's matmul cases (transposed, flipped, cropped, batched) on WebGPU",
};
export const GPU_LAYOUTS: Record<string, { layouts: string[]; why: string }> = {
  matmul: MM_LAYOUTS,
  linear: MM_LAYOUTS,
  dot: MM_LAYOUTS,
  adaptiveAvgPool2d: MM_LAYOUTS,
};

export const TOLERANCES: Record<string, { rtol?: number; atol?: number; gradRtol?: number; gradAtol?: number }> = {
  // Training-mode batch norm of a broadcast input (equal rows, zero variance): the gradient is 0
  // in exact arithmetic and float32 noise times 1/sqrt(eps) in both frameworks.
  'batchNormTrain/broadcast': { gradAtol: 1e-3 },
};
