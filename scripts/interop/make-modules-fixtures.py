"""Writes the PyTorch reference cases for packages/nn/test/modules/*.test.ts.

Run by hand with PyTorch (the tests do not need it):

    /usr/bin/python3 scripts/interop/make-modules-fixtures.py

Each case builds a torch module from a fixed seed, runs it on fixed inputs, and records its
state dict (by PyTorch's names), the inputs, every output tensor (tuples flattened in order),
a random cotangent per output, and the gradients of sum(output_i * cotangent_i) with respect
to each input and each parameter. The Surf test loads the state dict into its module by name,
so both sides compute with the same weights. One JSON file per group.
"""
import json
from pathlib import Path

import torch
from torch import nn

OUT = Path(__file__).resolve().parents[2] / 'packages/nn/test/fixtures/modules'


def enc(t):
    t = t.detach().to(torch.float32).contiguous()
    return {'shape': list(t.shape), 'data': [round(float(v), 8) for v in t.flatten().tolist()]}


def flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for o in out:
        res.extend(flatten(o))
    return res


def case(name, module, inputs, call=None, grad_inputs=None, extra=None):
    """inputs: float tensors (gradients taken unless grad_inputs says which)."""
    torch.manual_seed(1234)
    module.eval()
    inputs = [i.clone().requires_grad_(grad_inputs is None or k in grad_inputs) for k, i in enumerate(inputs)]
    outs = flatten(call(module, *inputs) if call else module(*inputs))
    gouts = [torch.randn(o.shape) for o in outs]
    loss = sum((o * g).sum() for o, g in zip(outs, gouts))
    params = dict(module.named_parameters())
    req = [i for i in inputs if i.requires_grad] + list(params.values())
    grads = torch.autograd.grad(loss, req, allow_unused=True)
    gi = grads[: len(req) - len(params)]
    gp = grads[len(req) - len(params):]
    c = {
        'name': name,
        'state': {k: enc(v) for k, v in module.state_dict().items() if v.dtype == torch.float32},
        'inputs': [enc(i) for i in inputs],
        'outputs': [enc(o) for o in outs],
        'cotangents': [enc(g) for g in gouts],
        'inputGrads': [enc(g) if g is not None else None for g in gi],
        'paramGrads': {k: enc(g) for k, g in zip(params.keys(), gp) if g is not None},
    }
    if extra:
        c.update(extra)
    return c


def seeded(seed, *shape, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


def write(group, cases):
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f'{group}.json').write_text(json.dumps({c['name']: c for c in cases}, separators=(',', ':')))


def recurrent():
    torch.manual_seed(0)
    cs = []
    cs.append(case('rnn_tanh_2layer_h0', nn.RNN(3, 4, num_layers=2), [seeded(1, 5, 2, 3), seeded(2, 2, 2, 4)]))
    cs.append(case('rnn_relu_bi_batchfirst', nn.RNN(3, 4, nonlinearity='relu', bidirectional=True, batch_first=True),
                   [seeded(3, 2, 5, 3)]))
    cs.append(case('lstm_2layer_bi_h0c0', nn.LSTM(3, 4, num_layers=2, bidirectional=True),
                   [seeded(4, 5, 2, 3), seeded(5, 4, 2, 4), seeded(6, 4, 2, 4)],
                   call=lambda m, x, h, c: m(x, (h, c))))
    cs.append(case('lstm_nobias_batchfirst', nn.LSTM(3, 4, bias=False, batch_first=True), [seeded(7, 2, 4, 3)]))
    cs.append(case('lstm_unbatched', nn.LSTM(3, 4), [seeded(8, 4, 3)]))
    cs.append(case('gru_2layer_bi_h0', nn.GRU(3, 4, num_layers=2, bidirectional=True),
                   [seeded(9, 5, 2, 3), seeded(10, 4, 2, 4)]))
    cs.append(case('gru_batchfirst', nn.GRU(3, 4, batch_first=True), [seeded(11, 2, 3, 3)]))
    cs.append(case('rnncell_tanh', nn.RNNCell(3, 4), [seeded(12, 2, 3), seeded(13, 2, 4)]))
    cs.append(case('rnncell_relu_noh', nn.RNNCell(3, 4, nonlinearity='relu'), [seeded(14, 2, 3)]))
    cs.append(case('lstmcell', nn.LSTMCell(3, 4), [seeded(15, 2, 3), seeded(16, 2, 4), seeded(17, 2, 4)],
                   call=lambda m, x, h, c: m(x, (h, c))))
    cs.append(case('lstmcell_unbatched_noh', nn.LSTMCell(3, 4), [seeded(18, 3)]))
    cs.append(case('grucell', nn.GRUCell(3, 4), [seeded(19, 2, 3), seeded(20, 2, 4)]))
    cs.append(case('grucell_nobias', nn.GRUCell(3, 4, bias=False), [seeded(21, 2, 3)]))
    write('recurrent', cs)


def activations():
    torch.manual_seed(0)
    x = seeded(30, 2, 3, 4, scale=3.0)
    mods = {
        'elu': nn.ELU(), 'elu_alpha': nn.ELU(alpha=0.5), 'selu': nn.SELU(), 'celu': nn.CELU(),
        'celu_alpha': nn.CELU(alpha=0.7), 'softplus': nn.Softplus(), 'softplus_beta_threshold': nn.Softplus(beta=2, threshold=1),
        'mish': nn.Mish(), 'prelu': nn.PReLU(), 'prelu_channels': nn.PReLU(num_parameters=3, init=0.1),
        'hardswish': nn.Hardswish(), 'hardsigmoid': nn.Hardsigmoid(), 'relu6': nn.ReLU6(), 'softsign': nn.Softsign(),
        'tanhshrink': nn.Tanhshrink(), 'hardtanh': nn.Hardtanh(), 'hardtanh_range': nn.Hardtanh(-0.5, 2.0),
        'logsigmoid': nn.LogSigmoid(), 'softshrink': nn.Softshrink(), 'hardshrink': nn.Hardshrink(),
        'threshold': nn.Threshold(0.1, 20.0), 'softmin': nn.Softmin(dim=1), 'glu': nn.GLU(),
    }
    cs = [case(k, m, [x]) for k, m in mods.items()]
    write('activations', cs)


def transformer():
    torch.manual_seed(0)
    cs = []
    src = seeded(40, 5, 2, 8)
    tgt = seeded(41, 4, 2, 8)
    cs.append(case('encoder_layer_post_relu', nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), [src]))
    mask = torch.triu(torch.full((5, 5), float('-inf')), 1)
    kpm = torch.tensor([[False, False, False, True, True], [False, False, False, False, False]])
    cs.append(case('encoder_layer_pre_gelu_bf_masks',
                   nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation='gelu', norm_first=True, batch_first=True),
                   [seeded(42, 2, 5, 8)], call=lambda m, x: m(x, src_mask=mask, src_key_padding_mask=kpm)))
    causal = torch.triu(torch.full((4, 4), float('-inf')), 1)
    cs.append(case('decoder_layer_post_relu_causal', nn.TransformerDecoderLayer(8, 2, dim_feedforward=16),
                   [tgt, src], call=lambda m, t, s: m(t, s, tgt_mask=causal)))
    cs.append(case('decoder_layer_pre_gelu_bf',
                   nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, activation='gelu', norm_first=True, batch_first=True),
                   [seeded(43, 2, 4, 8), seeded(44, 2, 5, 8)]))
    cs.append(case('encoder_stack_norm', nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2,
                                                                norm=nn.LayerNorm(8), enable_nested_tensor=False), [src]))
    cs.append(case('decoder_stack', nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16), 2),
                   [tgt, src]))
    write('transformer', cs)


def misc():
    torch.manual_seed(0)
    cs = []
    img = seeded(50, 2, 3, 4, 5)
    cs.append(case('upsample_nearest_scale2', nn.Upsample(scale_factor=2), [img]))
    cs.append(case('upsample_nearest_size', nn.Upsample(size=(7, 3)), [img]))
    cs.append(case('upsample_bilinear_scale', nn.Upsample(scale_factor=2, mode='bilinear'), [img]))
    cs.append(case('upsample_bilinear_align_size', nn.Upsample(size=(6, 9), mode='bilinear', align_corners=True), [img]))
    cs.append(case('upsample_bilinear_down', nn.Upsample(size=(3, 3), mode='bilinear'), [img]))
    cs.append(case('pixel_shuffle', nn.PixelShuffle(2), [seeded(51, 2, 8, 2, 3)]))
    cs.append(case('pixel_unshuffle', nn.PixelUnshuffle(2), [seeded(52, 2, 2, 4, 6)]))
    cs.append(case('instance_norm1d', nn.InstanceNorm1d(3), [seeded(53, 2, 3, 6)]))
    cs.append(case('instance_norm2d_affine', nn.InstanceNorm2d(3, affine=True), [img]))
    cs.append(case('adaptive_max_pool2d', nn.AdaptiveMaxPool2d((2, 3)), [img]))
    cs.append(case('max_pool1d', nn.MaxPool1d(2), [seeded(54, 2, 3, 7)]))
    cs.append(case('max_pool1d_stride_pad', nn.MaxPool1d(3, stride=2, padding=1), [seeded(55, 2, 3, 7)]))
    cs.append(case('avg_pool1d', nn.AvgPool1d(3, stride=2, padding=1), [seeded(56, 2, 3, 7)]))
    cs.append(case('adaptive_avg_pool1d', nn.AdaptiveAvgPool1d(3), [seeded(57, 2, 3, 7)]))
    cs.append(case('unflatten', nn.Unflatten(1, (2, 3)), [seeded(58, 2, 6, 2)]))
    write('misc', cs)


def functional():
    import torch.nn.functional as F
    torch.manual_seed(0)
    none = nn.Module()
    x = seeded(60, 3, 4)
    cs = [
        case('normalize', none, [x], call=lambda m, a: F.normalize(a)),
        case('normalize_p1_dim0', none, [x], call=lambda m, a: F.normalize(a, p=1, dim=0)),
        case('cosine_similarity', none, [seeded(74, 2, 3, 4), seeded(61, 2, 3, 4)], call=lambda m, a, b: F.cosine_similarity(a, b)),
        case('cosine_similarity_last_bcast', none, [x, seeded(62, 1, 4)],
             call=lambda m, a, b: F.cosine_similarity(a, b, dim=-1)),
        case('pairwise_distance', none, [x, seeded(63, 3, 4)], call=lambda m, a, b: F.pairwise_distance(a, b)),
        case('pad_value', none, [seeded(64, 2, 3, 4)], call=lambda m, a: F.pad(a, [1, 2, 0, 1], value=1.5)),
        case('layer_norm_affine', none, [seeded(65, 2, 3, 4), seeded(66, 4), seeded(67, 4)],
             call=lambda m, a, w, b: F.layer_norm(a, [4], w, b)),
        case('group_norm_affine', none, [seeded(68, 2, 4, 3), seeded(69, 4), seeded(70, 4)],
             call=lambda m, a, w, b: F.group_norm(a, 2, w, b)),
        case('instance_norm', none, [seeded(71, 2, 3, 5)], call=lambda m, a: F.instance_norm(a)),
        case('interpolate_linear', none, [seeded(72, 2, 3, 5)],
             call=lambda m, a: F.interpolate(a, scale_factor=1.5, mode='linear')),
        case('interpolate_nearest_1d', none, [seeded(73, 2, 3, 5)], call=lambda m, a: F.interpolate(a, size=8)),
    ]
    write('functional', cs)


def optimizers():
    out = {}
    p0 = seeded(80, 6)
    c = seeded(81, 6).abs() + 0.5

    def run(name, make, steps=8):
        p = p0.clone().requires_grad_(True)
        opt = make([p])
        traj = []
        for _ in range(steps):
            opt.zero_grad()
            loss = (c * p * p * 0.5).sum() + torch.sin(3 * p).sum()
            loss.backward()
            opt.step()
            traj.append([round(float(v), 8) for v in p.detach().tolist()])
        out[name] = traj

    O = torch.optim
    # torch 1.13's NAdam multiplies mu_t into the next product twice (mu_product * mu * mu_next);
    # PyTorch 2.0 fixed it to mu_product * mu_next. This is the fixed update, written out.

    class NAdam2(O.Optimizer):
        def __init__(self, ps, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3):
            super().__init__(ps, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay))

        @torch.no_grad()
        def step(self):
            for g in self.param_groups:
                (b1, b2), psi = g['betas'], g['momentum_decay']
                for p in g['params']:
                    st = self.state[p]
                    if not st:
                        st.update(step=0, mu_product=1.0, m=torch.zeros_like(p), v=torch.zeros_like(p))
                    st['step'] += 1
                    t = st['step']
                    grad = p.grad + g['weight_decay'] * p
                    mu = b1 * (1 - 0.5 * 0.96 ** (t * psi))
                    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
                    st['mu_product'] *= mu
                    st['m'].mul_(b1).add_(grad, alpha=1 - b1)
                    st['v'].mul_(b2).addcmul_(grad, grad, value=1 - b2)
                    denom = (st['v'] / (1 - b2 ** t)).sqrt() + g['eps']
                    p.addcdiv_(grad, denom, value=-g['lr'] * (1 - mu) / (1 - st['mu_product']))
                    p.addcdiv_(st['m'], denom, value=-g['lr'] * mu_next / (1 - st['mu_product'] * mu_next))

    run('adamax', lambda ps: O.Adamax(ps))
    run('adamax_wd', lambda ps: O.Adamax(ps, lr=0.05, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1))
    run('adadelta', lambda ps: O.Adadelta(ps))
    run('adadelta_wd', lambda ps: O.Adadelta(ps, lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1))
    run('nadam', lambda ps: NAdam2(ps))
    run('nadam_opts', lambda ps: NAdam2(ps, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, momentum_decay=0.01))
    run('radam', lambda ps: O.RAdam(ps), steps=10)
    run('radam_opts', lambda ps: O.RAdam(ps, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1))

    def run_closure(name, make, calls=3):
        p = p0.clone().requires_grad_(True)
        opt = make([p])
        traj = []

        def closure():
            opt.zero_grad()
            loss = (c * p * p * 0.5).sum() + torch.sin(3 * p).sum()
            loss.backward()
            return loss
        for _ in range(calls):
            first = opt.step(closure)
            traj.append([round(float(v), 8) for v in p.detach().tolist()] + [round(float(first), 8)])
        out[name] = traj

    run_closure('lbfgs', lambda ps: O.LBFGS(ps))
    run_closure('lbfgs_opts', lambda ps: O.LBFGS(ps, lr=0.5, max_iter=4, history_size=2))

    lrs = {}

    def sched(name, make, steps=12):
        opt = O.SGD([torch.zeros(1, requires_grad=True)], lr=0.5)
        s = make(opt)
        seq = [opt.param_groups[0]['lr']]
        for _ in range(steps):
            opt.step()
            s.step()
            seq.append(opt.param_groups[0]['lr'])
        lrs[name] = seq

    S = O.lr_scheduler
    sched('exponential', lambda o: S.ExponentialLR(o, gamma=0.9))
    sched('warm_restarts', lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4))
    sched('warm_restarts_mult', lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.01), steps=16)
    sched('linear_default', lambda o: S.LinearLR(o))
    sched('constant_default', lambda o: S.ConstantLR(o))
    sched('sequential', lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.25, total_iters=3),
                                                     S.ExponentialLR(o, gamma=0.8)], milestones=[3]))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / 'optim.json').write_text(json.dumps({'p0': p0.tolist(), 'c': c.tolist(), 'trajectories': out, 'lrs': lrs}))


if __name__ == '__main__':
    optimizers()
    functional()
    recurrent()
    activations()
    transformer()
    misc()
