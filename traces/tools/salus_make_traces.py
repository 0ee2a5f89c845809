#!/usr/bin/env python3
"""Workloads of the Salus (MLSys'20) reproduction: writes traces/workloads/salus_*.jsonl.

Usage (from the repository root; stdlib only, fixed seeds, byte-identical output):
  /usr/bin/python3 traces/tools/salus_make_traces.py          # (re)write every file
  /usr/bin/python3 traces/tools/salus_make_traces.py --check  # exit 1 if a file would change

Files: salus_100jobs.jsonl (100 training jobs of Salus' 15 workloads, Poisson arrivals, lengths
from Salus' tests/workloads.csv), salus_20jobs.jsonl (a small variant for tests),
salus_hp_{vae,superres,resnet50}.jsonl (300 identical jobs each), salus_inference_42.jsonl (42
inference services), salus_inference_42_gap1s.jsonl (10x the load), salus_inference_solo.jsonl
(the dedicated-GPU baseline). The choices behind each file, and which are assumptions:
docs/policies/salus.md, "Workloads".
"""
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import predict_layer_times as plt  # noqa: E402  (the reference cost model, stdlib only)

DEVICE = 'p100-pcie3x16'
OUT = os.path.join(REPO, 'traces', 'workloads')

# (zoo model, Salus name, batch sizes, Salus iterations per minute by batch or None) --
# iterations per minute from Salus' tests/workloads.csv (SymbioticLab/Salus; iterations of a "1 min" run).
WORKLOADS = [
    ('vgg11', 'vgg11', (25, 50, 100), (565, 321, 178)),
    ('vgg16', 'vgg16', (25, 50, 100), (311, 168, 90)),
    ('vgg19', 'vgg19', (25, 50, 100), (266, 143, 76)),
    ('resnet50', 'resnet50', (25, 50, 75), (478, 265, 183)),
    ('resnet101', 'resnet101', (25, 50, 75), (276, 155, 108)),
    ('resnet152', 'resnet152', (25, 50, 75), (191, 108, 75)),
    ('googlenet', 'googlenet', (25, 50, 100), (1015, 599, 332)),
    ('alexnet', 'alexnet', (25, 50, 100), (2726, 2067, 1332)),
    ('overfeat', 'overfeat', (25, 50, 100), (1199, 951, 617)),
    ('inception_v3', 'inception3', (25, 50, 100), (303, 165, 86)),
    ('inception_v4', 'inception4', (25, 50, 75), (147, 81, 55)),
    ('vae', 'vae', (64, 128, 256), None),
    ('superres', 'superres', (32, 64, 128), None),
    ('seq2seq', 'seq2seq', (32, 64, 128), None),
    ('speech', 'speech', (25, 50, 75), None),
]
MINUTES = (1, 5, 10)
# Iterations of the models without Salus measurements are counted as if an iteration took at
# least this long (assumption: a TF 1.x session.run round trip of a tiny graph is milliseconds;
# gpumux's launch-bound VAE step alone is 0.36 ms, which would make a "5-minute" VAE job
# 800k iterations, far from a real one and too many events to simulate).
MIN_ITERATION_S = 0.005

_models, _device = {}, None


def step_s(model, batch):
    """gpumux's predicted solo training step (forward + backward + momentum update), seconds."""
    global _device
    if _device is None:
        _device = plt.load_json(DEVICE, 'devices')
    if model not in _models:
        _models[model] = plt.load_json(model, 'models')
    return plt.predict(_models[model], _device, batch)['train_step_ms'] / 1e3


def num(x):
    """Seconds with microsecond resolution, printed without float noise."""
    return round(x, 6)


def training_trace(n_jobs, seed, scale, mean_gap_s, prefix):
    rng = random.Random(seed)
    t = 0.0
    lines = []
    for i in range(n_jobs):
        model, salus_name, batches, per_min = WORKLOADS[rng.randrange(len(WORKLOADS))]
        k = rng.randrange(3)
        minutes = MINUTES[rng.randrange(3)]
        batch = batches[k]
        if per_min is not None:
            iterations = per_min[k] * minutes
        else:
            iterations = round(minutes * 60.0 / max(MIN_ITERATION_S, step_s(model, batch)))
        iterations = max(1, round(iterations * scale))
        expected = iterations * step_s(model, batch)
        lines.append({'name': '%s-%03d-%s_%d-%dmin' % (prefix, i, salus_name, batch, minutes),
                      'kind': 'training', 'model': model, 'batch': batch, 'arrival_s': num(t),
                      'iterations': iterations, 'expected_duration_s': num(expected)})
        t += rng.expovariate(1.0 / mean_gap_s)
    return lines


def hp_trace(model, batch, jobs=300, iterations=500):
    expected = iterations * step_s(model, batch)
    return [{'name': 'hp-%s_%d-%03d' % (model, batch, i), 'kind': 'training', 'model': model,
             'batch': batch, 'arrival_s': 0.0, 'iterations': iterations,
             'expected_duration_s': num(expected)} for i in range(jobs)]


INFERENCE_MODELS = [w for w in WORKLOADS if w[0] != 'speech']


def inference_requests(seed=20200303, instances=3, requests=500, mean_gap_s=10.0, start_s=1.0):
    """{(model, instance): [times]} -- one generator, services in a fixed order."""
    rng = random.Random(seed)
    out = {}
    for model, _, _, _ in INFERENCE_MODELS:
        for inst in range(instances):
            t, times = start_s, []
            for _ in range(requests):
                t += rng.expovariate(1.0 / mean_gap_s)
                times.append(num(t))
            out[(model, inst)] = times
    return out


def inference_trace(reqs):
    lines = []
    for model, salus_name, _, _ in INFERENCE_MODELS:
        for inst in range(3):
            lines.append({'name': 'infer-%s-%d' % (salus_name, inst), 'kind': 'inference',
                          'model': model, 'batch': 1, 'arrival_s': 0.0,
                          'requests': reqs[(model, inst)]})
    return lines


def inference_solo_trace(reqs):
    """Instance 0 of every model, each alone in its own time window."""
    lines, window_start = [], 0.0
    for model, salus_name, _, _ in INFERENCE_MODELS:
        times = reqs[(model, 0)]
        lines.append({'name': 'solo-%s' % salus_name, 'kind': 'inference', 'model': model,
                      'batch': 1, 'arrival_s': num(window_start),
                      'requests': [num(window_start + x) for x in times]})
        # The next window opens well after this service's last request (plus a drain margin).
        window_start = math.ceil(window_start + times[-1] + 60.0)
    return lines


def render(lines):
    return ''.join(json.dumps(l, separators=(', ', ': ')) + '\n' for l in lines)


def outputs():
    reqs = inference_requests()
    return {
        'salus_100jobs.jsonl': training_trace(100, 20200302, 1.0, 60.0, 'job'),
        'salus_20jobs.jsonl': training_trace(20, 7, 1.0 / 20, 3.0, 'small'),
        'salus_hp_vae.jsonl': hp_trace('vae', 64),
        'salus_hp_superres.jsonl': hp_trace('superres', 128),
        'salus_hp_resnet50.jsonl': hp_trace('resnet50', 50),
        'salus_inference_42.jsonl': inference_trace(reqs),
        'salus_inference_42_gap1s.jsonl': inference_trace(inference_requests(mean_gap_s=1.0)),
        'salus_inference_solo.jsonl': inference_solo_trace(reqs),
    }


def main(argv):
    check = '--check' in argv
    stale = []
    for name, lines in outputs().items():
        path = os.path.join(OUT, name)
        text = render(lines)
        if check:
            try:
                with open(path) as f:
                    if f.read() != text:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
        else:
            with open(path, 'w') as f:
                f.write(text)
            print('wrote %s (%d jobs)' % (os.path.relpath(path, REPO), len(lines)))
    if stale:
        print('stale: ' + ', '.join(stale))
        return 1
    return 0


if __name__ == '__main__':
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
