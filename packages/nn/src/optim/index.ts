/** The `optim` namespace: optimizers, schedulers and gradient clipping (torch.optim). */
export { Optimizer } from './optimizer';
export type { BaseOptions, ParamGroup, ParamsArg, ParamState, OptimizerStateDict } from './optimizer';
export { SGD } from './sgd';
export type { SGDOptions } from './sgd';
export { Adam, AdamW } from './adam';
export type { AdamOptions } from './adam';
export { LRScheduler, StepLR, CosineAnnealingLR, LinearWarmup } from './schedulers';
export type { SchedulerStateDict } from './schedulers';
export { MultiStepLR, LambdaLR, OneCycleLR, ReduceLROnPlateau } from './schedulers-more';
export type { OneCycleOptions, ReduceLROnPlateauOptions } from './schedulers-more';
export { RMSprop } from './rmsprop';
export type { RMSpropOptions } from './rmsprop';
export { Adagrad } from './adagrad';
export type { AdagradOptions } from './adagrad';
export { clipGradNorm, clipGradValue } from './clip';
