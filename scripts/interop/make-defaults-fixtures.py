"""Writes packages/nn/test/fixtures/defaults.json: what PyTorch's modules, losses, optimizers and
schedulers do under their *default* arguments, for packages/nn/test/defaults.test.ts.

Run by hand with torch installed (the tests do not need it; Debian's python3-torch, 1.13, works):

    /usr/bin/python3 scripts/interop/make-defaults-fixtures.py

Each case passes only the arguments PyTorch requires, on small fixed inputs chosen so that the
defaults show in the values: inputs with tiny variance (norm eps), gradients near 1e-9 (optimizer
eps), differences on both sides of 1 (Huber delta), sizes that do not divide the pool kernel
(pool stride, ceil mode), enough steps to pass StepLR's step (gamma). Parameters are written too,
so Surf loads PyTorch's initial weights and compares outputs, not initialisations.

torch 1.13 has no nn.RMSNorm: its case follows PyTorch 2.4's definition (eps = finfo(float32).eps)
written out here.
"""
import json
import math
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

OUT = Path(__file__).resolve().parents[2] / 'packages/nn/test/fixtures/defaults.json'
torch.manual_seed(0)


def t(x):
    x = x.detach().to(torch.float32)
    return {'shape': list(x.shape), 'data': [float(v) for v in x.reshape(-1).tolist()]}


def ti(x):
    return {'shape': list(x.shape), 'data': [int(v) for v in x.reshape(-1).tolist()]}


def randn(*shape, scale=1.0, shift=0.0):
    return (torch.randn(*shape) * scale + shift).to(torch.float32)


def state(m):
    return {k: t(v) for k, v in m.state_dict().items() if v.dtype.is_floating_point}


modules = []


def module_case(name, ctor, args, m, inputs, train=False, extra=None):
    m.train(train)
    with torch.no_grad():
        out = m(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    case = {
        'name': name,
        'ctor': ctor,
        'args': args,
        'train': train,
        'state': state(m),
        'inputs': [t(x) if x.dtype.is_floating_point else ti(x) for x in inputs],
        'outputs': [t(o) for o in outs],
    }
    if extra:
        case.update(extra(m))
    modules.append(case)


# Activations: LeakyReLU's slope 0.01, GELU's exact erf form (the tanh form differs by ~1e-3 at
# |x| ~ 2), Softmax/LogSoftmax over the last dim of a 2-D input (PyTorch's implicit dim there).
x_act = torch.linspace(-4, 4, 17).reshape(1, 17)
module_case('LeakyReLU', 'LeakyReLU', [], nn.LeakyReLU(), [x_act])
module_case('GELU', 'GELU', [], nn.GELU(), [x_act])
x_sm = randn(3, 5, scale=2)
module_case('Softmax', 'Softmax', [], nn.Softmax(dim=-1), [x_sm])
module_case('LogSoftmax', 'LogSoftmax', [], nn.LogSoftmax(dim=-1), [x_sm])
module_case('Flatten', 'Flatten', [], nn.Flatten(), [randn(2, 3, 2, 2)])

# Norms on rows with tiny variance, so eps is a large part of the denominator.
x_tiny = randn(3, 6, scale=3e-3)
ln = nn.LayerNorm(6)
with torch.no_grad():
    ln.weight.copy_(randn(6, scale=0.5, shift=1))
    ln.bias.copy_(randn(6, scale=0.1))
module_case('LayerNorm', 'LayerNorm', [6], ln, [x_tiny])

gn = nn.GroupNorm(2, 4)
with torch.no_grad():
    gn.weight.copy_(randn(4, scale=0.5, shift=1))
    gn.bias.copy_(randn(4, scale=0.1))
module_case('GroupNorm', 'GroupNorm', [2, 4], gn, [randn(2, 4, 3, scale=3e-3)])


# RMSNorm, as PyTorch 2.4 defines it: x / sqrt(mean(x^2) + eps) * weight, eps = finfo(float32).eps.
x_rms = randn(3, 4, scale=2e-4)
w_rms = randn(4, scale=0.5, shift=1)
eps32 = torch.finfo(torch.float32).eps
y_rms = (x_rms.double() / torch.sqrt((x_rms.double() ** 2).mean(-1, keepdim=True) + eps32) * w_rms.double()).float()
modules.append(
    {
        'name': 'RMSNorm',
        'ctor': 'RMSNorm',
        'args': [4],
        'train': False,
        'state': {'weight': t(w_rms)},
        'inputs': [t(x_rms)],
        'outputs': [t(y_rms)],
    }
)


def bn_stats(m):
    return {'runningMean': t(m.running_mean), 'runningVar': t(m.running_var)}


def bn_case(name, numf, x):
    m = getattr(nn, name)(numf)
    with torch.no_grad():
        m.weight.copy_(randn(numf, scale=0.5, shift=1))
        m.bias.copy_(randn(numf, scale=0.1))
    before = state(m)
    m.train(True)
    with torch.no_grad():
        y_train = m(x)
    m.eval()
    with torch.no_grad():
        y_eval = m(x)
    modules.append(
        {
            'name': name,
            'ctor': name,
            'args': [numf],
            'train': True,
            'state': before,
            'inputs': [t(x)],
            'outputs': [t(y_train)],
            'evalOutput': t(y_eval),
            **bn_stats(m),
        }
    )


# Batch statistics with tiny variance (eps shows), then one running update (momentum 0.1 shows).
bn_case('BatchNorm1d', 3, randn(4, 3, scale=3e-3))
bn_case('BatchNorm2d', 2, randn(3, 2, 2, 2, scale=3e-3))

# Convolutions and pools: stride 1 / padding 0 / dilation 1 / groups 1 / bias for convs;
# stride = kernel, no padding, floor mode for pools (a 5x5 input does not divide by 2).
module_case('Linear', 'Linear', [3, 2], nn.Linear(3, 2), [randn(2, 3)])
module_case('Conv1d', 'Conv1d', [2, 3, 3], nn.Conv1d(2, 3, 3), [randn(1, 2, 6)])
module_case('Conv2d', 'Conv2d', [2, 2, 3], nn.Conv2d(2, 2, 3), [randn(1, 2, 5, 5)])
module_case('ConvTranspose2d', 'ConvTranspose2d', [2, 2, 3], nn.ConvTranspose2d(2, 2, 3), [randn(1, 2, 3, 3)])
module_case('MaxPool2d', 'MaxPool2d', [2], nn.MaxPool2d(2), [randn(1, 2, 5, 5)])
module_case('AvgPool2d', 'AvgPool2d', [2], nn.AvgPool2d(2), [randn(1, 2, 5, 5)])
module_case('Embedding', 'Embedding', [5, 3], nn.Embedding(5, 3), [torch.tensor([[0, 4, 2], [1, 1, 3]], dtype=torch.int32)])

# MultiheadAttention: bias, no dropout, sequence-first inputs [L, N, E], averaged weights returned.
mha = nn.MultiheadAttention(4, 2)
with torch.no_grad():
    mha.in_proj_bias.copy_(randn(12, scale=0.1))
    mha.out_proj.bias.copy_(randn(4, scale=0.1))
q, k = randn(3, 2, 4), randn(5, 2, 4)
module_case('MultiheadAttention', 'MultiheadAttention', [4, 2], mha, [q, k, k])

# Dropout p = 0.5 in train mode: kept values are scaled by 1/(1-p) = 2 and about half are zeroed.
modules.append({'name': 'Dropout', 'ctor': 'Dropout', 'args': [], 'p': nn.Dropout().p, 'scale': 1 / (1 - nn.Dropout().p)})


# Losses under their default reduction (mean) and constants (Huber delta 1, SmoothL1 beta 1).
losses = []


def loss_case(name, fn, inp, target):
    out = getattr(nn, name)()(inp, target)
    fout = getattr(F, fn)(inp, target)
    assert torch.equal(out, fout)
    losses.append({'name': name, 'functional': fn, 'input': t(inp), 'target': t(target) if target.dtype.is_floating_point else ti(target), 'output': float(out)})


pred, targ = randn(3, 4), randn(3, 4)
# Differences from -2.5 to 2.5: both sides of delta/beta = 1.
diffs = torch.linspace(-2.5, 2.5, 12).reshape(3, 4)
loss_case('MSELoss', 'mse_loss', pred, targ)
loss_case('L1Loss', 'l1_loss', pred, targ)
loss_case('HuberLoss', 'huber_loss', targ + diffs, targ)
loss_case('SmoothL1Loss', 'smooth_l1_loss', targ + diffs, targ)
logits, cls = randn(4, 3), torch.tensor([0, 2, 1, 2])
loss_case('CrossEntropyLoss', 'cross_entropy', logits, cls)
loss_case('NLLLoss', 'nll_loss', F.log_softmax(logits, -1), cls)
probs = torch.sigmoid(randn(3, 4))
bt = (torch.rand(3, 4) > 0.5).float()
loss_case('BCELoss', 'binary_cross_entropy', probs, bt)
loss_case('BCEWithLogitsLoss', 'binary_cross_entropy_with_logits', randn(3, 4), bt)
loss_case('KLDivLoss', 'kl_div', F.log_softmax(randn(3, 4), -1), F.softmax(randn(3, 4), -1))
for c in losses:
    if c['target']['data'] and c['name'] in ('CrossEntropyLoss', 'NLLLoss'):
        c['targetDtype'] = 'int32'


# Optimizers: three steps on loss = sum(c*p^2 + d*p) with only lr given (and with nothing given
# where PyTorch has a default lr). Two entries have gradients near 1e-9, where eps dominates.
p0 = torch.tensor([1.0, -2.0, 0.5, 3.0, 1e-9, -2e-9])
cq = torch.tensor([0.5, 1.0, 2.0, 0.1, 0.0, 0.0])
dq = torch.tensor([0.3, -0.2, 0.0, 1.0, 1e-9, -3e-9])
optimizers = []


def opt_case(name, kwargs):
    p = nn.Parameter(p0.clone())
    opt = getattr(torch.optim, name)([p], **kwargs)
    traj = []
    for _ in range(3):
        opt.zero_grad()
        (cq * p * p + dq * p).sum().backward()
        opt.step()
        traj.append([float(v) for v in p.detach().tolist()])
    optimizers.append({'name': name, 'opts': kwargs, 'steps': traj})


for name in ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad']:
    opt_case(name, {'lr': 0.05})
for name in ['Adam', 'AdamW', 'RMSprop', 'Adagrad']:
    opt_case(name, {})


# Schedulers: the lr over 12 steps from base lr 1, with only the required arguments.
schedulers = []


def sched_case(name, args, ctor, metrics=None):
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    s = ctor(opt)
    lrs = []
    for i in range(12):
        opt.step()
        if metrics is None:
            s.step()
        else:
            s.step(metrics[i])
        lrs.append(opt.param_groups[0]['lr'])
    case = {'name': name, 'args': args, 'lrs': lrs}
    if metrics is not None:
        case['metrics'] = metrics
    schedulers.append(case)


sched_case('StepLR', {'stepSize': 3}, lambda o: torch.optim.lr_scheduler.StepLR(o, 3))
sched_case('MultiStepLR', {'milestones': [2, 5]}, lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [2, 5]))
sched_case('CosineAnnealingLR', {'tMax': 8}, lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 8))
sched_case(
    'OneCycleLR',
    {'maxLr': 1.0, 'totalSteps': 13},
    lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=13),
)
# Improvements smaller than the default rel threshold 1e-4 count as none; patience 10 then cuts.
plateau = [1.0, 0.99995] + [0.99999] * 10
sched_case('ReduceLROnPlateau', {}, lambda o: torch.optim.lr_scheduler.ReduceLROnPlateau(o), plateau)

OUT.write_text(
    json.dumps(
        {
            'generator': 'scripts/interop/make-defaults-fixtures.py',
            'torch': torch.__version__,
            'modules': modules,
            'losses': losses,
            'optimizers': optimizers,
            'schedulers': schedulers,
        },
        separators=(',', ':'),
    )
    + '\n'
)
print(f'wrote {OUT} ({OUT.stat().st_size} bytes)')
