/**
 * The model zoo: training steps written the plain way a PyTorch user writes them, in shapes no
 * kernel was tuned for (odd widths, batch 1 to 512, long rows, strided views). Each model is a
 * small config that Surf's runner (surf-zoo.ts) and PyTorch's twin (bench/torch/zoo.py) build
 * the same network from; the row JSON carries it to bench.py. Tune on all of them, never on one.
 */
export type ZooOptimizer =
  | { name: 'sgd'; lr: number; momentum: number }
  | { name: 'adam'; lr: number }
  | { name: 'adamw'; lr: number; weightDecay: number };

export type ZooModel =
  /** Linear layers with an activation and Dropout between them; cross-entropy on the logits. */
  | { arch: 'mlp'; layers: number[]; batch: number; act: 'relu' | 'tanh' | 'gelu'; dropout: number }
  /** Pre-norm transformer feed-forward block with a residual: x + W2·gelu(W1·LN(x)); MSE to a target. */
  | { arch: 'ffn'; batch: number; seq: number; dim: number; hidden: number }
  /** Causal self-attention written by hand: q·kᵀ·s, triu mask by maskedFill(-inf), softmax, ·v, out projection. */
  | { arch: 'attn'; batch: number; seq: number; dim: number; heads: number }
  /** Token embedding, mean over the sequence, projection to a large vocabulary, cross-entropy. */
  | { arch: 'embed'; vocab: number; dim: number; batch: number; seq: number }
  /** A long elementwise chain over a weight and an input of the same odd shape; MSE to a target. */
  | { arch: 'chain'; rows: number; cols: number; depth: number }
  /** Residual blocks of RMSNorm written by hand (x·rsqrt(mean(x²)+eps)·g), Linear and SiLU. */
  | { arch: 'rmsnorm'; batch: number; dim: number; blocks: number }
  /** A ResNet-style stem: conv 7x7 s2, BatchNorm, ReLU, max-pool 3x3 s2, conv 3x3, conv 1x1 s2, pool, Linear. */
  | { arch: 'stem'; batch: number; size: number; width: number }
  /** A small CNN with odd channels: conv 3x3 pad 1, ReLU, conv 3x3 stride 2, ReLU, flatten, Linear. */
  | { arch: 'conv'; batch: number; size: number; channels: [number, number, number] }
  /** An Elman RNN written as a loop over time steps, classifying from the last hidden state. */
  | { arch: 'rnn'; batch: number; seq: number; input: number; hidden: number; classes: number }
  /** One Linear layer under a reduction-heavy loss: cross-entropy + variance penalty + logsumexp penalty. */
  | { arch: 'redloss'; batch: number; features: number; classes: number }
  /** LayerNorm over long rows at small batch, a bottleneck, a scalar regression output. */
  | { arch: 'longrow'; batch: number; features: number; hidden: number };

export interface ZooEntry {
  /** Stable key: rows are `zoo/<name>` (eager) and `zoo/<name>-jit`. */
  name: string;
  label: string;
  model: ZooModel;
  optimizer: ZooOptimizer;
  /** The same model at SwiftShader / CPU-box size, for --quick. */
  quick: ZooModel;
}

export const ZOO: readonly ZooEntry[] = [
  {
    name: 'mlp-dropout',
    label: 'MLP 1000-300-100-10 b100 ReLU+Dropout, Adam',
    model: { arch: 'mlp', layers: [1000, 300, 100, 10], batch: 100, act: 'relu', dropout: 0.1 },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'mlp', layers: [100, 30, 10], batch: 10, act: 'relu', dropout: 0.1 },
  },
  {
    name: 'mlp-b1',
    label: 'MLP 37-129-7 b1 tanh, SGD momentum',
    model: { arch: 'mlp', layers: [37, 129, 7], batch: 1, act: 'tanh', dropout: 0 },
    optimizer: { name: 'sgd', lr: 0.01, momentum: 0.9 },
    quick: { arch: 'mlp', layers: [37, 29, 7], batch: 1, act: 'tanh', dropout: 0 },
  },
  {
    name: 'mlp-wide',
    label: 'MLP 513-1023-257-10 b512 GELU, AdamW',
    model: { arch: 'mlp', layers: [513, 1023, 257, 10], batch: 512, act: 'gelu', dropout: 0 },
    optimizer: { name: 'adamw', lr: 1e-3, weightDecay: 0.01 },
    quick: { arch: 'mlp', layers: [53, 63, 27, 10], batch: 32, act: 'gelu', dropout: 0 },
  },
  {
    name: 'ffn',
    label: 'FFN block 24x77x200 (hidden 800), Adam',
    model: { arch: 'ffn', batch: 24, seq: 77, dim: 200, hidden: 800 },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'ffn', batch: 2, seq: 7, dim: 20, hidden: 36 },
  },
  {
    name: 'attn',
    label: 'attention by hand 6x97x96, 3 heads, Adam',
    model: { arch: 'attn', batch: 6, seq: 97, dim: 96, heads: 3 },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'attn', batch: 2, seq: 9, dim: 12, heads: 3 },
  },
  {
    name: 'embed',
    label: 'embedding 30011x96 -> softmax over 30011, b32x16, Adam',
    model: { arch: 'embed', vocab: 30011, dim: 96, batch: 32, seq: 16 },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'embed', vocab: 301, dim: 12, batch: 4, seq: 5 },
  },
  {
    name: 'chain',
    label: 'elementwise chain x24 on 333x517, SGD',
    model: { arch: 'chain', rows: 333, cols: 517, depth: 24 },
    optimizer: { name: 'sgd', lr: 0.01, momentum: 0 },
    quick: { arch: 'chain', rows: 13, cols: 17, depth: 6 },
  },
  {
    name: 'rmsnorm',
    label: 'RMSNorm+Linear+SiLU x4, 64x250, Adam',
    model: { arch: 'rmsnorm', batch: 64, dim: 250, blocks: 4 },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'rmsnorm', batch: 4, dim: 25, blocks: 2 },
  },
  {
    name: 'stem',
    label: 'ResNet stem 16x3x67x67 (7x7 s2, BN, pool, 3x3, 1x1 s2), SGD momentum',
    model: { arch: 'stem', batch: 16, size: 67, width: 32 },
    optimizer: { name: 'sgd', lr: 0.01, momentum: 0.9 },
    quick: { arch: 'stem', batch: 2, size: 19, width: 4 },
  },
  {
    name: 'conv-odd',
    label: 'CNN 3-13-27 on 7x31x31, Adam',
    model: { arch: 'conv', batch: 7, size: 31, channels: [3, 13, 27] },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'conv', batch: 2, size: 9, channels: [3, 5, 7] },
  },
  {
    name: 'rnn',
    label: 'RNN loop 23 steps, b13, 29->71->5, Adam',
    model: { arch: 'rnn', batch: 13, seq: 23, input: 29, hidden: 71, classes: 5 },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'rnn', batch: 3, seq: 4, input: 5, hidden: 7, classes: 3 },
  },
  {
    name: 'redloss',
    label: 'reduction-heavy loss 257x61 -> 1001, Adam',
    model: { arch: 'redloss', batch: 257, features: 61, classes: 1001 },
    optimizer: { name: 'adam', lr: 1e-3 },
    quick: { arch: 'redloss', batch: 9, features: 6, classes: 11 },
  },
  {
    name: 'longrow',
    label: 'LayerNorm long rows 3x4099 -> 515 -> 1, SGD',
    model: { arch: 'longrow', batch: 3, features: 4099, hidden: 515 },
    optimizer: { name: 'sgd', lr: 0.01, momentum: 0 },
    quick: { arch: 'longrow', batch: 1, features: 99, hidden: 15 },
  },
];
