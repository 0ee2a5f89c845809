"""The zoo's vision architectures (ResNet, VGG, AlexNet, OverFeat, GoogLeNet, MobileNetV2,
DenseNet, Inception-v3/v4), each built from its definition with zoo_builder.Builder.
"""

from zoo_builder import *  # noqa: F401,F403  (Builder, finish, TV and the FLOP constants)
from zoo_builder import _out_dim, _pair, _prod  # noqa: F401

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
