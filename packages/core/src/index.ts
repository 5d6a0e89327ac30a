export * from './errors';
export * from './options';
export * from './dtype';
export * from './shape';
export { View } from './view';
export * from './expr';
export type { Backend, Storage, Strided, ReduceOp, MemoryInfo, MatmulEpilogue } from './backend';
export { NDArray } from './ndarray';
export { DeferredRegistry, flushDeferredRegistrations } from './deferred-registry';
export { canCollectSync, collectSync, hostGc, newFinalizationRegistry } from './host-gc';
export { CpuBackend } from './cpu';
// cpu threads
export { cpuThreads, setCpuThreads, startCpuThreads } from './cpu/threads/config';
export type { ThreadOptions } from './cpu/threads/config';
export * from './random';
export * from './registry';
export { checkGatherArgs, checkMatmulArgs, checkOperand, checkOperandShape, checkReduceArgs } from './validate';
// attention
export type { AttentionOptions, AttentionResult, AttentionGrads } from './backend';
export { attentionNd, attentionBackwardNd, checkAttentionArgs } from './attention';
export type { AttentionNdOptions } from './attention';
// the op table, the shared expression fold and the view lowering every generator uses
export { UNARY_TABLE, BINARY_TABLE, opRow, acceptedDTypes } from './ops/table';
export type { OpRow, RawOp, SimdOp, DTypeRule, Domain } from './ops/table';
export { foldExpr } from './ops/visit';
export type { ExprFold, Folded } from './ops/visit';
export { collapseDims, lowerViews } from './ops/lower';
export type { Access, InnerStep, Lowered, LoweredOperand } from './ops/lower';
export { remapInputs } from './expr';
export { deriveExpr } from './ops/derive';
// the matmul epilogue's checks and unfused fallback, shared by every backend
export { checkEpilogueArgs, unfusedEpilogue } from './epilogue';
// scatter and sort
export type { ScatterMode } from './backend';
export type { ReplayRecipe, ReplayProgram, ElementwiseGroup } from './backend'; // jit: compiled replays, merged updates
export { scatterFlat, sortAlong } from './scatter-sort';
export { checkScatterArgs, checkSortArgs } from './validate-ops';
// conv
export { checkConvArgs, checkConvEpilogue, convNd, convOutSize } from './conv';
export type { ConvParams } from './conv';
// pool
export { avgPoolDivisors, checkPoolArgs, checkPoolBackwardArgs, poolBackwardNd, poolNd } from './pool';
export type { PoolParams } from './pool';
export { checkCrossEntropyRowsArgs } from './cross-entropy-rows';
export * from './rng';
export { checkRandomArgs } from './rng/ndarray';
export * from './limits';
export { describeArg, typeErr } from './arg-types';
export type { CrossEntropyRowsOptions } from './backend';
