#!/usr/bin/env python3
"""Generate gpumux's layer-level model zoo (traces/models/*.json).

Every architecture is built from its definition (torchvision / paper / reference
implementation written as code: loops over blocks, channel arithmetic, shape
propagation).  A small Builder tracks the current activation shape and appends one
layer record per leaf module that carries work.  Schema and conventions are in
traces/models/README.md.

Usage (stdlib only, Python 3):
    python3 traces/models/generate_zoo.py            # (re)write every <name>.json
    python3 traces/models/generate_zoo.py --check    # exit 1 if a checked-in file differs
    python3 traces/models/generate_zoo.py --table    # print the per-model totals table
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPE_BYTES = 4

# ---------------------------------------------------------------------------
# FLOP constants (per element unless stated).  GEMM work is always 2 FLOPs/MAC.
# ---------------------------------------------------------------------------
ACT_FLOPS = {
    None: 0,
    "relu": 1,       # max(x, 0)
    "relu6": 1,      # clamp(x, 0, 6)
    "hardtanh": 1,   # clamp(x, 0, 20) in DeepSpeech2 (clipped ReLU)
    "leaky_relu": 2,  # x if x > 0 else 0.2 * x: one multiply, one select (DCGAN discriminator)
    "tanh": 4,
    "sigmoid": 4,
    "gelu": 8,       # erf-based GELU
    "softmax": 5,    # max, sub, exp, sum, div
}
BIAS_FLOPS = 1       # bias add of conv/linear
BN_FLOPS = 4         # (x - mean) * invstd * gamma + beta
LN_FLOPS = 8         # mean, variance, normalize, affine
ADD_FLOPS = 1        # residual add / embedding sum folded into a norm layer
ATTN_SCORE_FLOPS = 2 + ACT_FLOPS["softmax"]   # scale + mask + softmax per score
LSTM_CELL_FLOPS = 32   # per hidden unit per step: 2 bias adds x4 gates, 3 sigmoid, 2 tanh, 3 mul, 1 add
GRU_CELL_FLOPS = 30    # per hidden unit per step: 2 bias adds x3 gates, 2 sigmoid, 1 tanh, 3 mul, 3 add
REPARAM_FLOPS = 4      # VAE: std = exp(0.5*logvar); z = mu + eps*std


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _out_dim(n, k, s, p, ceil_mode=False):
    """PyTorch Conv/Pool output length (dilation 1)."""
    span = n + 2 * p - k
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= n + p:   # last window must start inside the input
            out -= 1
    else:
        out = span // s + 1
    return out


def _prod(shape):
    r = 1
    for v in shape:
        r *= v
    return r


class Builder:
    """Tracks the current per-sample activation shape and appends layers.

    Shapes: (C, H, W) for images, (T, D) for sequences (T tokens of width D),
    (D,) for flat vectors.
    """

    def __init__(self, input_shape):
        self.shape = tuple(input_shape)
        self.layers = []
        self.groups = []
        self.aux = False   # set while building Inception-v3's AuxLogits

    # -- bookkeeping ------------------------------------------------------
    def mark_group(self):
        """Start a new PipeSwitch group at the next layer."""
        self.groups.append(len(self.layers))

    def _emit(self, name, kind, *, params=0, buffers=0, tensors=0, in_elems,
              out_elems, gemms=(), extra=0, bwd=None):
        gemms = [dict(m=m, n=n, k=k, count=c) for (m, n, k, c) in gemms]
        gemm_flops = sum(2 * g["m"] * g["n"] * g["k"] * g["count"] for g in gemms)
        fwd = gemm_flops + extra
        if bwd is None:
            if kind in ("conv", "linear"):
                # grad input + grad weight; the network's first layer has no grad input
                factor = 1 if not self.layers else 2
                bwd = factor * gemm_flops + 2 * extra
            else:
                bwd = 2 * fwd
        layer = {
            "name": name,
            "kind": kind,
            "params": params,
            "buffers": buffers,
            "tensors": tensors,
            "weight_bytes": (params + buffers) * DTYPE_BYTES,
            "input_bytes": in_elems * DTYPE_BYTES,
            "output_bytes": out_elems * DTYPE_BYTES,
            "fwd_flops": fwd,
            "bwd_flops": bwd,
            "gemms": gemms,
        }
        if self.aux:
            layer["aux"] = True
        self.layers.append(layer)

    # -- vision layers ----------------------------------------------------
    def conv(self, name, cout, k, s=1, p=0, groups=1, bias=False, act=None):
        c, h, w = self.shape
        (kh, kw), (sh, sw), (ph, pw) = _pair(k), _pair(s), _pair(p)
        ho, wo = _out_dim(h, kh, sh, ph), _out_dim(w, kw, sw, pw)
        cin_g, cout_g = c // groups, cout // groups
        assert cin_g * groups == c and cout_g * groups == cout, name
        out = cout * ho * wo
        self._emit(name, "conv",
                   params=cout * cin_g * kh * kw + (cout if bias else 0),
                   tensors=2 if bias else 1,
                   in_elems=c * h * w, out_elems=out,
                   gemms=[(ho * wo, cout_g, cin_g * kh * kw, groups)],
                   extra=out * ((BIAS_FLOPS if bias else 0) + ACT_FLOPS[act]))
        self.shape = (cout, ho, wo)

    def conv_transpose(self, name, cout, k, s=1, p=0, bias=False, act=None):
        """ConvTranspose2d (groups 1, dilation 1, no output_padding), computed as PyTorch's
        slow_conv_transpose2d does: one GEMM (m = H_in*W_in, n = C_out*kh*kw, k = C_in) into a
        column buffer, then col2im scatter-adds every column element into the output
        (ADD_FLOPS each; elements landing in the cropped padding are counted too)."""
        c, h, w = self.shape
        (kh, kw), (sh, sw), (ph, pw) = _pair(k), _pair(s), _pair(p)
        ho, wo = (h - 1) * sh - 2 * ph + kh, (w - 1) * sw - 2 * pw + kw
        out = cout * ho * wo
        cols = h * w * cout * kh * kw
        self._emit(name, "conv",
                   params=c * cout * kh * kw + (cout if bias else 0),
                   tensors=2 if bias else 1,
                   in_elems=c * h * w, out_elems=out,
                   gemms=[(h * w, cout * kh * kw, c, 1)],
                   extra=cols * ADD_FLOPS + out * ((BIAS_FLOPS if bias else 0) + ACT_FLOPS[act]))
        self.shape = (cout, ho, wo)

    def bn(self, name, act=None, residual=False):
        """BatchNorm2d/1d; a residual add (and the activation after it) may be folded in."""
        c = self.shape[0] if len(self.shape) == 3 else self.shape[-1]
        n = _prod(self.shape)
        extra = n * (BN_FLOPS + (ADD_FLOPS if residual else 0) + ACT_FLOPS[act])
        self._emit(name, "norm", params=2 * c, buffers=2 * c, tensors=4,
                   in_elems=n * (2 if residual else 1), out_elems=n, extra=extra)

    def pool(self, name, k, s=None, p=0, mode="max", ceil_mode=False):
        c, h, w = self.shape
        (kh, kw) = _pair(k)
        (sh, sw) = _pair(s if s is not None else k)
        (ph, pw) = _pair(p)
        ho, wo = _out_dim(h, kh, sh, ph, ceil_mode), _out_dim(w, kw, sw, pw, ceil_mode)
        out = c * ho * wo
        self._emit(name, "pool", in_elems=c * h * w, out_elems=out, extra=out * kh * kw)
        self.shape = (c, ho, wo)

    def adaptive_avgpool(self, name, out_hw=(1, 1)):
        c, h, w = self.shape
        oh, ow = out_hw
        kh, kw = -(-h // oh), -(-w // ow)
        out = c * oh * ow
        self._emit(name, "pool", in_elems=c * h * w, out_elems=out, extra=out * kh * kw)
        self.shape = (c, oh, ow)

    def concat(self, shapes):
        """Channel concat of branch outputs (free: no layer)."""
        hw = shapes[0][1:]
        assert all(s[1:] == hw for s in shapes), shapes
        self.shape = (sum(s[0] for s in shapes),) + hw

    # -- dense / sequence layers -------------------------------------------
    def linear(self, name, out, bias=True, act=None):
        if len(self.shape) == 2:          # (T, D): applied per token
            tokens, fin = self.shape
        else:                              # flatten
            tokens, fin = 1, _prod(self.shape)
        o = tokens * out
        self._emit(name, "linear",
                   params=fin * out + (out if bias else 0), tensors=2 if bias else 1,
                   in_elems=tokens * fin, out_elems=o,
                   gemms=[(tokens, out, fin, 1)],
                   extra=o * ((BIAS_FLOPS if bias else 0) + ACT_FLOPS[act]))
        self.shape = (tokens, out) if len(self.shape) == 2 else (out,)

    def embedding(self, name, num, dim, tokens):
        # gather: no FLOPs forward; backward scatter-adds one value per output element
        self._emit(name, "embedding", params=num * dim, tensors=1,
                   in_elems=tokens, out_elems=tokens * dim, bwd=tokens * dim)
        self.shape = (tokens, dim)

    def layernorm(self, name, residual_inputs=0):
        """LayerNorm over the last dim; `residual_inputs` extra tensors are summed in first."""
        t, d = self.shape
        n = t * d
        self._emit(name, "norm", params=2 * d, tensors=2,
                   in_elems=n * (1 + residual_inputs), out_elems=n,
                   extra=n * (LN_FLOPS + ADD_FLOPS * residual_inputs))

    def attention(self, name, heads):
        """Scaled dot-product part: softmax(QK^T/sqrt(d)+mask) V, no weights."""
        t, d = self.shape
        hd = d // heads
        self._emit(name, "attention", in_elems=3 * t * d, out_elems=t * d,
                   gemms=[(t, t, hd, heads), (t, hd, t, heads)],
                   extra=heads * t * t * ATTN_SCORE_FLOPS)

    def elementwise(self, name, flops_per_elem):
        n = _prod(self.shape)
        self._emit(name, "elementwise", in_elems=n, out_elems=n, extra=n * flops_per_elem)

    def lstm(self, name, hidden):
        """One unidirectional LSTM layer (PyTorch nn.LSTM parameterisation: W_ih, W_hh, b_ih, b_hh).
        GEMMs: input projection for all steps at once, then one recurrent GEMM per step."""
        t, fin = self.shape
        g = 4 * hidden
        self._emit(name, "linear", params=g * (fin + hidden) + 2 * g, tensors=4,
                   in_elems=t * fin, out_elems=t * hidden,
                   gemms=[(t, g, fin, 1), (1, g, hidden, t)],
                   extra=t * hidden * LSTM_CELL_FLOPS)
        self.shape = (t, hidden)

    def gru(self, name, hidden, bidirectional=True):
        """One (bi)directional GRU layer; directions concatenated at the output."""
        t, fin = self.shape
        dirs = 2 if bidirectional else 1
        g = 3 * hidden
        self._emit(name, "linear", params=dirs * (g * (fin + hidden) + 2 * g),
                   tensors=4 * dirs, in_elems=t * fin, out_elems=t * dirs * hidden,
                   gemms=[(t, g, fin, dirs), (1, g, hidden, dirs * t)],
                   extra=dirs * t * hidden * GRU_CELL_FLOPS)
        self.shape = (t, dirs * hidden)

    # -- composites ---------------------------------------------------------
    def conv_bn(self, name, cout, k, s=1, p=0, groups=1, act="relu", conv="conv", bn="bn"):
        """torchvision BasicConv2d / Conv2dNormActivation: conv(no bias) + BN + act."""
        self.conv(f"{name}.{conv}", cout, k, s, p, groups=groups)
        self.bn(f"{name}.{bn}", act=act)


def finish(b, *, name, display_name, source, domain, input_shape, sequence_length=None):
    layers = b.layers
    model = {"name": name, "display_name": display_name, "source": source,
             "domain": domain, "input_shape": list(input_shape)}
    if sequence_length is not None:
        model["sequence_length"] = sequence_length
    macs = sum(g["m"] * g["n"] * g["k"] * g["count"]
               for l in layers if not l.get("aux") and l["kind"] in ("conv", "linear", "attention")
               for g in l["gemms"])
    model["dtype_bytes"] = DTYPE_BYTES
    model["totals"] = {
        "params": sum(l["params"] for l in layers),
        "buffers": sum(l["buffers"] for l in layers),
        "weight_bytes": sum(l["weight_bytes"] for l in layers),
        "fwd_macs_per_sample": macs,
        "layers": len(layers),
    }
    model["layers"] = layers
    model["groupings"] = {}
    if b.groups:
        g = b.groups
        assert g[0] == 0 and all(x < y for x, y in zip(g, g[1:])) and g[-1] < len(layers), g
        model["groupings"]["pipeswitch"] = list(g)
    return model


TV = "torchvision.models.{} ({}); generated by traces/models/generate_zoo.py"

# ---------------------------------------------------------------------------
# ResNet (He et al., CVPR 2016; torchvision v1.5: stride on the 3x3 conv)
# ---------------------------------------------------------------------------


def resnet(name, display, block, stage_blocks, pipeswitch=False):
    b = Builder((3, 224, 224))
    expansion = 4 if block == "bottleneck" else 1
    if pipeswitch:
        b.mark_group()                       # stem: conv1 + bn1 (+relu) + maxpool
    b.conv("conv1", 64, 7, 2, 3)
    b.bn("bn1", act="relu")
    b.pool("maxpool", 3, 2, 1)
    inplanes = 64
    for si, (planes, nblocks) in enumerate(zip((64, 128, 256, 512), stage_blocks)):
        for bi in range(nblocks):
            stride = 2 if (si > 0 and bi == 0) else 1
            p = f"layer{si + 1}.{bi}"
            x = b.shape
            needs_ds = stride != 1 or inplanes != planes * expansion
            if pipeswitch:
                b.mark_group()               # one group per block
            if block == "bottleneck":
                b.conv(f"{p}.conv1", planes, 1)
                b.bn(f"{p}.bn1", act="relu")
                b.conv(f"{p}.conv2", planes, 3, stride, 1)
                b.bn(f"{p}.bn2", act="relu")
                b.conv(f"{p}.conv3", planes * 4, 1)
                last = f"{p}.bn3"
            else:
                b.conv(f"{p}.conv1", planes, 3, stride, 1)
                b.bn(f"{p}.bn1", act="relu")
                b.conv(f"{p}.conv2", planes, 3, 1, 1)
                last = f"{p}.bn2"
            if needs_ds:
                b.bn(last)
                y = b.shape
                b.shape = x
                b.conv(f"{p}.downsample.0", planes * expansion, 1, stride)
                b.bn(f"{p}.downsample.1", act="relu", residual=True)   # + identity add + relu
                assert b.shape == y
            else:
                b.bn(last, act="relu", residual=True)                  # + identity add + relu
            inplanes = planes * expansion
    if pipeswitch:
        b.mark_group()                       # head: avgpool + fc
    b.adaptive_avgpool("avgpool")
    b.linear("fc", 1000)
    return finish(b, name=name, display_name=display,
                  source=TV.format(name, "He et al., CVPR 2016"),
                  domain="vision", input_shape=(3, 224, 224))


# ---------------------------------------------------------------------------
# VGG (Simonyan & Zisserman, ICLR 2015) and AlexNet (torchvision variant)
# ---------------------------------------------------------------------------
VGG_CFGS = {
    "vgg11": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "vgg16": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M"],
    "vgg19": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
              512, 512, 512, 512, "M"],
}


def vgg(name, display):
    b = Builder((3, 224, 224))
    idx = 0                                   # index inside torchvision's nn.Sequential
    for v in VGG_CFGS[name]:
        if v == "M":
            b.pool(f"features.{idx}", 2, 2)
            idx += 1
        else:
            b.conv(f"features.{idx}", v, 3, 1, 1, bias=True, act="relu")
            idx += 2                          # Conv2d, ReLU
    b.adaptive_avgpool("avgpool", (7, 7))
    b.linear("classifier.0", 4096, act="relu")   # + ReLU, Dropout
    b.linear("classifier.3", 4096, act="relu")
    b.linear("classifier.6", 1000)
    return finish(b, name=name, display_name=display,
                  source=TV.format(name, "Simonyan & Zisserman, ICLR 2015"),
                  domain="vision", input_shape=(3, 224, 224))


def alexnet():
    b = Builder((3, 224, 224))
    b.conv("features.0", 64, 11, 4, 2, bias=True, act="relu")
    b.pool("features.2", 3, 2)
    b.conv("features.3", 192, 5, 1, 2, bias=True, act="relu")
    b.pool("features.5", 3, 2)
    b.conv("features.6", 384, 3, 1, 1, bias=True, act="relu")
    b.conv("features.8", 256, 3, 1, 1, bias=True, act="relu")
    b.conv("features.10", 256, 3, 1, 1, bias=True, act="relu")
    b.pool("features.12", 3, 2)
    b.adaptive_avgpool("avgpool", (6, 6))
    b.linear("classifier.1", 4096, act="relu")
    b.linear("classifier.4", 4096, act="relu")
    b.linear("classifier.6", 1000)
    return finish(b, name="alexnet", display_name="AlexNet",
                  source=TV.format("alexnet", "Krizhevsky, 'One weird trick', arXiv 1404.5997"),
                  domain="vision", input_shape=(3, 224, 224))


# ---------------------------------------------------------------------------
# OverFeat "fast" as in tf_cnn_benchmarks/models/overfeat_model.py
# (convs: bias + ReLU, SAME unless noted; mpool k2 s2 VALID; 1001 ImageNet classes)
# ---------------------------------------------------------------------------


def overfeat():
    b = Builder((3, 231, 231))
    b.conv("conv0", 96, 11, 4, 0, bias=True, act="relu")     # VALID
    b.pool("mpool0", 2, 2)
    b.conv("conv1", 256, 5, 1, 0, bias=True, act="relu")     # VALID
    b.pool("mpool1", 2, 2)
    for i, c in enumerate((512, 1024, 1024)):
        b.conv(f"conv{i + 2}", c, 3, 1, 1, bias=True, act="relu")   # SAME
    b.pool("mpool2", 2, 2)
    assert b.shape == (1024, 6, 6)
    b.linear("affine0", 3072, act="relu")                    # + dropout
    b.linear("affine1", 4096, act="relu")                    # + dropout
    b.linear("affine2", 1001)                                # logits (1000 + background)
    return finish(b, name="overfeat", display_name="OverFeat (fast)",
                  source="tf_cnn_benchmarks models/overfeat_model.py (Sermanet et al., ICLR 2014, "
                         "fast model); generated by traces/models/generate_zoo.py",
                  domain="vision", input_shape=(3, 231, 231))


# ---------------------------------------------------------------------------
# GoogLeNet (torchvision; Szegedy et al., CVPR 2015), no aux heads
# ---------------------------------------------------------------------------
GOOGLENET_INCEPTIONS = [  # name, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj
    ("inception3a", 64, 96, 128, 16, 32, 32), ("inception3b", 128, 128, 192, 32, 96, 64),
    "maxpool3",
    ("inception4a", 192, 96, 208, 16, 48, 64), ("inception4b", 160, 112, 224, 24, 64, 64),
    ("inception4c", 128, 128, 256, 24, 64, 64), ("inception4d", 112, 144, 288, 32, 64, 64),
    ("inception4e", 256, 160, 320, 32, 128, 128),
    "maxpool4",
    ("inception5a", 256, 160, 320, 32, 128, 128), ("inception5b", 384, 192, 384, 48, 128, 128),
]


def googlenet():
    b = Builder((3, 224, 224))
    b.conv_bn("conv1", 64, 7, 2, 3)
    b.pool("maxpool1", 3, 2, ceil_mode=True)
    b.conv_bn("conv2", 64, 1)
    b.conv_bn("conv3", 192, 3, 1, 1)
    b.pool("maxpool2", 3, 2, ceil_mode=True)
    for spec in GOOGLENET_INCEPTIONS:
        if spec == "maxpool3":
            b.pool("maxpool3", 3, 2, ceil_mode=True)
            continue
        if spec == "maxpool4":
            b.pool("maxpool4", 2, 2, ceil_mode=True)
            continue
        n, c1, c3r, c3, c5r, c5, pp = spec
        x, outs = b.shape, []
        b.conv_bn(f"{n}.branch1", c1, 1)
        outs.append(b.shape)
        b.shape = x
        b.conv_bn(f"{n}.branch2.0", c3r, 1)
        b.conv_bn(f"{n}.branch2.1", c3, 3, 1, 1)
        outs.append(b.shape)
        b.shape = x
        b.conv_bn(f"{n}.branch3.0", c5r, 1)
        b.conv_bn(f"{n}.branch3.1", c5, 3, 1, 1)   # torchvision uses 3x3 here (known quirk)
        outs.append(b.shape)
        b.shape = x
        b.pool(f"{n}.branch4.0", 3, 1, 1, ceil_mode=True)
        b.conv_bn(f"{n}.branch4.1", pp, 1)
        outs.append(b.shape)
        b.concat(outs)
    b.adaptive_avgpool("avgpool")
    b.linear("fc", 1000)                      # dropout before it is free
    return finish(b, name="googlenet", display_name="GoogLeNet",
                  source=TV.format("googlenet", "Szegedy et al., CVPR 2015; aux heads removed"),
                  domain="vision", input_shape=(3, 224, 224))


# ---------------------------------------------------------------------------
# MobileNetV2 (torchvision; Sandler et al., CVPR 2018)
# ---------------------------------------------------------------------------


def mobilenet_v2():
    b = Builder((3, 224, 224))
    b.conv_bn("features.0", 32, 3, 2, 1, act="relu6", conv="0", bn="1")
    inp, fi = 32, 1
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = inp * t
            p = f"features.{fi}.conv"
            j = 0
            if t != 1:                                  # pointwise expansion
                b.conv_bn(f"{p}.{j}", hidden, 1, act="relu6", conv="0", bn="1")
                j += 1
            b.conv_bn(f"{p}.{j}", hidden, 3, stride, 1, groups=hidden, act="relu6",
                      conv="0", bn="1")                 # depthwise
            b.conv(f"{p}.{j + 1}", c, 1)                # pointwise-linear projection
            b.bn(f"{p}.{j + 2}", residual=(stride == 1 and inp == c))
            inp, fi = c, fi + 1
    b.conv_bn(f"features.{fi}", 1280, 1, act="relu6", conv="0", bn="1")
    b.adaptive_avgpool("avgpool")                       # functional in torchvision
    b.linear("classifier.1", 1000)                      # Dropout(0.2) is classifier.0
    return finish(b, name="mobilenet_v2", display_name="MobileNetV2",
                  source=TV.format("mobilenet_v2", "Sandler et al., CVPR 2018"),
                  domain="vision", input_shape=(3, 224, 224))


# ---------------------------------------------------------------------------
# DenseNet-BC (torchvision; Huang et al., CVPR 2017), growth 32, bn_size 4
# ---------------------------------------------------------------------------


def densenet(name, display, block_config, growth=32, bn_size=4, init=64):
    b = Builder((3, 224, 224))
    b.conv("features.conv0", init, 7, 2, 3)
    b.bn("features.norm0", act="relu")
    b.pool("features.pool0", 3, 2, 1)
    ch = init
    for bi, nlayers in enumerate(block_config):
        for li in range(nlayers):
            p = f"features.denseblock{bi + 1}.denselayer{li + 1}"
            _, h, w = b.shape
            b.shape = (ch, h, w)                        # concat of all previous features
            b.bn(f"{p}.norm1", act="relu")
            b.conv(f"{p}.conv1", bn_size * growth, 1)
            b.bn(f"{p}.norm2", act="relu")
            b.conv(f"{p}.conv2", growth, 3, 1, 1)
            ch += growth
        _, h, w = b.shape
        b.shape = (ch, h, w)
        if bi != len(block_config) - 1:
            p = f"features.transition{bi + 1}"
            b.bn(f"{p}.norm", act="relu")
            b.conv(f"{p}.conv", ch // 2, 1)
            b.pool(f"{p}.pool", 2, 2, mode="avg")
            ch //= 2
    b.bn("features.norm5", act="relu")                 # F.relu in forward()
    b.adaptive_avgpool("avgpool")                       # functional in torchvision
    b.linear("classifier", 1000)
    return finish(b, name=name, display_name=display,
                  source=TV.format(name, "Huang et al., CVPR 2017"),
                  domain="vision", input_shape=(3, 224, 224))


# ---------------------------------------------------------------------------
# Inception-v3 (torchvision; Szegedy et al., CVPR 2016), with AuxLogits
# ---------------------------------------------------------------------------


def _branches(b, *fns):
    """Run each branch from the same input, then concat the outputs."""
    x, outs = b.shape, []
    for fn in fns:
        b.shape = x
        fn()
        outs.append(b.shape)
    b.concat(outs)


def _inception_v3_blocks(b, n, kind, arg=None):
    c = lambda *a, **k: (lambda: b.conv_bn(*a, **k))  # noqa: E731  (deferred conv_bn)

    def seq(*fs):
        return lambda: [f() for f in fs]

    if kind == "A":          # InceptionA(in, pool_features=arg)
        _branches(b,
                  c(f"{n}.branch1x1", 64, 1),
                  seq(c(f"{n}.branch5x5_1", 48, 1), c(f"{n}.branch5x5_2", 64, 5, 1, 2)),
                  seq(c(f"{n}.branch3x3dbl_1", 64, 1), c(f"{n}.branch3x3dbl_2", 96, 3, 1, 1),
                      c(f"{n}.branch3x3dbl_3", 96, 3, 1, 1)),
                  seq(lambda: b.pool(f"{n}.avg_pool", 3, 1, 1, mode="avg"),
                      c(f"{n}.branch_pool", arg, 1)))
    elif kind == "B":        # InceptionB: grid reduction 35 -> 17
        _branches(b,
                  c(f"{n}.branch3x3", 384, 3, 2),
                  seq(c(f"{n}.branch3x3dbl_1", 64, 1), c(f"{n}.branch3x3dbl_2", 96, 3, 1, 1),
                      c(f"{n}.branch3x3dbl_3", 96, 3, 2)),
                  lambda: b.pool(f"{n}.max_pool", 3, 2))
    elif kind == "C":        # InceptionC(in, channels_7x7=arg)
        c7 = arg
        _branches(b,
                  c(f"{n}.branch1x1", 192, 1),
                  seq(c(f"{n}.branch7x7_1", c7, 1), c(f"{n}.branch7x7_2", c7, (1, 7), 1, (0, 3)),
                      c(f"{n}.branch7x7_3", 192, (7, 1), 1, (3, 0))),
                  seq(c(f"{n}.branch7x7dbl_1", c7, 1),
                      c(f"{n}.branch7x7dbl_2", c7, (7, 1), 1, (3, 0)),
                      c(f"{n}.branch7x7dbl_3", c7, (1, 7), 1, (0, 3)),
                      c(f"{n}.branch7x7dbl_4", c7, (7, 1), 1, (3, 0)),
                      c(f"{n}.branch7x7dbl_5", 192, (1, 7), 1, (0, 3))),
                  seq(lambda: b.pool(f"{n}.avg_pool", 3, 1, 1, mode="avg"),
                      c(f"{n}.branch_pool", 192, 1)))
    elif kind == "D":        # InceptionD: grid reduction 17 -> 8
        _branches(b,
                  seq(c(f"{n}.branch3x3_1", 192, 1), c(f"{n}.branch3x3_2", 320, 3, 2)),
                  seq(c(f"{n}.branch7x7x3_1", 192, 1),
                      c(f"{n}.branch7x7x3_2", 192, (1, 7), 1, (0, 3)),
                      c(f"{n}.branch7x7x3_3", 192, (7, 1), 1, (3, 0)),
                      c(f"{n}.branch7x7x3_4", 192, 3, 2)),
                  lambda: b.pool(f"{n}.max_pool", 3, 2))
    elif kind == "E":        # InceptionE: expanded filter bank
        def split(a, bb):       # 1x3 and 3x1 heads on the same input, concatenated
            return lambda: _branches(b, c(a, 384, (1, 3), 1, (0, 1)), c(bb, 384, (3, 1), 1, (1, 0)))
        _branches(b,
                  c(f"{n}.branch1x1", 320, 1),
                  seq(c(f"{n}.branch3x3_1", 384, 1),
                      split(f"{n}.branch3x3_2a", f"{n}.branch3x3_2b")),
                  seq(c(f"{n}.branch3x3dbl_1", 448, 1), c(f"{n}.branch3x3dbl_2", 384, 3, 1, 1),
                      split(f"{n}.branch3x3dbl_3a", f"{n}.branch3x3dbl_3b")),
                  seq(lambda: b.pool(f"{n}.avg_pool", 3, 1, 1, mode="avg"),
                      c(f"{n}.branch_pool", 192, 1)))
    else:
        raise ValueError(kind)


def inception_v3():
    b = Builder((3, 299, 299))
    g = b.mark_group
    g(); b.conv_bn("Conv2d_1a_3x3", 32, 3, 2)
    g(); b.conv_bn("Conv2d_2a_3x3", 32, 3)
    g(); b.conv_bn("Conv2d_2b_3x3", 64, 3, 1, 1)
    b.pool("maxpool1", 3, 2)                           # joins the 2b group
    g(); b.conv_bn("Conv2d_3b_1x1", 80, 1)
    g(); b.conv_bn("Conv2d_4a_3x3", 192, 3)
    b.pool("maxpool2", 3, 2)                           # joins the 4a group
    for n, kind, arg in [("Mixed_5b", "A", 32), ("Mixed_5c", "A", 64), ("Mixed_5d", "A", 64),
                         ("Mixed_6a", "B", None), ("Mixed_6b", "C", 128), ("Mixed_6c", "C", 160),
                         ("Mixed_6d", "C", 160), ("Mixed_6e", "C", 192)]:
        g(); _inception_v3_blocks(b, n, kind, arg)
    # AuxLogits (InceptionAux): computed from Mixed_6e's output in training only.
    x = b.shape
    g(); b.aux = True
    b.pool("AuxLogits.avg_pool", 5, 3, mode="avg")
    b.conv_bn("AuxLogits.conv0", 128, 1)
    b.conv_bn("AuxLogits.conv1", 768, 5)
    b.adaptive_avgpool("AuxLogits.adaptive_avg_pool")
    b.linear("AuxLogits.fc", 1000)
    b.aux, b.shape = False, x
    for n, kind in [("Mixed_7a", "D"), ("Mixed_7b", "E"), ("Mixed_7c", "E")]:
        g(); _inception_v3_blocks(b, n, kind)
    assert b.shape == (2048, 8, 8)
    g(); b.adaptive_avgpool("avgpool")
    b.linear("fc", 1000)                                # dropout before it is free
    return finish(b, name="inception_v3", display_name="Inception-v3",
                  source=TV.format("inception_v3", "Szegedy et al., CVPR 2016; with AuxLogits"),
                  domain="vision", input_shape=(3, 299, 299))


# ---------------------------------------------------------------------------
# Inception-v4 (Szegedy et al., AAAI 2017 / arXiv 1602.07261), as in
# Cadene's pretrainedmodels / timm inception_v4 (1000 classes)
# ---------------------------------------------------------------------------


def inception_v4():
    b = Builder((3, 299, 299))
    c = lambda *a, **k: (lambda: b.conv_bn(*a, **k))  # noqa: E731

    def seq(*fs):
        return lambda: [f() for f in fs]

    def pool(name, k, s, p=0, mode="max"):
        return lambda: b.pool(name, k, s, p, mode=mode)

    b.conv_bn("features.0", 32, 3, 2)
    b.conv_bn("features.1", 32, 3)
    b.conv_bn("features.2", 64, 3, 1, 1)
    _branches(b, pool("features.3.maxpool", 3, 2), c("features.3.conv", 96, 3, 2))   # Mixed_3a
    _branches(b,                                                                     # Mixed_4a
              seq(c("features.4.branch0.0", 64, 1), c("features.4.branch0.1", 96, 3)),
              seq(c("features.4.branch1.0", 64, 1),
                  c("features.4.branch1.1", 64, (1, 7), 1, (0, 3)),
                  c("features.4.branch1.2", 64, (7, 1), 1, (3, 0)),
                  c("features.4.branch1.3", 96, 3)))
    _branches(b, c("features.5.conv", 192, 3, 2), pool("features.5.maxpool", 3, 2))  # Mixed_5a
    fi = 6
    for _ in range(4):                                                               # Inception_A
        n = f"features.{fi}"
        _branches(b,
                  c(f"{n}.branch0", 96, 1),
                  seq(c(f"{n}.branch1.0", 64, 1), c(f"{n}.branch1.1", 96, 3, 1, 1)),
                  seq(c(f"{n}.branch2.0", 64, 1), c(f"{n}.branch2.1", 96, 3, 1, 1),
                      c(f"{n}.branch2.2", 96, 3, 1, 1)),
                  seq(pool(f"{n}.branch3.0", 3, 1, 1, "avg"), c(f"{n}.branch3.1", 96, 1)))
        fi += 1
    n = f"features.{fi}"                                                             # Reduction_A
    _branches(b,
              c(f"{n}.branch0", 384, 3, 2),
              seq(c(f"{n}.branch1.0", 192, 1), c(f"{n}.branch1.1", 224, 3, 1, 1),
                  c(f"{n}.branch1.2", 256, 3, 2)),
              pool(f"{n}.branch2", 3, 2))
    fi += 1
    for _ in range(7):                                                               # Inception_B
        n = f"features.{fi}"
        _branches(b,
                  c(f"{n}.branch0", 384, 1),
                  seq(c(f"{n}.branch1.0", 192, 1), c(f"{n}.branch1.1", 224, (1, 7), 1, (0, 3)),
                      c(f"{n}.branch1.2", 256, (7, 1), 1, (3, 0))),
                  seq(c(f"{n}.branch2.0", 192, 1), c(f"{n}.branch2.1", 192, (7, 1), 1, (3, 0)),
                      c(f"{n}.branch2.2", 224, (1, 7), 1, (0, 3)),
                      c(f"{n}.branch2.3", 224, (7, 1), 1, (3, 0)),
                      c(f"{n}.branch2.4", 256, (1, 7), 1, (0, 3))),
                  seq(pool(f"{n}.branch3.0", 3, 1, 1, "avg"), c(f"{n}.branch3.1", 128, 1)))
        fi += 1
    n = f"features.{fi}"                                                             # Reduction_B
    _branches(b,
              seq(c(f"{n}.branch0.0", 192, 1), c(f"{n}.branch0.1", 192, 3, 2)),
              seq(c(f"{n}.branch1.0", 256, 1), c(f"{n}.branch1.1", 256, (1, 7), 1, (0, 3)),
                  c(f"{n}.branch1.2", 320, (7, 1), 1, (3, 0)), c(f"{n}.branch1.3", 320, 3, 2)),
              pool(f"{n}.branch2", 3, 2))
    fi += 1
    for _ in range(3):                                                               # Inception_C
        n = f"features.{fi}"

        def split(a, bb, cout=256):
            return lambda: _branches(b, c(a, cout, (1, 3), 1, (0, 1)), c(bb, cout, (3, 1), 1, (1, 0)))
        _branches(b,
                  c(f"{n}.branch0", 256, 1),
                  seq(c(f"{n}.branch1_0", 384, 1), split(f"{n}.branch1_1a", f"{n}.branch1_1b")),
                  seq(c(f"{n}.branch2_0", 384, 1), c(f"{n}.branch2_1", 448, (3, 1), 1, (1, 0)),
                      c(f"{n}.branch2_2", 512, (1, 3), 1, (0, 1)),
                      split(f"{n}.branch2_3a", f"{n}.branch2_3b")),
                  seq(pool(f"{n}.branch3.0", 3, 1, 1, "avg"), c(f"{n}.branch3.1", 256, 1)))
        fi += 1
    assert b.shape == (1536, 8, 8)
    b.adaptive_avgpool("global_pool")
    b.linear("last_linear", 1000)
    return finish(b, name="inception_v4", display_name="Inception-v4",
                  source="timm inception_v4 / Cadene pretrainedmodels inceptionv4 with 1000 classes "
                         "(Szegedy et al., AAAI 2017); generated by traces/models/generate_zoo.py",
                  domain="vision", input_shape=(3, 299, 299))


# ---------------------------------------------------------------------------
# BERT-base-cased (Devlin et al., NAACL 2019; HuggingFace BertModel with pooler)
# ---------------------------------------------------------------------------


def bert_base(name, seq_len, vocab=28996, hidden=768, layers=12, heads=12,
              intermediate=3072, max_pos=512, type_vocab=2):
    b = Builder((seq_len,))
    g = b.mark_group
    g()                                                  # group: embeddings
    b.embedding("embeddings.word_embeddings", vocab, hidden, seq_len)
    b.embedding("embeddings.position_embeddings", max_pos, hidden, seq_len)
    b.embedding("embeddings.token_type_embeddings", type_vocab, hidden, seq_len)
    b.layernorm("embeddings.LayerNorm", residual_inputs=2)   # word + position + token_type sum
    for i in range(layers):
        p = f"encoder.layer.{i}"
        g()                                              # group: attention (self + output)
        b.linear(f"{p}.attention.self.query", hidden)
        b.linear(f"{p}.attention.self.key", hidden)
        b.linear(f"{p}.attention.self.value", hidden)
        b.attention(f"{p}.attention.self.dot_product", heads)
        b.linear(f"{p}.attention.output.dense", hidden)
        b.layernorm(f"{p}.attention.output.LayerNorm", residual_inputs=1)
        g()                                              # group: intermediate
        b.linear(f"{p}.intermediate.dense", intermediate, act="gelu")
        g()                                              # group: output
        b.linear(f"{p}.output.dense", hidden)
        b.layernorm(f"{p}.output.LayerNorm", residual_inputs=1)
    b.shape = (1, hidden)                                # pooler reads the [CLS] token only
    g(); b.linear("pooler.dense", hidden)
    g(); b.elementwise("pooler.activation", ACT_FLOPS["tanh"])   # PipeSwitch's 39th group
    return finish(b, name=name, display_name=f"BERT-base-cased (seq {seq_len})",
                  source="HuggingFace transformers BertModel, bert-base-cased config (Devlin et al., "
                         "NAACL 2019); generated by traces/models/generate_zoo.py",
                  domain="language", input_shape=(seq_len,), sequence_length=seq_len)


# ---------------------------------------------------------------------------
# Small Salus workloads (sizes chosen here; see README)
# ---------------------------------------------------------------------------


def vae():
    b = Builder((784,))
    b.linear("fc1", 400, act="relu")
    x = b.shape
    b.linear("fc21", 20)                                 # mu
    b.shape = x
    b.linear("fc22", 20)                                 # logvar
    b.layers[-1]["fwd_flops"] += 20 * REPARAM_FLOPS      # reparameterisation folded into fc22
    b.layers[-1]["bwd_flops"] += 2 * 20 * REPARAM_FLOPS
    b.linear("fc3", 400, act="relu")
    b.linear("fc4", 784, act="sigmoid")
    return finish(b, name="vae", display_name="VAE (MNIST)",
                  source="PyTorch examples vae/main.py (Kingma & Welling, ICLR 2014); "
                         "generated by traces/models/generate_zoo.py",
                  domain="other", input_shape=(784,))


def superres(upscale=3, size=224):
    b = Builder((1, size, size))
    b.conv("conv1", 64, 5, 1, 2, bias=True, act="relu")
    b.conv("conv2", 64, 3, 1, 1, bias=True, act="relu")
    b.conv("conv3", 32, 3, 1, 1, bias=True, act="relu")
    b.conv("conv4", upscale ** 2, 3, 1, 1, bias=True)    # + PixelShuffle (a reshape: free)
    c, h, w = b.shape
    b.shape = (c // upscale ** 2, h * upscale, w * upscale)
    return finish(b, name="superres", display_name="Super-resolution (ESPCN, x3)",
                  source="PyTorch examples super_resolution/model.py (Shi et al., CVPR 2016, "
                         "upscale 3); generated by traces/models/generate_zoo.py",
                  domain="vision", input_shape=(1, size, size))


def seq2seq(vocab=10000, emb=256, hidden=512, nlayers=2, seq_len=30):
    b = Builder((seq_len,))
    for side in ("encoder", "decoder"):                  # decoder uses teacher forcing
        b.embedding(f"{side}.embedding", vocab, emb, seq_len)
        for li in range(nlayers):
            b.lstm(f"{side}.lstm.l{li}", hidden)
    b.linear("decoder.out", vocab, act="softmax")
    return finish(b, name="seq2seq", display_name="Seq2seq (2x LSTM-512 enc/dec)",
                  source="LSTM encoder-decoder (Sutskever et al., NIPS 2014), sizes chosen for gpumux "
                         "(see README); generated by traces/models/generate_zoo.py",
                  domain="language", input_shape=(seq_len,), sequence_length=seq_len)


def speech(freq=161, frames=300, hidden=800, nrnn=3, classes=29):
    b = Builder((1, freq, frames))
    b.conv("conv1", 32, (41, 11), (2, 2), (20, 5))
    b.bn("bn1", act="hardtanh")
    b.conv("conv2", 32, (21, 11), (2, 1), (10, 5))
    b.bn("bn2", act="hardtanh")
    c, f, t = b.shape
    b.shape = (t, c * f)                                 # (C, F, T) -> T x (C*F): free reshape
    for i in range(nrnn):
        b.gru(f"rnn.{i}", hidden, bidirectional=True)
    b.linear("fc", classes, act="softmax")
    return finish(b, name="speech", display_name="Speech (DeepSpeech2-small)",
                  source="DeepSpeech2-style (Amodei et al., ICML 2016): 2 conv + 3 BiGRU-800 + FC, "
                         "sizes chosen for gpumux (see README); generated by traces/models/generate_zoo.py",
                  domain="other", input_shape=(1, freq, frames), sequence_length=frames)


# ---------------------------------------------------------------------------
# Fluid (Yu, Liu & Chowdhury, MLSys 2021) workloads, from SymbioticLab/Fluid's
# workloads/common/{cifar,wlm,dcgan}.py; configs chosen at the middle of each search space
# (see README)
# ---------------------------------------------------------------------------
FLUID_SRC = "SymbioticLab/Fluid {} @ 3598be4f640514a72b4d67e18d7cfbc4a8cd7fd8"


def fluid_cifar_alexnet(conv_1=64, conv_2=128, dense_1=1024):
    """workloads/common/cifar.py CNN: 6 conv in 3 blocks (BN after the first conv of each
    block only) + 3 FC.  Defaults = the code's own comments ("# 64, 128, 0.05", "# 1024, 0.1"),
    which are the middle values of the PBT sets {32,64,128} and {64,128,256}."""
    b = Builder((3, 32, 32))
    b.conv("conv_layer.0", 32, 3, 1, 1, bias=True)       # block 1
    b.bn("conv_layer.1", act="relu")
    b.conv("conv_layer.3", conv_1, 3, 1, 1, bias=True, act="relu")
    b.pool("conv_layer.5", 2, 2)
    b.conv("conv_layer.6", conv_2, 3, 1, 1, bias=True)   # block 2
    b.bn("conv_layer.7", act="relu")
    b.conv("conv_layer.9", 128, 3, 1, 1, bias=True, act="relu")
    b.pool("conv_layer.11", 2, 2)                         # Dropout2d (p=int(...) = 0) is free
    b.conv("conv_layer.13", 256, 3, 1, 1, bias=True)     # block 3
    b.bn("conv_layer.14", act="relu")
    b.conv("conv_layer.16", 256, 3, 1, 1, bias=True, act="relu")
    b.pool("conv_layer.18", 2, 2)
    assert b.shape == (256, 4, 4)                         # the code's nn.Linear(4096, ...)
    b.linear("fc_layer.1", dense_1, act="relu")
    b.linear("fc_layer.3", 512, act="relu")
    b.linear("fc_layer.6", 10)
    return finish(b, name="fluid_cifar_alexnet", display_name="Fluid CIFAR-10 AlexNet variant",
                  source=FLUID_SRC.format("workloads/common/cifar.py")
                  + f" (CNN, conv_1={conv_1}, conv_2={conv_2}, dense_1={dense_1}; batch 64); "
                    "generated by traces/models/generate_zoo.py",
                  domain="vision", input_shape=(3, 32, 32))


def fluid_wlm_lstm(ntoken=33278, emsize=200, nhid=200, nlayers=3, bptt=35):
    """word_language_model RNNModel('LSTM', ...), tie_weights False as wlm.py builds it.
    ntoken: WikiText-2 vocabulary incl. <eos> (len(corpus.dictionary)); see README."""
    b = Builder((bptt,))
    b.embedding("encoder", ntoken, emsize, bptt)
    for li in range(nlayers):                             # nn.LSTM(ninp, nhid, nlayers)
        b.lstm(f"rnn.l{li}", nhid)
    b.linear("decoder", ntoken, act="softmax")            # + log_softmax
    return finish(b, name="fluid_wlm_lstm", display_name="Fluid WLM (3x LSTM-200, WikiText-2)",
                  source=FLUID_SRC.format("workloads/common/wlm.py + "
                                          "workloads/word_language_model/model.py")
                  + f" (RNNModel LSTM, ntoken={ntoken}, emsize={emsize}, nhid={nhid}, "
                    f"nlayers={nlayers}, bptt={bptt}; batch 20); "
                    "generated by traces/models/generate_zoo.py",
                  domain="language", input_shape=(bptt,), sequence_length=bptt)


def fluid_dcgan_mnist(latent=100, features=32, channels=1):
    """RaySGD DCGAN (ray/util/sgd/torch/examples/dcgan.py, imported by Fluid's dcgan.py):
    Generator then Discriminator, i.e. the generator step D(G(z)); see README for the
    iteration."""
    b = Builder((latent, 1, 1))
    f = features
    for i, (cout, s, p) in enumerate([(f * 4, 1, 0), (f * 2, 2, 1), (f, 2, 1)]):
        b.conv_transpose(f"generator.main.{3 * i}", cout, 4, s, p)
        b.bn(f"generator.main.{3 * i + 1}", act="relu")
    b.conv_transpose("generator.main.9", channels, 4, 2, 1, act="tanh")
    assert b.shape == (channels, 32, 32)
    b.conv("discriminator.main.0", f, 4, 2, 1, act="leaky_relu")
    b.conv("discriminator.main.2", f * 2, 4, 2, 1)
    b.bn("discriminator.main.3", act="leaky_relu")
    b.conv("discriminator.main.5", f * 4, 4, 2, 1)
    b.bn("discriminator.main.6", act="leaky_relu")
    b.conv("discriminator.main.8", 1, 4, 1, 0, act="sigmoid")
    assert b.shape == (1, 1, 1)
    return finish(b, name="fluid_dcgan_mnist", display_name="Fluid DCGAN (MNIST 32x32, G + D)",
                  source=FLUID_SRC.format("workloads/common/dcgan.py") + " importing "
                  "ray-project/ray python/ray/util/sgd/torch/examples/dcgan.py @ "
                  "01410b1492f0929c14725f631ecc9deeddfd8bca (Generator(100, 32, 1) then "
                  "Discriminator(32, 1); batch 32); generated by traces/models/generate_zoo.py",
                  domain="vision", input_shape=(latent, 1, 1))


# ---------------------------------------------------------------------------
# Zoo, serialisation, CLI
# ---------------------------------------------------------------------------
ZOO = [
    lambda: resnet("resnet18", "ResNet-18", "basic", (2, 2, 2, 2)),
    lambda: resnet("resnet50", "ResNet-50", "bottleneck", (3, 4, 6, 3)),
    lambda: resnet("resnet101", "ResNet-101", "bottleneck", (3, 4, 23, 3)),
    lambda: resnet("resnet152", "ResNet-152", "bottleneck", (3, 8, 36, 3), pipeswitch=True),
    lambda: vgg("vgg11", "VGG-11"),
    lambda: vgg("vgg16", "VGG-16"),
    lambda: vgg("vgg19", "VGG-19"),
    alexnet,
    overfeat,
    googlenet,
    mobilenet_v2,
    lambda: densenet("densenet121", "DenseNet-121", (6, 12, 24, 16)),
    lambda: densenet("densenet169", "DenseNet-169", (6, 12, 32, 32)),
    inception_v3,
    inception_v4,
    lambda: bert_base("bert_base", 128),
    lambda: bert_base("bert_base_seq251", 251),
    vae,
    superres,
    seq2seq,
    speech,
    fluid_cifar_alexnet,
    fluid_wlm_lstm,
    fluid_dcgan_mnist,
]


def build_all():
    return [f() for f in ZOO]


def dumps(model):
    """Deterministic JSON: top-level keys one per line, one layer per line."""
    d = lambda v: json.dumps(v, separators=(", ", ": "))  # noqa: E731
    lines = ["{"]
    for key, val in model.items():
        if key == "layers":
            body = ",\n  ".join(d(l) for l in val)
            lines.append(f' "layers": [\n  {body}\n ],')
        else:
            lines.append(f" {json.dumps(key)}: {d(val)},")
    lines[-1] = lines[-1].rstrip(",")
    lines.append("}")
    return "\n".join(lines) + "\n"


def table(models):
    rows = ["| model | params | buffers | fp32 MiB (params+buffers) | fwd GMAC/sample | layers | pipeswitch groups |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for m in models:
        t = m["totals"]
        ng = len(m["groupings"].get("pipeswitch", [])) or "-"
        rows.append(f"| {m['name']} | {t['params']:,} | {t['buffers']:,} | "
                    f"{t['weight_bytes'] / 2**20:.1f} | {t['fwd_macs_per_sample'] / 1e9:.3f} | "
                    f"{t['layers']} | {ng} |")
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if any checked-in file differs")
    ap.add_argument("--table", action="store_true", help="print the per-model totals table")
    ap.add_argument("--out", default=HERE, help="output directory (default: this folder)")
    args = ap.parse_args(argv)
    models = build_all()
    if args.table:
        print(table(models))
        return 0
    stale = []
    for m in models:
        path = os.path.join(args.out, m["name"] + ".json")
        text = dumps(m)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path)
            except FileNotFoundError:
                stale.append(path)
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
    if args.check:
        for p in stale:
            print(f"stale or missing: {p}", file=sys.stderr)
        print(f"{len(models)} models, {len(stale)} differ")
        return 1 if stale else 0
    print(f"wrote {len(models)} models to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
