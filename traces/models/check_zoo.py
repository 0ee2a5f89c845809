#!/usr/bin/env python3
"""Check the layer-level model zoo (traces/models/*.json) against published numbers.

Stdlib only.  Exits 1 on the first failed assertion, 0 otherwise; prints the totals
table and the PipeSwitch group-size comparison for ResNet-152 and Inception-v3.

    python3 traces/models/check_zoo.py
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"conv", "linear", "norm", "pool", "embedding", "attention", "elementwise"}
LAYER_KEYS = ["name", "kind", "params", "buffers", "tensors", "weight_bytes", "input_bytes",
              "output_bytes", "fwd_flops", "bwd_flops", "gemms"]
TOP_KEYS = {"name", "display_name", "source", "domain", "input_shape", "dtype_bytes", "totals",
            "layers", "groupings"}

# name -> (published params, published forward GMAC/sample or None, where from)
PUBLISHED = {
    "resnet18": (11_689_512, 1.81, "torchvision docs"),
    "resnet50": (25_557_032, 4.1, "torchvision docs"),
    "resnet101": (44_549_160, 7.8, "torchvision docs"),
    "resnet152": (60_192_808, 11.5, "torchvision docs"),
    "vgg11": (132_863_336, 7.61, "torchvision docs"),
    "vgg16": (138_357_544, 15.5, "torchvision docs"),
    "vgg19": (143_667_240, 19.63, "torchvision docs"),
    "alexnet": (61_100_840, 0.71, "torchvision docs"),
    "googlenet": (6_624_904, 1.5, "torchvision docs"),
    "mobilenet_v2": (3_504_872, 0.3, "torchvision docs"),
    "densenet121": (7_978_856, 2.9, "torchvision docs"),
    "densenet169": (14_149_480, 3.36, "torchvision docs"),
    "inception_v3": (27_161_264, 5.7, "torchvision docs"),
    # timm inception_v4 (1000 classes); ~12.3 GMAC is the usual MAC-counting figure
    "inception_v4": (42_679_816, 12.3, "timm inception_v4"),
    # BERT-base-cased: 22.67M (embeddings, vocab 28,996) + 12 x 7.09M + 0.59M (pooler) = 108.31M,
    # our arithmetic; ~22 GFLOP at seq 128 (2 x 85 M non-embedding params x 128 tokens + attention)
    "bert_base": (108_310_272, 11.0, "our arithmetic (embeddings + 12 layers + pooler)"),
    "bert_base_seq251": (108_310_272, None, "our arithmetic"),
}


def closed_form_params():
    """Independent arithmetic for the models without an exact published count."""
    lin = lambda i, o, bias=True: i * o + (o if bias else 0)       # noqa: E731
    conv = lambda ci, co, kh, kw, bias=True: ci * co * kh * kw + (co if bias else 0)  # noqa: E731
    lstm = lambda i, h: 4 * h * (i + h) + 8 * h                    # noqa: E731
    bigru = lambda i, h: 2 * (3 * h * (i + h) + 6 * h)              # noqa: E731
    return {
        # tf_cnn_benchmarks overfeat_model.py (1001 classes)
        "overfeat": (conv(3, 96, 11, 11) + conv(96, 256, 5, 5) + conv(256, 512, 3, 3)
                     + conv(512, 1024, 3, 3) + conv(1024, 1024, 3, 3)
                     + lin(1024 * 36, 3072) + lin(3072, 4096) + lin(4096, 1001)),
        "vae": lin(784, 400) + 2 * lin(400, 20) + lin(20, 400) + lin(400, 784),
        "superres": conv(1, 64, 5, 5) + conv(64, 64, 3, 3) + conv(64, 32, 3, 3) + conv(32, 9, 3, 3),
        "seq2seq": 2 * (10000 * 256 + lstm(256, 512) + lstm(512, 512)) + lin(512, 10000),
        "speech": (conv(1, 32, 41, 11, False) + 2 * 32 + conv(32, 32, 21, 11, False) + 2 * 32
                   + bigru(32 * 41, 800) + 2 * bigru(1600, 800) + lin(1600, 29)),
        # Fluid cifar.py CNN, conv_1 64, conv_2 128, dense_1 1024: convs 1,126,080 + BN 832
        # + FC 4,725,258 = 5,852,170
        "fluid_cifar_alexnet": (conv(3, 32, 3, 3) + conv(32, 64, 3, 3) + conv(64, 128, 3, 3)
                                + conv(128, 128, 3, 3) + conv(128, 256, 3, 3) + conv(256, 256, 3, 3)
                                + 2 * (32 + 128 + 256)
                                + lin(256 * 4 * 4, 1024) + lin(1024, 512) + lin(512, 10)),
        # RNNModel LSTM: encoder 6,655,600 + 3 x 321,600 + decoder 6,688,878 = 14,309,278
        "fluid_wlm_lstm": 33278 * 200 + 3 * lstm(200, 200) + lin(200, 33278),
        # RaySGD DCGAN: G = 369,152 (ConvT weights C_in*C_out*4*4) + BN 448 = 369,600;
        # D = 166,400 + BN 384 = 166,784; sum 536,384
        "fluid_dcgan_mnist": (conv(100, 128, 4, 4, False) + conv(128, 64, 4, 4, False)
                              + conv(64, 32, 4, 4, False) + conv(32, 1, 4, 4, False)
                              + 2 * (128 + 64 + 32)
                              + conv(1, 32, 4, 4, False) + conv(32, 64, 4, 4, False)
                              + conv(64, 128, 4, 4, False) + conv(128, 1, 4, 4, False)
                              + 2 * (64 + 128)),
    }


PIPESWITCH_GROUPS = {"resnet152": 52, "inception_v3": 18, "bert_base": 39, "bert_base_seq251": 39}

# Reference values, our own computation with torchvision 0.14 constructors (not published): PipeSwitch
# group sizes in MiB, every tensor padded to 512 B as netx-repo/PipeSwitch task/common.py
# group_to_batch does, with the groups of its task/<model>.py partition_model.
REF_RESNET152 = [0.04, 0.29, 0.27, 0.27, 1.46] + [1.07] * 7 + [5.79] + [4.27] * 35 + \
    [23.08, 17.05, 17.05, 7.82]
# Same source: forward GMAC per group (AuxLogits, group 13, is not executed at inference)
REF_INCEPTION_V3_GMAC = [0.02, 0.20, 0.40, 0.03, 0.70, 0.31, 0.34, 0.35, 0.40, 0.37, 0.49, 0.49,
                             0.62, None, 0.29, 0.32, 0.39, 0.002]
REF_INCEPTION_V3 = [0.01, 0.04, 0.07, 0.02, 0.53, 0.99, 1.07, 1.10, 4.41, 4.96, 6.48, 6.48,
                        8.20, 12.70, 6.49, 19.27, 23.21, 7.82]


class CheckError(Exception):
    pass


def ensure(cond, msg):
    if not cond:
        raise CheckError(msg)


def check_model(m):
    name = m["name"]
    ensure(TOP_KEYS <= set(m), f"{name}: missing top-level keys {TOP_KEYS - set(m)}")
    ensure(m["dtype_bytes"] == 4, f"{name}: dtype_bytes")
    ensure(m["domain"] in ("vision", "language", "other"), f"{name}: domain")
    layers = m["layers"]
    macs = 0
    for i, l in enumerate(layers):
        where = f"{name} layer {i} ({l.get('name')})"
        ensure(list(l)[:len(LAYER_KEYS)] == LAYER_KEYS and set(l) - set(LAYER_KEYS) <= {"aux"},
               f"{where}: keys {list(l)}")
        ensure(l["kind"] in KINDS, f"{where}: kind {l['kind']}")
        for k in LAYER_KEYS[2:10]:
            ensure(isinstance(l[k], int) and l[k] >= 0, f"{where}: {k} not a non-negative int")
        ensure(l["weight_bytes"] == (l["params"] + l["buffers"]) * 4, f"{where}: weight_bytes")
        ensure((l["tensors"] == 0) == (l["params"] + l["buffers"] == 0), f"{where}: tensors")
        ensure(l["output_bytes"] > 0 and l["input_bytes"] > 0, f"{where}: activation bytes")
        if "aux" in l:
            ensure(l["aux"] is True and name == "inception_v3", f"{where}: aux only on Inception-v3")
        gflops = 0
        for g in l["gemms"]:
            ensure(set(g) == {"m", "n", "k", "count"} and all(isinstance(v, int) and v > 0
                                                              for v in g.values()), f"{where}: gemm {g}")
            gflops += 2 * g["m"] * g["n"] * g["k"] * g["count"]
        ensure(bool(l["gemms"]) == (l["kind"] in ("conv", "linear", "attention")), f"{where}: gemms")
        ensure(l["fwd_flops"] >= gflops, f"{where}: fwd_flops below GEMM flops")
        if not l.get("aux") and l["kind"] in ("conv", "linear", "attention"):
            macs += gflops // 2
    t = m["totals"]
    ensure(t["layers"] == len(layers), f"{name}: totals.layers")
    ensure(t["params"] == sum(l["params"] for l in layers), f"{name}: totals.params")
    ensure(t["buffers"] == sum(l["buffers"] for l in layers), f"{name}: totals.buffers")
    ensure(t["weight_bytes"] == (t["params"] + t["buffers"]) * 4, f"{name}: totals.weight_bytes")
    ensure(t["fwd_macs_per_sample"] == macs, f"{name}: totals.fwd_macs_per_sample")
    ensure(set(m["groupings"]) <= {"pipeswitch"}, f"{name}: groupings keys")
    g = m["groupings"].get("pipeswitch")
    if name in PIPESWITCH_GROUPS:
        ensure(g is not None and len(g) == PIPESWITCH_GROUPS[name],
               f"{name}: pipeswitch groups {None if g is None else len(g)} != {PIPESWITCH_GROUPS[name]}")
    if g is not None:
        ensure(g[0] == 0 and all(a < b for a, b in zip(g, g[1:])) and g[-1] < len(layers),
               f"{name}: pipeswitch groups must start at 0, increase, stay in range")
    if "sequence_length" in m:
        ensure(isinstance(m["sequence_length"], int) and m["sequence_length"] > 0, f"{name}: seq len")
    if name == "resnet152":
        kinds = [l["kind"] for l in layers]
        ensure(len(layers) == 313 and kinds.count("conv") == 155 and kinds.count("norm") == 155,
               "resnet152: 313 layers = 155 conv + 155 BN + maxpool + avgpool + fc")
    if name.startswith("bert_base"):
        ensure(m.get("sequence_length") == (251 if name.endswith("251") else 128), f"{name}: seq len")


def check_published(m, closed):
    name, t = m["name"], m["totals"]
    rows = []
    if name in PUBLISHED:
        p, gmac, src = PUBLISHED[name]
    else:
        p, gmac, src = closed[name], None, "closed-form arithmetic (check_zoo.py)"
    dp = (t["params"] - p) / p
    ensure(abs(dp) <= 0.005, f"{name}: params {t['params']:,} vs published {p:,} ({dp:+.2%})")
    rows.append(f"{name}: params {t['params']:,} vs {p:,} ({dp:+.3%}) [{src}]")
    if gmac is not None:
        mine = t["fwd_macs_per_sample"] / 1e9
        dm = (mine - gmac) / gmac
        ensure(abs(dm) <= 0.05, f"{name}: {mine:.3f} GMAC vs published {gmac} ({dm:+.1%})")
        rows[-1] += f"; fwd {mine:.3f} GMAC vs {gmac} ({dm:+.1%})"
    return rows


def padded_group_mib(m):
    """Per-group bytes with each tensor padded to 512 B (PipeSwitch's group_to_batch)."""
    pad = lambda nbytes: -(-nbytes // 512) * 512        # noqa: E731
    layers, g = m["layers"], m["groupings"]["pipeswitch"]
    out = []
    for a, b in zip(g, g[1:] + [len(layers)]):
        raw = padded = 0
        for l in layers[a:b]:
            raw += l["weight_bytes"]
            if l["tensors"] == 0:
                continue
            if l["kind"] == "norm":                     # equal-sized tensors (gamma, beta, stats)
                padded += l["tensors"] * pad(l["weight_bytes"] // l["tensors"])
            elif l["tensors"] == 2:                      # weight + bias
                bias = 4 * sum(x["n"] * x["count"] for x in l["gemms"])
                padded += pad(l["weight_bytes"] - bias) + pad(bias)
            else:
                padded += pad(l["weight_bytes"])
        out.append((raw / 2**20, padded / 2**20))
    return out


def compare_groups(m, ref):
    sizes = padded_group_mib(m)
    ensure(len(sizes) == len(ref), f"{m['name']}: group count vs reference")
    print(f"\n{m['name']} PipeSwitch groups: ours (raw / padded-512B) vs reference (padded), MiB")
    worst = 0.0
    for i, ((raw, padded), d) in enumerate(zip(sizes, ref)):
        worst = max(worst, abs(padded - d))
        print(f"  group {i:2d}: {raw:7.3f} / {padded:7.3f}   reference {d:6.2f}")
    print(f"  totals: raw {sum(s[0] for s in sizes):.2f}, padded {sum(s[1] for s in sizes):.2f}, "
          f"reference {sum(ref):.2f}; max |padded - reference| = {worst:.3f} MiB")
    # the reference rounds to 0.01 MiB; allow rounding slack
    ensure(worst <= 0.011, f"{m['name']}: group sizes deviate from the reference by {worst:.3f} MiB")


def compare_group_macs(m, ref):
    layers, g = m["layers"], m["groupings"]["pipeswitch"]
    ours = []
    for a, b in zip(g, g[1:] + [len(layers)]):
        ours.append(sum(x["m"] * x["n"] * x["k"] * x["count"] for l in layers[a:b]
                        if not l.get("aux") for x in l["gemms"]) / 1e9)
    print(f"\n{m['name']} forward GMAC per PipeSwitch group: ours vs reference")
    print("  " + ", ".join(f"{o:.3f}/{'-' if d is None else d}" for o, d in zip(ours, ref)))
    for o, d in zip(ours, ref):
        if d is not None:   # the reference rounds to 0.01 GMAC
            ensure(abs(o - d) <= 0.006 + 0.02 * d, f"{m['name']}: group GMAC {o:.3f} vs {d}")


def main():
    sys.dont_write_bytecode = True
    sys.path.insert(0, HERE)
    import generate_zoo  # noqa: E402  (for the table formatter and the expected model list)
    models = []
    for fn in sorted(os.listdir(HERE)):
        if fn.endswith(".json"):
            with open(os.path.join(HERE, fn), encoding="utf-8") as f:
                models.append(json.load(f))
    by_name = {m["name"]: m for m in models}
    closed = closed_form_params()
    expected = set(PUBLISHED) | set(closed)
    try:
        ensure(expected <= set(by_name), f"missing models: {sorted(expected - set(by_name))}")
        report = []
        for m in models:
            check_model(m)
            report += check_published(m, closed)
        ordered = [by_name[n] for n in [g()["name"] for g in generate_zoo.ZOO] if n in by_name]
        print(generate_zoo.table(ordered))
        print()
        print("\n".join(report))
        compare_groups(by_name["resnet152"], REF_RESNET152)
        compare_groups(by_name["inception_v3"], REF_INCEPTION_V3)
        compare_group_macs(by_name["inception_v3"], REF_INCEPTION_V3_GMAC)
    except CheckError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print(f"\nOK: {len(models)} models checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
