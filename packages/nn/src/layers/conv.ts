import { ValueError, parseOptions } from '@surf/core';
import { ConvOptions, Tensor, conv1d, conv2d, convTranspose2d, zeros } from '@surf/autograd';
import { fans, kaimingUniform, uniform } from '../init';
import { Module, parameter } from '../module';

/**
 * Conv1d, Conv2d and ConvTranspose2d with PyTorch's parameter layout and default init:
 * weight kaiming_uniform(a=√5), i.e. U(±1/√fanIn), and the bias U(±1/√fanIn) with fanIn from
 * the weight's dims 1.. (for ConvTranspose2d that is O/groups·k², PyTorch's own quirk).
 */
type Size = number | readonly number[];

export interface ConvModuleOptions {
  stride?: Size;
  padding?: Size | 'same' | 'valid';
  dilation?: Size;
  groups?: number;
  bias?: boolean;
}

export interface ConvTransposeModuleOptions {
  stride?: Size;
  padding?: Size;
  outputPadding?: Size;
  dilation?: Size;
  groups?: number;
  bias?: boolean;
}

function sizes(layer: string, name: string, v: Size, n: number): number[] {
  const a = typeof v === 'number' ? new Array<number>(n).fill(v) : Array.isArray(v) ? v.slice() : [];
  if (a.length !== n || !a.every((x) => Number.isInteger(x) && x >= 1))
    throw new ValueError(`${layer}: ${name} ${JSON.stringify(v)}; expected a positive integer or ${n} of them`);
  return a;
}

function channels(layer: string, inC: number, outC: number, groups: number): void {
  for (const [k, v] of [
    ['inChannels', inC],
    ['outChannels', outC],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) throw new ValueError(`${layer}: ${k} must be a positive integer; got ${v}`);
  }
  if (!Number.isInteger(groups) || groups < 1)
    throw new ValueError(`${layer}: groups must be a positive integer; got ${groups}`);
  if (inC % groups !== 0 || outC % groups !== 0)
    throw new ValueError(`${layer}: inChannels ${inC} and outChannels ${outC} must both divide by groups ${groups}`);
}

function initParams(weightShape: number[], bias: boolean): [Tensor, Tensor | null] {
  const w = parameter(kaimingUniform(zeros(weightShape), { a: Math.sqrt(5) }));
  const bound = 1 / Math.sqrt(fans(weightShape)[0]);
  return [w, bias ? parameter(uniform(zeros([weightShape[0]]), -bound, bound)) : null];
}

abstract class ConvNd extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  readonly kernelSize: number[];

  constructor(
    layer: string,
    sd: number,
    readonly inChannels: number,
    readonly outChannels: number,
    kernelSize: Size,
    readonly opts: ConvModuleOptions,
  ) {
    super();
    parseOptions(layer, opts, { stride: 'any', padding: 'any', dilation: 'any', groups: 'posint', bias: 'boolean' });
    const groups = opts.groups ?? 1;
    channels(layer, inChannels, outChannels, groups);
    this.kernelSize = sizes(layer, 'kernelSize', kernelSize, sd);
    [this.weight, this.bias] = initParams([outChannels, inChannels / groups, ...this.kernelSize], opts.bias ?? true);
  }

  protected conv(): ConvOptions {
    const { stride, padding, dilation, groups } = this.opts;
    const o: ConvOptions = {};
    if (stride !== undefined) o.stride = stride;
    if (padding !== undefined) o.padding = padding;
    if (dilation !== undefined) o.dilation = dilation;
    if (groups !== undefined) o.groups = groups;
    return o;
  }

  protected override extraRepr(): string {
    const { stride, padding, dilation, groups } = this.opts;
    const extra = [
      stride !== undefined && `stride=${JSON.stringify(stride)}`,
      padding !== undefined && `padding=${JSON.stringify(padding)}`,
      dilation !== undefined && `dilation=${JSON.stringify(dilation)}`,
      groups !== undefined && `groups=${groups}`,
    ].filter(Boolean);
    return [
      `${this.inChannels}, ${this.outChannels}, kernelSize=${JSON.stringify(this.kernelSize)}`,
      ...extra,
      `bias=${this.bias !== null}`,
    ].join(', ');
  }
}

/** nn.Conv1d: [N, C, L] -> [N, O, L']. */
export class Conv1d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: Size, opts: ConvModuleOptions = {}) {
    super('Conv1d', 1, inChannels, outChannels, kernelSize, opts);
  }
  forward(x: Tensor): Tensor {
    return conv1d(x, this.weight, this.bias, this.conv());
  }
}

/** nn.Conv2d: [N, C, H, W] -> [N, O, H', W']. */
export class Conv2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: Size, opts: ConvModuleOptions = {}) {
    super('Conv2d', 2, inChannels, outChannels, kernelSize, opts);
  }
  forward(x: Tensor): Tensor {
    return conv2d(x, this.weight, this.bias, this.conv());
  }
}

/** nn.ConvTranspose2d: weight [C, O/groups, kH, kW] as PyTorch. */
export class ConvTranspose2d extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  readonly kernelSize: number[];

  constructor(
    readonly inChannels: number,
    readonly outChannels: number,
    kernelSize: Size,
    readonly opts: ConvTransposeModuleOptions = {},
  ) {
    super();
    parseOptions('ConvTranspose2d', opts, {
      stride: 'any',
      padding: 'any',
      outputPadding: 'any',
      groups: 'posint',
      dilation: 'any',
      bias: 'boolean',
    });
    const groups = opts.groups ?? 1;
    channels('ConvTranspose2d', inChannels, outChannels, groups);
    this.kernelSize = sizes('ConvTranspose2d', 'kernelSize', kernelSize, 2);
    const [w] = initParams([inChannels, outChannels / groups, ...this.kernelSize], false);
    this.weight = w;
    const bound = 1 / Math.sqrt(fans(w.shape)[0]);
    this.bias = opts.bias === false ? null : parameter(uniform(zeros([outChannels]), -bound, bound));
  }

  forward(x: Tensor): Tensor {
    const { bias: _b, ...o } = this.opts;
    void _b;
    return convTranspose2d(x, this.weight, this.bias, o);
  }

  protected override extraRepr(): string {
    return `${this.inChannels}, ${this.outChannels}, kernelSize=${JSON.stringify(this.kernelSize)}, bias=${this.bias !== null}`;
  }
}
