/** The `optim` namespace: optimizers, schedulers and gradient clipping (torch.optim). */
export { Optimizer } from './optimizer';
export type { BaseOptions, ParamGroup, ParamsArg, ParamState, OptimizerStateDict } from './optimizer';
export { SGD } from './sgd';
export type { SGDOptions } from './sgd';
export { Adam, AdamW } from './adam';
export type { AdamOptions } from './adam';
export { LRScheduler, StepLR, CosineAnnealingLR, LinearWarmup } from './schedulers';
export type { SchedulerStateDict } from './schedulers';
export { MultiStepLR, LambdaLR, OneCycleLR } from './step-schedulers';
export type { OneCycleOptions } from './step-schedulers';
export { ReduceLROnPlateau } from './plateau';
export type { ReduceLROnPlateauOptions } from './plateau';
export { RMSprop } from './rmsprop';
export type { RMSpropOptions } from './rmsprop';
export { Adagrad } from './adagrad';
export type { AdagradOptions } from './adagrad';
export { clipGradNorm, clipGradValue } from './clip';
