#!/usr/bin/env python3
"""Write traces/dynamic/*_early_exit_branchynet.json from BranchyNet's published exit fractions.

Usage: make_early_exit.py OUT_DIR        (run from the repository root; reads traces/models/*.json)

Numbers (fraction of CIFAR-10 test samples leaving at each exit, knee-point thresholds) are quoted
from Table I of Teerapittayanon, McDanel, Kung, "BranchyNet: Fast Inference via Early Exiting from
Deep Neural Networks", ICPR 2016; the paper PDF is in github.com/kunglab/branchynet, file
ICPR16_1347_FI.pdf (see traces/dynamic/SOURCE.txt for commit and hashes). Table I gives the same
Exit (%) on CPU and GPU:
  B-AlexNet (CIFAR-10): 65.6, 25.2, 9.2     exits after conv1, after conv2, final classifier
  B-ResNet-110 (CIFAR-10): 41.5, 13.8, 44.7 exits after the 2nd conv, after the 37th conv, final
(branch positions from Section IV of the paper).

Mapping onto the zoo:
  alexnet  - same family and layer count (5 conv + 3 FC): conv k of the paper -> conv k of
             torchvision AlexNet (features.0, features.3), final -> classifier.6.
  resnet50 - by the fraction of forward compute done before each branch. For ResNet-110 (CIFAR,
             He et al. 2016 Sec. 4.2: 3x3 stem of 16 channels at 32x32, 3 stages of 18 basic blocks
             at 16/32/64 channels and 32/16/8 pixels, parameter-free shortcuts) the conv MACs up to the
             branch are divided by all conv+fc MACs; the exit is put after the zoo resnet50 residual-
             block end (or stem end) whose cumulative fwd_flops share is closest.
Units: weights are fractions summing to 1. Single-threaded script.
"""
import json
import os
import sys

SOURCE = ("Teerapittayanon, McDanel, Kung, 'BranchyNet: Fast Inference via Early Exiting from Deep "
          "Neural Networks', ICPR 2016, Table I (Exit (%) column, knee-point thresholds, same on CPU and "
          "GPU) and Section IV (branch positions); read from the paper PDF ICPR16_1347_FI.pdf in "
          "github.com/kunglab/branchynet at commit a33d136af511a4852715fcf189ee9405543056d7 "
          "(file added in b93ef95b5132baedbe31edd52e0957ae6d3657af). Written by "
          "traces/tools/make_early_exit.py; see traces/dynamic/SOURCE.txt")
LICENCE = "numbers quoted from a paper (the kunglab/branchynet repository has no licence file)"


def resnet110_cifar_conv_macs():
    """MACs of each conv of ResNet-110 for CIFAR in forward order, and the fc MACs."""
    macs = [3 * 16 * 9 * 32 * 32]  # stem 3x3, 3->16, 32x32
    for c_in, c, hw in ((16, 16, 32), (16, 32, 16), (32, 64, 8)):
        for block in range(18):
            first_in = c_in if block == 0 else c
            macs.append(first_in * c * 9 * hw * hw)
            macs.append(c * c * 9 * hw * hw)
    assert len(macs) == 109
    return macs, 64 * 10


def share_after_conv(k):
    macs, fc = resnet110_cifar_conv_macs()
    return sum(macs[:k]) / (sum(macs) + fc)


def load_model(name):
    with open(os.path.join("traces", "models", name + ".json"), encoding="utf-8") as f:
        return json.load(f)


def resnet_block_ends(model):
    """[(layer name, cumulative fwd_flops share)] for the stem end and every residual block end."""
    layers = model["layers"]
    total = sum(l["fwd_flops"] for l in layers)
    ends, cum = [], 0
    for i, l in enumerate(layers):
        cum += l["fwd_flops"]
        nxt = layers[i + 1]["name"] if i + 1 < len(layers) else ""
        block = ".".join(l["name"].split(".")[:2]) if l["name"].startswith("layer") else None
        if l["name"] == "maxpool" or (block and not nxt.startswith(block + ".")):
            ends.append((l["name"], cum / total))
    return ends


def nearest(ends, share):
    return min(ends, key=lambda e: abs(e[1] - share))


def write(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        for k in ("kind", "model", "source", "licence", "note"):
            f.write(f" {json.dumps(k)}: {json.dumps(doc[k], ensure_ascii=False)},\n")
        items = ",\n  ".join(json.dumps(x) for x in doc["exits"])
        f.write(f' "exits": [\n  {items}\n ],\n "compacts": false\n}}\n')


def check(doc):
    names = {l["name"] for l in load_model(doc["model"])["layers"]}
    for e in doc["exits"]:
        if e["after"] not in names:
            sys.exit(f"{doc['model']}: no layer {e['after']}")
    if abs(sum(e["weight"] for e in doc["exits"]) - 1.0) > 1e-9:
        sys.exit(f"{doc['model']}: weights do not sum to 1")
    if doc["exits"][-1]["after"] != load_model(doc["model"])["layers"][-1]["name"]:
        sys.exit(f"{doc['model']}: last exit is not the last layer")


def alexnet_doc():
    return {
        "kind": "early_exit", "model": "alexnet", "source": SOURCE, "licence": LICENCE,
        "note": ("B-AlexNet on CIFAR-10 (32x32, a reduced AlexNet: 5 conv + 3 FC) mapped layer for layer "
                 "onto torchvision ImageNet AlexNet: branch after the 1st conv -> features.0, after the 2nd "
                 "conv -> features.3, final exit -> classifier.6. APPROXIMATION: CIFAR-10 network and data, "
                 "not ImageNet; the side-branch heads (B-AlexNet: 2 conv + 1 FC and 1 conv + 1 FC) are not "
                 "modelled, only the trunk up to the branch point. Note the repository's "
                 "networks/alex_cifar10.py places the branches one conv later (after conv2 and conv3) "
                 "than the paper's text; the paper's text is followed here, as the numbers are the paper's."),
        "exits": [{"after": "features.0", "weight": 0.656},
                  {"after": "features.3", "weight": 0.252},
                  {"after": "classifier.6", "weight": 0.092}],
        "compacts": False,
    }


def resnet50_doc():
    ends = resnet_block_ends(load_model("resnet50"))
    s1, s2 = share_after_conv(2), share_after_conv(37)
    (a1, z1), (a2, z2) = nearest(ends, s1), nearest(ends, s2)
    return {
        "kind": "early_exit", "model": "resnet50", "source": SOURCE, "licence": LICENCE,
        "note": (f"B-ResNet-110 on CIFAR-10 mapped onto torchvision ImageNet ResNet-50 by share of forward "
                 f"compute: branch 1 (after the 2nd of 109 convs) has done {s1:.4f} of ResNet-110's MACs -> "
                 f"{a1} ({z1:.4f} of resnet50 fwd_flops, the stem end); branch 2 (after the 37th conv = end "
                 f"of the first of 3 stages) has done {s2:.4f} -> {a2} ({z2:.4f}), the nearest residual-"
                 f"block end; final exit -> fc. APPROXIMATION: CIFAR-10 ResNet-110 and data, not ImageNet "
                 f"ResNet-50; branch heads (3 conv + 1 FC, 2 conv + 1 FC) not modelled. A stage-based "
                 f"mapping would put branch 2 at layer1.2.bn3 (end of the first stage) instead."),
        "exits": [{"after": a1, "weight": 0.415},
                  {"after": a2, "weight": 0.138},
                  {"after": "fc", "weight": 0.447}],
        "compacts": False,
    }


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    for name, doc in (("alexnet", alexnet_doc()), ("resnet50", resnet50_doc())):
        check(doc)
        path = os.path.join(argv[1], f"{name}_early_exit_branchynet.json")
        write(path, doc)
        print(path, [(e["after"], e["weight"]) for e in doc["exits"]])
    return 0


if __name__ == "__main__":
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main(sys.argv))
