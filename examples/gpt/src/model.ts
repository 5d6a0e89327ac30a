import * as surf from '@surf/nn';

const { nn } = surf;

/** The network's shape; saved with the weights so --sample can rebuild it. */
export interface GptConfig {
  vocabSize: number;
  /** Longest context in characters (the position table's size). */
  blockSize: number;
  nEmbd: number;
  nHead: number;
  nLayer: number;
  dropout: number;
}

/** Pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x)). */
class Block extends surf.Module {
  readonly ln1: surf.nn.LayerNorm;
  readonly attn: surf.nn.MultiheadAttention;
  readonly ln2: surf.nn.LayerNorm;
  readonly fc: surf.nn.Linear;
  readonly act = new nn.GELU();
  readonly proj: surf.nn.Linear;
  readonly drop: surf.nn.Dropout;

  constructor(c: GptConfig) {
    super();
    this.ln1 = new nn.LayerNorm(c.nEmbd);
    this.attn = new nn.MultiheadAttention(c.nEmbd, c.nHead, { dropout: c.dropout, batchFirst: true });
    this.ln2 = new nn.LayerNorm(c.nEmbd);
    this.fc = new nn.Linear(c.nEmbd, 4 * c.nEmbd);
    this.proj = new nn.Linear(4 * c.nEmbd, c.nEmbd);
    this.drop = new nn.Dropout(c.dropout);
  }

  forward(x: surf.Tensor): surf.Tensor {
    const h = x.add(
      this.drop.forward(this.attn.forward(this.ln1.forward(x), undefined, undefined, { isCausal: true })),
    );
    return h.add(this.drop.forward(this.proj.forward(this.act.forward(this.fc.forward(this.ln2.forward(h))))));
  }
}

/**
 * A character-level GPT: token and position embeddings, pre-norm blocks of causal multi-head
 * attention and a GELU MLP, a final LayerNorm and a linear head to the vocabulary.
 */
export class Gpt extends surf.Module {
  readonly tokEmb: surf.nn.Embedding;
  readonly posEmb: surf.nn.Embedding;
  readonly blocks: Block[];
  readonly lnF: surf.nn.LayerNorm;
  readonly head: surf.nn.Linear;

  constructor(readonly config: GptConfig) {
    super();
    const c = config;
    this.tokEmb = new nn.Embedding(c.vocabSize, c.nEmbd);
    this.posEmb = new nn.Embedding(c.blockSize, c.nEmbd);
    this.blocks = Array.from({ length: c.nLayer }, () => new Block(c));
    this.lnF = new nn.LayerNorm(c.nEmbd);
    this.head = new nn.Linear(c.nEmbd, c.vocabSize, { bias: false });
    // GPT-2's init: N(0, 0.02) weights, zero biases, residual projections scaled by 1/√(2·layers).
    for (const [name, p] of this.namedParameters()) {
      if (p.ndim < 2) continue;
      const std = /(proj|out_proj)\.weight$/.test(name) ? 0.02 / Math.sqrt(2 * c.nLayer) : 0.02;
      nn.init.normal(p, 0, std);
    }
  }

  /** int32 ids [B, T] (T <= blockSize) -> logits [B, T, vocab]. */
  forward(idx: surf.Tensor): surf.Tensor {
    const [, T] = idx.shape;
    if (T > this.config.blockSize)
      throw new surf.ShapeError(`Gpt: got ${T} positions; the model's context is ${this.config.blockSize}`);
    let x = this.tokEmb.forward(idx).add(this.posEmb.forward(surf.arange(T)));
    for (const b of this.blocks) x = b.forward(x);
    return this.head.forward(this.lnF.forward(x));
  }

  /** Mean cross-entropy (nats per character) of predicting y [B, T] from x [B, T]. */
  loss(x: surf.Tensor, y: surf.Tensor): surf.Tensor {
    const logits = this.forward(x);
    const [B, T, V] = logits.shape;
    return surf.crossEntropy(logits.reshape([B * T, V]), y.reshape([B * T]));
  }
}
