#!/usr/bin/env python3
"""Builds the cross-paper training stream: traces/workloads/crosspaper_philly_train.jsonl.

Source: traces/workloads/philly_1gpu_first200.jsonl (Gavel's Philly-derived traces, MIT;
see traces/workloads/SOURCE.txt). Philly jobs run for hours to days; the cross-paper figure
needs a stream of minutes. The transformation keeps the order of arrivals, the models, batch
sizes, optimizers and relative durations, and compresses time:

  * keep, in trace order, the first N jobs that fit a 16 GiB GPU alone (weights, gradients,
    optimizer state and one iteration's activations <= 0.8 x 16 GiB, computed from the model
    zoo): a job that cannot run alone on the GPU cannot run under any single-GPU policy;
  * arrival_s is scaled linearly so the N-th job arrives at ARRIVAL_SPAN_S;
  * each job's duration d (Gavel's measured V100 time, expected_duration_s) becomes
    d' = clamp(TARGET_S * sqrt(d / median d), MIN_S, MAX_S), and iterations are scaled by d'/d
    (at least 5), so long jobs stay longer than short ones.

Deterministic; run with /usr/bin/python3 traces/tools/make_crosspaper_trace.py.
"""
import json
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "traces/workloads/philly_1gpu_first200.jsonl")
DST = os.path.join(ROOT, "traces/workloads/crosspaper_philly_train.jsonl")
N, ARRIVAL_SPAN_S, TARGET_S, MIN_S, MAX_S = 8, 120.0, 40.0, 10.0, 120.0
CAPACITY = 0.8 * 16 * 2**30
SLOTS = {"sgd": 0, "momentum": 1, "adam": 2}


def fits(job):
    with open(os.path.join(ROOT, "traces/models", job["model"] + ".json")) as f:
        model = json.load(f)
    weights = model["totals"]["weight_bytes"]
    acts = sum(layer["output_bytes"] for layer in model["layers"]) * job["batch"]
    return weights * (2 + SLOTS[job.get("optimizer", "momentum")]) + acts <= CAPACITY


def main():
    jobs = [json.loads(line) for line in open(SRC) if line.strip()]
    kept = [j for j in jobs if fits(j)][:N]
    median = statistics.median(j["expected_duration_s"] for j in kept)
    last = max(j["arrival_s"] for j in kept) or 1.0
    with open(DST, "w") as out:
        for j in kept:
            d = j["expected_duration_s"]
            d_new = min(MAX_S, max(MIN_S, TARGET_S * math.sqrt(d / median)))
            job = dict(j)
            job["name"] = j["name"] + "-compressed"
            job["arrival_s"] = round(j["arrival_s"] * ARRIVAL_SPAN_S / last, 3)
            job["iterations"] = max(5, round(j["iterations"] * d_new / d))
            job["expected_duration_s"] = round(d_new, 3)
            out.write(json.dumps(job) + "\n")
    print(f"wrote {len(kept)} jobs to {os.path.relpath(DST, ROOT)}")


if __name__ == "__main__":
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    main()
