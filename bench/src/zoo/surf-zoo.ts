/**
 * Surf's side of the zoo: each model written as a PyTorch user writes it with @surf/nn (modules,
 * a forward, a loss, an optimizer), and the step run the plain way: no tidy, no dispose, no
 * await, the loss read only when the suite syncs. The 'jit' loop captures the same body with
 * surf.jit and drops its outputs, as a user would.
 */
import type { Backend } from '@surf/core';
import { labels, uniform } from '../data';
import { Runner, trainCheck } from '../framework';
import type { ZooModel, ZooOptimizer } from './models';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Surf = Record<string, any>;
type T = any;

interface Batch {
  x: T;
  y: T;
}

/** A built model: its forward and loss, and the host data of each batch. */
interface Built {
  module: T;
  loss: (x: T, y: T) => T;
  batches: Batch[];
}

const BATCHES = 4;

function floats(surf: Surf, n: number, shape: number[], seed: number, scale = 1): T {
  const d = uniform(n, seed);
  for (let i = 0; i < n; i++) d[i] = (d[i] - 0.5) * 2 * scale;
  return surf.tensor(d, { dtype: 'float32' }).reshape(shape);
}

function ints(surf: Surf, n: number, shape: number[], classes: number, seed: number): T {
  return surf.tensor(labels(n, classes, seed), { dtype: 'int32' }).reshape(shape);
}

const prod = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** Batches of float inputs with float targets (regression) or int32 labels (classification). */
function makeBatches(surf: Surf, xShape: number[], y: { shape: number[]; classes?: number }, xInts?: number): Batch[] {
  return Array.from({ length: BATCHES }, (_, b) => ({
    x:
      xInts !== undefined
        ? ints(surf, prod(xShape), xShape, xInts, 100 + b)
        : floats(surf, prod(xShape), xShape, 100 + b),
    y:
      y.classes !== undefined
        ? ints(surf, prod(y.shape), y.shape, y.classes, 200 + b)
        : floats(surf, prod(y.shape), y.shape, 200 + b, 0.5),
  }));
}

function activation(surf: Surf, act: 'relu' | 'tanh' | 'gelu'): T {
  return act === 'relu' ? new surf.nn.ReLU() : act === 'tanh' ? new surf.nn.Tanh() : new surf.nn.GELU();
}

/** Builds the model of one zoo config. Each branch is the network as a user would write it. */
export function buildZooModel(surf: Surf, model: ZooModel): Built {
  const { nn } = surf;
  switch (model.arch) {
    case 'mlp': {
      const m = model;
      const layers: T[] = [];
      for (let i = 0; i + 1 < m.layers.length; i++) {
        layers.push(new nn.Linear(m.layers[i], m.layers[i + 1]));
        if (i + 2 < m.layers.length) {
          layers.push(activation(surf, m.act));
          if (m.dropout > 0) layers.push(new nn.Dropout(m.dropout));
        }
      }
      const net = new nn.Sequential(...layers);
      const classes = m.layers[m.layers.length - 1];
      return {
        module: net,
        loss: (x, y) => surf.crossEntropy(net.forward(x), y),
        batches: makeBatches(surf, [m.batch, m.layers[0]], { shape: [m.batch], classes }),
      };
    }
    case 'ffn': {
      const m = model;
      class Ffn extends surf.Module {
        ln = new nn.LayerNorm(m.dim);
        fc1 = new nn.Linear(m.dim, m.hidden);
        fc2 = new nn.Linear(m.hidden, m.dim);
        forward(x: T): T {
          return x.add(this.fc2.forward(this.fc1.forward(this.ln.forward(x)).gelu()));
        }
      }
      const net = new Ffn();
      const shape = [m.batch, m.seq, m.dim];
      return {
        module: net,
        loss: (x, y) => surf.mseLoss(net.forward(x), y),
        batches: makeBatches(surf, shape, { shape }),
      };
    }
    case 'attn': {
      const m = model;
      const D = m.dim / m.heads;
      class SelfAttention extends surf.Module {
        qkv = new nn.Linear(m.dim, 3 * m.dim);
        proj = new nn.Linear(m.dim, m.dim);
        forward(x: T): T {
          const [B, L, C] = x.shape;
          const [q, k, v] = this.qkv
            .forward(x)
            .split(C, 2)
            .map((t: T) => t.reshape([B, L, m.heads, D]).transpose(1, 2));
          const mask = surf.ones([L, L]).triu(1).gt(0);
          const att = q
            .matmul(k.transpose(-2, -1))
            .mul(1 / Math.sqrt(D))
            .maskedFill(mask, -Infinity)
            .softmax(-1);
          return this.proj.forward(att.matmul(v).transpose(1, 2).reshape([B, L, C]));
        }
      }
      const net = new SelfAttention();
      const shape = [m.batch, m.seq, m.dim];
      return {
        module: net,
        loss: (x, y) => surf.mseLoss(net.forward(x), y),
        batches: makeBatches(surf, shape, { shape }),
      };
    }
    case 'embed': {
      const m = model;
      class Bag extends surf.Module {
        emb = new nn.Embedding(m.vocab, m.dim);
        head = new nn.Linear(m.dim, m.vocab);
        forward(idx: T): T {
          return this.head.forward(this.emb.forward(idx).mean(1));
        }
      }
      const net = new Bag();
      return {
        module: net,
        loss: (x, y) => surf.crossEntropy(net.forward(x), y),
        batches: makeBatches(surf, [m.batch, m.seq], { shape: [m.batch], classes: m.vocab }, m.vocab),
      };
    }
    case 'chain': {
      const m = model;
      class Chain extends surf.Module {
        w = nn.parameter(floats(surf, m.rows * m.cols, [m.rows, m.cols], 7, 0.5).detach());
        forward(x: T): T {
          let h = x;
          for (let i = 0; i < m.depth; i++) {
            switch (i % 6) {
              case 0:
                h = h.mul(this.w);
                break;
              case 1:
                h = h.tanh();
                break;
              case 2:
                h = h.add(this.w);
                break;
              case 3:
                h = h.mul(h.sigmoid());
                break;
              case 4:
                h = h.sub(this.w.mul(0.5));
                break;
              default:
                h = h.mul(0.9).sin();
            }
          }
          return h;
        }
      }
      const net = new Chain();
      const shape = [m.rows, m.cols];
      return {
        module: net,
        loss: (x, y) => surf.mseLoss(net.forward(x), y),
        batches: makeBatches(surf, shape, { shape }),
      };
    }
    case 'rmsnorm': {
      const m = model;
      class Block extends surf.Module {
        g = nn.parameter(surf.ones([m.dim]));
        lin = new nn.Linear(m.dim, m.dim);
        forward(x: T): T {
          const n = x.mul(x.mul(x).mean(-1, true).add(1e-6).rsqrt()).mul(this.g);
          return x.add(this.lin.forward(n).silu());
        }
      }
      const net = new nn.Sequential(...Array.from({ length: m.blocks }, () => new Block()));
      const shape = [m.batch, m.dim];
      return {
        module: net,
        loss: (x, y) => surf.mseLoss(net.forward(x), y),
        batches: makeBatches(surf, shape, { shape }),
      };
    }
    case 'stem': {
      const m = model;
      const w = m.width;
      const net = new nn.Sequential(
        new nn.Conv2d(3, w, 7, { stride: 2, padding: 3, bias: false }),
        new nn.BatchNorm2d(w),
        new nn.ReLU(),
        new nn.MaxPool2d(3, { stride: 2, padding: 1 }),
        new nn.Conv2d(w, w, 3, { padding: 1 }),
        new nn.ReLU(),
        new nn.Conv2d(w, 2 * w, 1, { stride: 2 }),
        new nn.ReLU(),
        new nn.AdaptiveAvgPool2d(1),
        new nn.Flatten(),
        new nn.Linear(2 * w, 10),
      );
      return {
        module: net,
        loss: (x, y) => surf.crossEntropy(net.forward(x), y),
        batches: makeBatches(surf, [m.batch, 3, m.size, m.size], { shape: [m.batch], classes: 10 }),
      };
    }
    case 'conv': {
      const m = model;
      const [c0, c1, c2] = m.channels;
      const o = Math.floor((m.size - 3) / 2) + 1;
      const net = new nn.Sequential(
        new nn.Conv2d(c0, c1, 3, { padding: 1 }),
        new nn.ReLU(),
        new nn.Conv2d(c1, c2, 3, { stride: 2 }),
        new nn.ReLU(),
        new nn.Flatten(),
        new nn.Linear(c2 * o * o, 10),
      );
      return {
        module: net,
        loss: (x, y) => surf.crossEntropy(net.forward(x), y),
        batches: makeBatches(surf, [m.batch, c0, m.size, m.size], { shape: [m.batch], classes: 10 }),
      };
    }
    case 'rnn': {
      const m = model;
      class Rnn extends surf.Module {
        wx = new nn.Linear(m.input, m.hidden);
        wh = new nn.Linear(m.hidden, m.hidden, { bias: false });
        out = new nn.Linear(m.hidden, m.classes);
        forward(x: T): T {
          let h = surf.zeros([x.shape[0], m.hidden]);
          for (let t = 0; t < x.shape[1]; t++) h = this.wx.forward(x.index(':', t)).add(this.wh.forward(h)).tanh();
          return this.out.forward(h);
        }
      }
      const net = new Rnn();
      return {
        module: net,
        loss: (x, y) => surf.crossEntropy(net.forward(x), y),
        batches: makeBatches(surf, [m.batch, m.seq, m.input], { shape: [m.batch], classes: m.classes }),
      };
    }
    case 'redloss': {
      const m = model;
      const lin = new nn.Linear(m.features, m.classes);
      return {
        module: lin,
        loss: (x, y) => {
          const logits = lin.forward(x);
          return surf
            .crossEntropy(logits, y)
            .add(logits.var(1).mean().mul(0.1))
            .add(logits.logsumexp(1).mean().mul(0.01));
        },
        batches: makeBatches(surf, [m.batch, m.features], { shape: [m.batch], classes: m.classes }),
      };
    }
    case 'longrow': {
      const m = model;
      const net = new nn.Sequential(
        new nn.LayerNorm(m.features),
        new nn.Linear(m.features, m.hidden),
        new nn.ReLU(),
        new nn.Linear(m.hidden, 1),
      );
      return {
        module: net,
        loss: (x, y) => surf.mseLoss(net.forward(x), y),
        batches: makeBatches(surf, [m.batch, m.features], { shape: [m.batch, 1] }),
      };
    }
  }
}

function optimizer(surf: Surf, params: T, o: ZooOptimizer): T {
  switch (o.name) {
    case 'sgd':
      return new surf.optim.SGD(params, { lr: o.lr, momentum: o.momentum });
    case 'adam':
      return new surf.optim.Adam(params, { lr: o.lr });
    case 'adamw':
      return new surf.optim.AdamW(params, { lr: o.lr, weightDecay: o.weightDecay });
  }
}

/**
 * The runner of one zoo row: the eager loop a PyTorch user writes, or the same body under jit.
 * Its check: batch 0's loss after all the timed steps is below what it was before the first
 * (one more step need not lower it: a model that fitted its four batches jitters).
 */
export async function zooRunner(
  surf: Surf,
  be: Backend,
  model: ZooModel,
  opt: ZooOptimizer,
  loop: 'eager' | 'jit',
): Promise<Runner> {
  surf.manualSeed(42);
  const built = buildZooModel(surf, model);
  const optim = optimizer(surf, built.module.parameters(), opt);
  const body = (x: T, y: T): T => {
    optim.zeroGrad();
    const loss = built.loss(x, y);
    loss.backward();
    optim.step();
    return loss;
  };
  const run = loop === 'jit' ? surf.jit(body) : body;
  // Dropout's fresh mask makes a train-mode loss noisy: the check reads the loss in eval mode.
  const hasDropout = model.arch === 'mlp' && model.dropout > 0;
  const evalLoss = async (): Promise<number> => {
    const b = built.batches[0];
    if (hasDropout) built.module.eval();
    const l = surf.noGrad(() => built.loss(b.x, b.y));
    if (hasDropout) built.module.train();
    const v = await l.item();
    l.dispose();
    return v;
  };
  const initial = await evalLoss();
  return {
    step: (i) => {
      const b = built.batches[i % built.batches.length];
      run(b.x, b.y);
    },
    sync: async () => {
      be.flush();
      await be.sync();
    },
    check: async () => trainCheck(initial, await evalLoss()),
    dispose: () => {
      for (const b of built.batches) {
        b.x.dispose();
        b.y.dispose();
      }
      optim.dispose?.();
      for (const p of built.module.parameters()) p.dispose();
    },
  };
}
