"""The shape-tracking Builder of gpumux's model zoo and the per-layer cost conventions it uses
(activation and normalisation FLOPs, the JSON record of a model). generate_zoo.py and the
architecture modules build every model with it; traces/models/README.md has the schema.
"""

import os

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
