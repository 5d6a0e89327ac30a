/**
 * @surf/autograd: the user-facing Tensor with reverse-mode autodiff, backend selection,
 * memory scopes and the gradient-check suite. See docs/api.md.
 */
export { Tensor, checkTensor } from './tensor';
export type { Operand, Dims, NestedArray } from './tensor';
export type { BackwardOptions } from './engine';
export { init, getBackend, setBackend } from './context';
export { sync } from './sync';
export type { BackendChoice, InitOptions, InitResult } from './context';
export { noGrad, enableGrad, isGradEnabled } from './grad-mode';
export { tidy, keep, memory } from './scope';
export type { MemoryReport } from './scope';
// bounded memory for loops without tidy
export { configureMemory, collectGarbage } from './gc/pressure';
export type { MemoryOptions } from './gc/pressure';
export { manualSeed, nextSeed, getRngState, setRngState } from './seed';
export type { RngState } from './seed';
export { rand, randn, randint, bernoulli, dropout, randperm, permutation } from './random';
export type { RandomOptions } from './random';
export { promoteTypes } from './dtypes';
export { tensor, zeros, ones, full, zerosLike, onesLike, fullLike, arange, linspace, eye } from './creation';
export type { TensorOptions } from './creation';
export { where } from './ops/arith';
export { pad } from './ops/pad';
export type { PadMode, PadOptions } from './ops/pad';
export { cat, stack } from './ops/join';
export { linear } from './ops/linear';
export type { LinearActivation } from './ops/linear';
export { softmaxCrossEntropy } from './ops/cross-entropy';
export type { CrossEntropyReduction, SoftmaxCrossEntropyOptions } from './ops/cross-entropy';
export { gradcheck } from './gradcheck/gradcheck';
export type { GradcheckOptions, GradcheckReport, GradcheckWorst } from './gradcheck/gradcheck';
export { gradcheckSuite, runGradcheckSuite, FORWARD_ATOL, FORWARD_RTOL, REF_ATOL, REF_RTOL } from './gradcheck/suite';
export type { GradcheckCase, SuiteResult, SuiteOptions } from './gradcheck/suite';
export type { InputSpec, Layout, Values } from './gradcheck/inputs';
// attention
export { scaledDotProductAttention } from './ops/attention';
export type { ScaledDotProductAttentionOptions } from './ops/attention';
// functional forms of the raw elementwise ops (also Tensor methods)
export { erf, log1p, expm1 } from './ops/special';
export { floor, ceil, round, trunc, sign } from './ops/rounding';
export { bitwiseAnd, bitwiseOr, bitwiseXor } from './ops/bitwise';
export { remainder } from './ops/arith';
export { silu, gelu } from './ops/activations';
// indexing, gather/scatter, sort, scans, norms
export type { IndexArg, SliceSpec } from './ops/index';
export { gather } from './ops/gather';
export { scatter, scatterAdd } from './ops/scatter';
export { sort, argsort, topk } from './ops/sort';
export type { SortResult } from './ops/sort';
export { cumsum, prod } from './ops/scan';
export { norm } from './ops/norm';
export type { NormOrder } from './ops/norm';
export { split, chunk } from './ops/split';
export { oneHot } from './ops/one-hot';
export { triu, tril } from './ops/triangle';
export { maskedFill } from './ops/masked-fill';
export { multinomial } from './ops/multinomial';
// backends, moving tensors
export { resolveBackend, moveInPlace, moveInPlaceAsync } from './move';
export type { BackendTarget } from './move';
// convolution, pooling, batch norm
export { conv1d, conv2d, convTranspose2d } from './ops/conv';
export type { ConvOptions, ConvTransposeOptions } from './ops/conv';
export { maxPool2d, avgPool2d, adaptiveAvgPool2d } from './ops/pool';
export type { MaxPoolOptions, AvgPoolOptions } from './ops/pool';
export { batchNorm } from './ops/batch-norm';
export type { BatchNormOptions } from './ops/batch-norm';
// jit: captured steps
export { jit } from './jit/jit';
export type { JitOptions, JitStats, Jitted } from './jit/jit';
export { JitError } from './jit/errors';
export { hostEffect, dynamicConst, dynamicData, isRecording, guardField } from './jit/hooks';
export { bumpStateEpoch } from './jit/guards';
export { trackStateOwner } from './jit/owners';
export { binaryCrossEntropyTerms } from './ops/bce';
export { checkIndexRange } from './ops/index-range';
export type { IndexRange } from './ops/index-range';
// tensor ops: float checks, closeness, scans, diagonals, einsum, logical ops, unique
export { isnan, isinf, isfinite, nanToNum } from './ops/nonfinite';
export type { NanToNumOptions } from './ops/nonfinite';
export { isclose, allclose } from './ops/isclose';
export type { IsCloseOptions } from './ops/isclose';
export { cumprod } from './ops/cumprod';
export { roll } from './ops/roll';
export { diag, diagonal } from './ops/diagonal';
export { outer } from './ops/outer';
export { meshgrid } from './ops/meshgrid';
export type { MeshgridOptions } from './ops/meshgrid';
export { square } from './ops/square';
export { lerp } from './ops/lerp';
export { logicalAnd, logicalOr, logicalXor, logicalNot } from './ops/logical-ops';
export { unique } from './ops/unique';
export type { UniqueOptions, UniqueResult } from './ops/unique';
export { maxDim, minDim } from './ops/extremum-dim';
export type { MinMaxResult } from './ops/extremum-dim';
export { einsum } from './ops/einsum';
// autograd: gradients without .grad, tensor hooks
export { grad } from './grad';
export type { GradOptions } from './grad';
export type { TensorHook, HookHandle } from './tensor';
// module hooks: an identity whose backward hands its gradient to a function
export { gradTap } from './ops/grad-tap';
