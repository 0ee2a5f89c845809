#!/usr/bin/python3
"""Writes the Olympian (Middleware'18) reproduction workloads under traces/workloads/.

  olympian_fair10.jsonl  10 identical Inception-v3 clients (batch 100, 5 requests each, all
                         sent at once; the paper's fairness figure as we recall it, not verified)
  olympian_mix7.jsonl    the heterogeneous mix of the authors' client script (June 2018, in
                         USC-NSL/TF-Serving-Downloads):
                         inception_v3, googlenet, resnet50, resnet101, resnet152, alexnet, vgg16 at
                         batches 150/200/144/128/100/256/120, 2 clients per model, 5 requests each

Every model first gets a warm-up service of PROFILE_REQUESTS requests at t = 0 (Olympian profiles
each model during warm-up runs before it schedules them, USC-NSL/TF-TF-Downloads); the measured clients
send their requests at CLIENTS_AT_S, after the warm-ups are done. Every service arrives at t = 0
so that its model is loaded beforehand (TF-Serving loads its servables at start-up). A client's 5 requests are all queued at its
arrival; gpumux serves a job's requests one after another, which is the closed loop of the
authors' client (the next request is sent when the previous one returns) with no think time.
In the mix, client c0 of each model has priority 5 and weight 10, client c1 priority 0 and
weight 1 (the code gives weight 10 to jobs of priority >= 5; TF-TF-Downloads commit 846d5c38a).

Usage: /usr/bin/python3 traces/tools/olympian_workloads.py   (from the repository root)
Stdlib only; the output is deterministic.
"""
import json
import os
import sys

PROFILE_REQUESTS = 5
REQUESTS = 5

FAIR10 = {"model": "inception_v3", "batch": 100, "clients": 10, "clients_at_s": 1.0}
MIX7 = [("inception_v3", 150), ("googlenet", 200), ("resnet50", 144), ("resnet101", 128),
        ("resnet152", 100), ("alexnet", 256), ("vgg16", 120)]
MIX7_CLIENTS_AT_S = 10.0


def service(name, model, batch, at_s, requests, **extra):
    # The service (its servable) arrives at t = 0 so that its model is loaded before its first
    # request, as TF-Serving loads servables at start-up; its requests come at at_s.
    job = {"name": name, "kind": "inference", "model": model, "batch": batch,
           "arrival_s": 0.0, "requests": [at_s] * requests}
    job.update(extra)
    return job


def write(path, jobs):
    with open(path, "w", encoding="utf-8") as f:
        for job in jobs:
            f.write(json.dumps(job) + "\n")
    print(f"wrote {path} ({len(jobs)} jobs)")


def main():
    out = os.path.join("traces", "workloads")
    m, b, t = FAIR10["model"], FAIR10["batch"], FAIR10["clients_at_s"]
    jobs = [service(f"warmup-{m}", m, b, 0.0, PROFILE_REQUESTS, tenant="warmup")]
    jobs += [service(f"client-{i:02d}", m, b, t, REQUESTS) for i in range(FAIR10["clients"])]
    write(os.path.join(out, "olympian_fair10.jsonl"), jobs)

    jobs = [service(f"warmup-{m}", m, b, 0.0, PROFILE_REQUESTS, tenant="warmup") for m, b in MIX7]
    for m, b in MIX7:
        jobs.append(service(f"{m}-c0", m, b, MIX7_CLIENTS_AT_S, REQUESTS, priority=5, weight=10))
        jobs.append(service(f"{m}-c1", m, b, MIX7_CLIENTS_AT_S, REQUESTS, priority=0, weight=1))
    write(os.path.join(out, "olympian_mix7.jsonl"), jobs)


if __name__ == "__main__":
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    main()
