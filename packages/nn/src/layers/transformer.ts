import { ValueError, withDefaults } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';
import { Dropout } from './dropout';
import { LayerNorm } from './layer-norm';
import { Linear } from './linear';
import { ModuleList } from './containers';
import { MultiheadAttention } from './multihead-attention';

export type TransformerActivation = 'relu' | 'gelu' | ((x: Tensor) => Tensor);

export interface TransformerLayerOptions {
  /** Width of the feed-forward block (default 2048, as PyTorch). */
  dimFeedforward?: number;
  /** Dropout after attention, inside and after the feed-forward block (default 0.1). */
  dropout?: number;
  /** 'relu' (default), 'gelu' or a function. */
  activation?: TransformerActivation;
  layerNormEps?: number;
  /** Inputs [N, L, E] (default false: [L, N, E], as PyTorch). */
  batchFirst?: boolean;
  /** Pre-norm: LayerNorm before each block instead of after the residual (default false). */
  normFirst?: boolean;
  /** Biases in the linear layers, the attention and the LayerNorms (default true). */
  bias?: boolean;
}

const SPEC = {
  dimFeedforward: 'posint',
  dropout: (v: unknown, where: string) => {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1))
      throw new ValueError(`${where} must be a probability in [0, 1]; got ${String(v)}`);
  },
  activation: (v: unknown, where: string) => {
    if (v !== 'relu' && v !== 'gelu' && typeof v !== 'function')
      throw new ValueError(`${where} must be 'relu', 'gelu' or a function; got ${JSON.stringify(v)}`);
  },
  layerNormEps: 'nonnegative',
  batchFirst: 'boolean',
  normFirst: 'boolean',
  bias: 'boolean',
} as const;
const DEFAULTS: Required<TransformerLayerOptions> = {
  dimFeedforward: 2048,
  dropout: 0.1,
  activation: 'relu',
  layerNormEps: 1e-5,
  batchFirst: false,
  normFirst: false,
  bias: true,
};

function act(a: TransformerActivation, x: Tensor): Tensor {
  return a === 'relu' ? x.relu() : a === 'gelu' ? x.gelu() : a(x);
}

export interface EncoderLayerForwardOptions {
  /** [L, L] or [N·nhead, L, L]; bool true = NOT allowed, float added (PyTorch's convention). */
  srcMask?: Tensor | null;
  /** [N, L]: true = padding, ignored as a key. */
  srcKeyPaddingMask?: Tensor | null;
  /** Hide future positions. */
  isCausal?: boolean;
}

/**
 * PyTorch's nn.TransformerEncoderLayer: self-attention and a feed-forward block, each with a
 * residual and a LayerNorm (after, or before with normFirst). Sub-module names are PyTorch's
 * (self_attn, linear1, linear2, norm1, norm2), so state dicts port. The attention runs with
 * batchFirst set explicitly from this layer's option.
 */
export class TransformerEncoderLayer extends Module {
  /* eslint-disable @typescript-eslint/naming-convention -- PyTorch's state-dict names */
  readonly self_attn: MultiheadAttention;
  /* eslint-enable @typescript-eslint/naming-convention */
  readonly linear1: Linear;
  readonly dropout: Dropout;
  readonly linear2: Linear;
  readonly norm1: LayerNorm;
  readonly norm2: LayerNorm;
  readonly dropout1: Dropout;
  readonly dropout2: Dropout;
  readonly options: Required<TransformerLayerOptions>;

  constructor(
    readonly dModel: number,
    readonly nhead: number,
    opts: TransformerLayerOptions = {},
  ) {
    super();
    const o = withDefaults<Required<TransformerLayerOptions>>('TransformerEncoderLayer', opts, SPEC, DEFAULTS);
    this.options = o;
    this.self_attn = new MultiheadAttention(dModel, nhead, {
      dropout: o.dropout,
      batchFirst: o.batchFirst,
      bias: o.bias,
    });
    this.linear1 = new Linear(dModel, o.dimFeedforward, { bias: o.bias });
    this.dropout = new Dropout(o.dropout);
    this.linear2 = new Linear(o.dimFeedforward, dModel, { bias: o.bias });
    this.norm1 = new LayerNorm(dModel, { eps: o.layerNormEps, bias: o.bias });
    this.norm2 = new LayerNorm(dModel, { eps: o.layerNormEps, bias: o.bias });
    this.dropout1 = new Dropout(o.dropout);
    this.dropout2 = new Dropout(o.dropout);
  }

  private sa(x: Tensor, f: EncoderLayerForwardOptions): Tensor {
    const y = this.self_attn.forward(x, x, x, {
      attnMask: f.srcMask ?? null,
      keyPaddingMask: f.srcKeyPaddingMask ?? null,
      isCausal: f.isCausal ?? false,
    });
    return this.dropout1.forward(y);
  }

  private ff(x: Tensor): Tensor {
    return this.dropout2.forward(
      this.linear2.forward(this.dropout.forward(act(this.options.activation, this.linear1.forward(x)))),
    );
  }

  forward(src: Tensor, opts: EncoderLayerForwardOptions = {}): Tensor {
    const f = withDefaults<Required<EncoderLayerForwardOptions>>(
      'TransformerEncoderLayer.forward',
      opts,
      { srcMask: 'any', srcKeyPaddingMask: 'any', isCausal: 'boolean' },
      { srcMask: null, srcKeyPaddingMask: null, isCausal: false },
    );
    let x = src;
    if (this.options.normFirst) {
      x = x.add(this.sa(this.norm1.forward(x), f));
      return x.add(this.ff(this.norm2.forward(x)));
    }
    x = this.norm1.forward(x.add(this.sa(x, f)));
    return this.norm2.forward(x.add(this.ff(x)));
  }

  /** A new layer with the same options and a copy of this one's weights (PyTorch's deepcopy). */
  copy(): TransformerEncoderLayer {
    const c = new TransformerEncoderLayer(this.dModel, this.nhead, this.options);
    copyState(this, c);
    return c;
  }

  protected override extraRepr(): string {
    return `dModel=${this.dModel}, nhead=${this.nhead}, normFirst=${this.options.normFirst}`;
  }
}

export interface DecoderLayerForwardOptions {
  tgtMask?: Tensor | null;
  memoryMask?: Tensor | null;
  tgtKeyPaddingMask?: Tensor | null;
  memoryKeyPaddingMask?: Tensor | null;
  tgtIsCausal?: boolean;
  memoryIsCausal?: boolean;
}
const DECODER_FORWARD_SPEC = {
  tgtMask: 'any',
  memoryMask: 'any',
  tgtKeyPaddingMask: 'any',
  memoryKeyPaddingMask: 'any',
  tgtIsCausal: 'boolean',
  memoryIsCausal: 'boolean',
} as const;

/**
 * PyTorch's nn.TransformerDecoderLayer: self-attention over the target, attention over the
 * encoder's memory, then the feed-forward block; names self_attn, multihead_attn, linear1,
 * linear2, norm1..3 as PyTorch's.
 */
export class TransformerDecoderLayer extends Module {
  /* eslint-disable @typescript-eslint/naming-convention -- PyTorch's state-dict names */
  readonly self_attn: MultiheadAttention;
  readonly multihead_attn: MultiheadAttention;
  /* eslint-enable @typescript-eslint/naming-convention */
  readonly linear1: Linear;
  readonly dropout: Dropout;
  readonly linear2: Linear;
  readonly norm1: LayerNorm;
  readonly norm2: LayerNorm;
  readonly norm3: LayerNorm;
  readonly dropout1: Dropout;
  readonly dropout2: Dropout;
  readonly dropout3: Dropout;
  readonly options: Required<TransformerLayerOptions>;

  constructor(
    readonly dModel: number,
    readonly nhead: number,
    opts: TransformerLayerOptions = {},
  ) {
    super();
    const o = withDefaults<Required<TransformerLayerOptions>>('TransformerDecoderLayer', opts, SPEC, DEFAULTS);
    this.options = o;
    const mha = () =>
      new MultiheadAttention(dModel, nhead, { dropout: o.dropout, batchFirst: o.batchFirst, bias: o.bias });
    this.self_attn = mha();
    this.multihead_attn = mha();
    this.linear1 = new Linear(dModel, o.dimFeedforward, { bias: o.bias });
    this.dropout = new Dropout(o.dropout);
    this.linear2 = new Linear(o.dimFeedforward, dModel, { bias: o.bias });
    this.norm1 = new LayerNorm(dModel, { eps: o.layerNormEps, bias: o.bias });
    this.norm2 = new LayerNorm(dModel, { eps: o.layerNormEps, bias: o.bias });
    this.norm3 = new LayerNorm(dModel, { eps: o.layerNormEps, bias: o.bias });
    this.dropout1 = new Dropout(o.dropout);
    this.dropout2 = new Dropout(o.dropout);
    this.dropout3 = new Dropout(o.dropout);
  }

  forward(tgt: Tensor, memory: Tensor, opts: DecoderLayerForwardOptions = {}): Tensor {
    const f = withDefaults<Required<DecoderLayerForwardOptions>>(
      'TransformerDecoderLayer.forward',
      opts,
      DECODER_FORWARD_SPEC,
      {
        tgtMask: null,
        memoryMask: null,
        tgtKeyPaddingMask: null,
        memoryKeyPaddingMask: null,
        tgtIsCausal: false,
        memoryIsCausal: false,
      },
    );
    const sa = (x: Tensor) =>
      this.dropout1.forward(
        this.self_attn.forward(x, x, x, {
          attnMask: f.tgtMask,
          keyPaddingMask: f.tgtKeyPaddingMask,
          isCausal: f.tgtIsCausal,
        }),
      );
    const mha = (x: Tensor) =>
      this.dropout2.forward(
        this.multihead_attn.forward(x, memory, memory, {
          attnMask: f.memoryMask,
          keyPaddingMask: f.memoryKeyPaddingMask,
          isCausal: f.memoryIsCausal,
        }),
      );
    const ff = (x: Tensor) =>
      this.dropout3.forward(
        this.linear2.forward(this.dropout.forward(act(this.options.activation, this.linear1.forward(x)))),
      );
    let x = tgt;
    if (this.options.normFirst) {
      x = x.add(sa(this.norm1.forward(x)));
      x = x.add(mha(this.norm2.forward(x)));
      return x.add(ff(this.norm3.forward(x)));
    }
    x = this.norm1.forward(x.add(sa(x)));
    x = this.norm2.forward(x.add(mha(x)));
    return this.norm3.forward(x.add(ff(x)));
  }

  copy(): TransformerDecoderLayer {
    const c = new TransformerDecoderLayer(this.dModel, this.nhead, this.options);
    copyState(this, c);
    return c;
  }

  protected override extraRepr(): string {
    return `dModel=${this.dModel}, nhead=${this.nhead}, normFirst=${this.options.normFirst}`;
  }
}

/** Copies every parameter of `from` into the same-named one of `to` (fresh storage each). */
function copyState(from: Module, to: Module): void {
  const src = from.stateDict();
  for (const [k, p] of Object.entries(to.stateDict())) p.assign(src[k].detach().clone());
}

/**
 * The layers of a Transformer stack: numLayers copies of `layer` (same initial weights, as
 * PyTorch's deepcopy), checked, and the optional final `norm` from the options.
 */
function stackOf<L extends Module & { copy(): L }>(
  name: string,
  arg: string,
  Layer: abstract new (...a: never[]) => L,
  layer: L,
  numLayers: number,
  opts: { norm?: Module | null },
): { layers: ModuleList; norm: Module | null } {
  const o = withDefaults(
    name,
    opts,
    {
      norm: (v: unknown, where: string) => {
        if (v !== null && !(v instanceof Module))
          throw new ValueError(`${where} must be a Module (e.g. nn.LayerNorm) or null`);
      },
    },
    { norm: null as Module | null },
  );
  // The class's name spelled out: bundlers rename classes.
  if (!(layer instanceof Layer)) throw new ValueError(`${name}: ${arg} must be an nn.${name}Layer`);
  if (!Number.isInteger(numLayers) || numLayers < 1)
    throw new ValueError(`${name}: numLayers must be a positive integer; got ${numLayers}`);
  return { layers: new ModuleList(Array.from({ length: numLayers }, () => layer.copy())), norm: o.norm };
}

/**
 * PyTorch's nn.TransformerEncoder: numLayers copies of `encoderLayer` (same initial weights, as
 * PyTorch's deepcopy), as `layers.0`, `layers.1`, ..., then the optional `norm`.
 */
export class TransformerEncoder extends Module {
  readonly layers: ModuleList;
  readonly norm: Module | null;
  constructor(encoderLayer: TransformerEncoderLayer, numLayers: number, opts: { norm?: Module | null } = {}) {
    super();
    ({ layers: this.layers, norm: this.norm } = stackOf(
      'TransformerEncoder',
      'encoderLayer',
      TransformerEncoderLayer,
      encoderLayer,
      numLayers,
      opts,
    ));
  }
  forward(
    src: Tensor,
    opts: { mask?: Tensor | null; srcKeyPaddingMask?: Tensor | null; isCausal?: boolean } = {},
  ): Tensor {
    const f = withDefaults(
      'TransformerEncoder.forward',
      opts,
      { mask: 'any', srcKeyPaddingMask: 'any', isCausal: 'boolean' },
      { mask: null as Tensor | null, srcKeyPaddingMask: null as Tensor | null, isCausal: false },
    );
    let x = src;
    for (const l of this.layers)
      x = (l as TransformerEncoderLayer).forward(x, {
        srcMask: f.mask,
        srcKeyPaddingMask: f.srcKeyPaddingMask,
        isCausal: f.isCausal,
      });
    return this.norm ? (this.norm.forward(x) as Tensor) : x;
  }
}

/** PyTorch's nn.TransformerDecoder: numLayers copies of `decoderLayer`, then the optional `norm`. */
export class TransformerDecoder extends Module {
  readonly layers: ModuleList;
  readonly norm: Module | null;
  constructor(decoderLayer: TransformerDecoderLayer, numLayers: number, opts: { norm?: Module | null } = {}) {
    super();
    ({ layers: this.layers, norm: this.norm } = stackOf(
      'TransformerDecoder',
      'decoderLayer',
      TransformerDecoderLayer,
      decoderLayer,
      numLayers,
      opts,
    ));
  }
  forward(tgt: Tensor, memory: Tensor, opts: DecoderLayerForwardOptions = {}): Tensor {
    let x = tgt;
    for (const l of this.layers) x = (l as TransformerDecoderLayer).forward(x, memory, opts);
    return this.norm ? (this.norm.forward(x) as Tensor) : x;
  }
}
