/**
 * The example's CNN for 28x28 digits (conv 3x3 - BatchNorm - ReLU - max pool 2x2 blocks, then
 * linear). It is defined in the MLP example's package beside the MLP, because the browser page
 * there trains either one; this module re-exports it.
 */
export { DEFAULT_CHANNELS, ToImages, buildCnn, firstConv } from '@surf/example-mlp/cnn-model';
export type { CnnOptions } from '@surf/example-mlp/cnn-model';
