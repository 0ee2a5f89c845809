#!/usr/bin/python3
"""Prints the Olympian (Middleware'18) reproduction numbers from the results of

  gpumux sweep experiments/sweeps/olympian_fairness.json   -> results/olympian_fairness_sweep
  gpumux sweep experiments/sweeps/olympian_mix.json        -> results/olympian_mix_sweep
  gpumux sweep experiments/sweeps/olympian_overhead.json   -> results/olympian_overhead

Metrics (all from summary.json and events.jsonl):
  spread     (last - first client end) / (last client end - request time)
  share      a client's GPU time from the request time to the first client's end (while all
             compete) over all clients' GPU time in that window; only meaningful where compute
             ops never overlap (olympian, tf_serving with one stream, exclusive)
  overhead   (last client end - request time) / the same under tf_serving - 1
  hold       olympian.token_hold_us: how long each holder kept the token (interleaving interval)

Usage: /usr/bin/python3 traces/tools/olympian_report.py   (from the repository root)
Stdlib only.
"""
import json
import os
import sys

FAIR_AT_S = 1.0
MIX_AT_S = 10.0
OVERLAPPING = {"mps", "time_slicing", "tf_serving_per_client"}  # their compute ops overlap
MODELS = ["inception_v3", "googlenet", "resnet50", "resnet101", "resnet152", "alexnet", "vgg16"]


def load(d):
    with open(os.path.join(d, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def client_ends(summary):
    return {j["name"]: j["end_s"] for j in summary["jobs"] if not j["name"].startswith("warmup")}


def shares(d, at_s):
    s = load(d)
    names = [j["name"] for j in s["jobs"]]
    ends = client_ends(s)
    t0, t1 = at_s * 1e9, min(ends.values()) * 1e9
    busy = {n: 0.0 for n in ends}
    with open(os.path.join(d, "events.jsonl"), encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e["ev"] != "op_end" or e.get("kind") != "compute" or e.get("status") != "ok":
                continue
            n = names[e["job"]]
            a, b = max(e["start"], t0), min(e["t"], t1)
            if n in busy and b > a:
                busy[n] += b - a
    total = sum(busy.values()) or 1.0
    return {n: v / total for n, v in busy.items()}, ends


def fairness(root):
    print("== fairness: 10 identical Inception-v3 clients (batch 100, 5 requests), gtx1080ti")
    base = os.path.join(root, "olympian_fairness_sweep")
    for run in sorted(os.listdir(base)):
        e = client_ends(load(os.path.join(base, run))).values()
        lo, hi = min(e), max(e)
        print(f"  {run:24s} first end {lo:7.3f} s  last end {hi:7.3f} s  "
              f"spread {(hi - lo) / (hi - FAIR_AT_S):.4f}")


def mix(root):
    print("== heterogeneous mix: 7 models x 2 clients x 5 requests, gtx1080ti")
    base = os.path.join(root, "olympian_mix_sweep")
    for run in sorted(os.listdir(base)):
        d = os.path.join(base, run)
        sh, ends = shares(d, MIX_AT_S)
        span = max(ends.values()) - MIX_AT_S
        if run.startswith("weighted"):
            ratios = " ".join(f"{m[:9]}={sh[m + '-c0'] / max(sh[m + '-c1'], 1e-12):.1f}"
                              for m in MODELS)
            print(f"  {run:24s} c0:c1 GPU share (weights 10:1): {ratios}  span {span:.2f} s")
        elif run.startswith("priority"):
            hi = max(ends[m + "-c0"] for m in MODELS) - MIX_AT_S
            lo = min(ends[m + "-c1"] for m in MODELS) - MIX_AT_S
            print(f"  {run:24s} last high (c0) end {hi:.2f} s, first low (c1) end {lo:.2f} s"
                  f"  span {span:.2f} s")
        elif run in OVERLAPPING:
            fin = " ".join(f"{m[:9]}={max(ends[m + '-c0'], ends[m + '-c1']) - MIX_AT_S:.2f}"
                           for m in MODELS)
            print(f"  {run:24s} model finish (s):  {fin}  span {span:.2f} s (shares n/a: ops overlap)")
        else:
            per = " ".join(f"{m[:9]}={sh[m + '-c0'] + sh[m + '-c1']:.3f}" for m in MODELS)
            fin = " ".join(f"{m[:9]}={max(ends[m + '-c0'], ends[m + '-c1']) - MIX_AT_S:.2f}"
                           for m in MODELS)
            print(f"  {run:24s} model GPU shares: {per}")
            print(f"  {'':24s} model finish (s):  {fin}  span {span:.2f} s")


def overhead(root):
    print("== overhead vs quantum: the fairness workload; reference tf_serving")
    base = os.path.join(root, "olympian_overhead")
    span = lambda run: max(client_ends(load(os.path.join(base, run))).values()) - FAIR_AT_S
    ref = span("tf_serving")
    print(f"  tf_serving span {ref:.4f} s; exclusive overhead {100 * (span('exclusive') / ref - 1):.3f} %")
    runs = [r for r in os.listdir(base) if r.startswith("olympian_")]
    key = lambda r: (int(r.split("_d")[1]), int(r.split("_q")[1].split("_")[0]))
    for run in sorted(runs, key=key):
        s = load(os.path.join(base, run))
        hold = s["policy_metrics"]["olympian.token_hold_us"]
        print(f"  {run:24s} overhead {100 * (span(run) / ref - 1):6.3f} %  token hold mean "
              f"{hold['mean']:7.0f} us  p50 {hold['p50']:7.0f}  p99 {hold['p99']:7.0f}  "
              f"passes {hold['count']}")


def main():
    root = "results"
    fairness(root)
    mix(root)
    overhead(root)


if __name__ == "__main__":
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    main()
