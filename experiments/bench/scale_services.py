#!/usr/bin/env python3
"""Writes a copy of a serving config with N services, for measuring how the cost per request
grows with the number of services (docs/performance.md, "Cost per request as services grow":
callgrind instructions per request at 1/10/100).

Services are taken in order from the config's workload file(s) and repeated (renamed
"<name>-copyK") until there are N; every service keeps its own request times. Outputs are
switched off (trace, events) so the run measures the simulation.

Usage: scale_services.py CONFIG N OUT.json [--horizon-s S]
Example: scale_services.py experiments/configs/salus_inference.json 100 /tmp/s100.json
"""
import argparse
import json
import pathlib

ap = argparse.ArgumentParser()
ap.add_argument("config")
ap.add_argument("n", type=int)
ap.add_argument("out")
ap.add_argument("--horizon-s", type=float)
a = ap.parse_args()

root = pathlib.Path(__file__).resolve().parents[2]
cfg = json.loads(pathlib.Path(a.config).read_text())
w = cfg["workload"]
jobs = list(w.get("jobs", []))
for f in w.get("files", []):
    jobs += [json.loads(line) for line in (root / f).read_text().splitlines() if line.strip()]
if not jobs:
    raise SystemExit("no jobs in " + a.config)
out = []
for i in range(a.n):
    j = dict(jobs[i % len(jobs)])
    if i >= len(jobs):
        j["name"] = f"{j['name']}-copy{i // len(jobs)}"
    out.append(j)
cfg["workload"] = {"jobs": out}
cfg["name"] = f"{cfg['name']}_{a.n}"
cfg["trace"] = False
cfg["events"] = False
if a.horizon_s is not None:
    cfg["horizon_s"] = a.horizon_s
pathlib.Path(a.out).write_text(json.dumps(cfg, indent=1) + "\n")
