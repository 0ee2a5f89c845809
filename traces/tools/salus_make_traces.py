#!/usr/bin/env python3
"""Workloads of the Salus (MLSys'20) reproduction: writes traces/workloads/salus_*.jsonl.

Usage (from the repository root; stdlib only, fixed seeds, byte-identical output):
  /usr/bin/python3 traces/tools/salus_make_traces.py          # (re)write every file
  /usr/bin/python3 traces/tools/salus_make_traces.py --check  # exit 1 if a file would change

Files and the choices behind them (dossier = /work/shared/papers/seeds-dossier.md):

salus_100jobs.jsonl -- the long-running training trace (dossier §5.6, §12 Salus 1).
  * 100 training jobs drawn uniformly from the 15 workloads of dossier §1.3 / §5.6: vgg11,
    vgg16, vgg19, resnet50, resnet101, resnet152, googlenet, alexnet, overfeat, inception_v3
    (Salus' inception3), inception_v4 (inception4), vae, superres, seq2seq, speech, each with
    one of its three batch sizes, also drawn uniformly. CNN batch sizes are Salus'
    (25/50/100; 25/50/75 for the ResNets and inception4) [C: tests/workloads.csv]. The four
    non-CNN models' batch sizes are not in the dossier; chosen: vae 64/128/256 and superres
    32/64/128 (the hyper-parameter experiment's vae BS 64 and superres BS 128 are among them),
    seq2seq 32/64/128, speech 25/50/75 (assumption: three sizes doubling or stepping like the
    CNNs').
  * Length: Salus' workloads.csv has 1-, 5- and 10-minute variants of every workload; each job
    draws one of the three uniformly. Iterations = the variant's minutes x Salus' measured
    iterations per minute (dossier §1.3 table, "iters in ~1 min") for the 11 CNNs; for the four
    other models, which the table lacks, minutes x 60 s / gpumux's predicted training step on
    the p100-pcie3x16 profile (traces/tools/predict_layer_times.py), counting at least 5 ms
    per iteration (MIN_ITERATION_S: only the VAE is below it). So a job runs for tens
    of seconds to minutes, as in the paper (in gpumux time the CNN jobs take 0.7-2.7x their
    nominal minutes, since gpumux's step times differ from Salus' measured ones; the VAE
    jobs 0.07x, because of the 5 ms floor).
  * expected_duration_s (Salus' TIME:TOTAL, which SRTF/PREEMPT read) = iterations x gpumux's
    predicted solo step time on p100-pcie3x16: what a user who profiled the job alone would
    declare.
  * Arrivals: Poisson, mean gap 60 s, first job at 0 (assumption: the paper's trace generator
    is not in the dossier; Salus' experiment admits up to 100 concurrent jobs on one GPU, so
    the trace oversubscribes it: the mean job needs ~7 min of GPU time and one arrives per
    minute, so nearly every job is queued at some point).
  * Fixed seed 20200302.

salus_20jobs.jsonl -- small variant for tests: 20 jobs, the same recipe with seed 7, lengths
  and gaps scaled by 1/20 (3/15/30 s variants, mean gap 3 s), so one run simulates in well
  under a second.

salus_hp_{vae,superres,resnet50}.jsonl -- hyper-parameter exploration (dossier §5.6, §12 Salus
  2; Salus card271.py): 300 identical jobs of one model (vae BS 64, superres BS 128, resnet50
  BS 50), 500 iterations each, all submitted at time 0 (a tuning sweep is launched at once).

salus_inference_42.jsonl -- inference consolidation (dossier §5.6, §12 Salus 3; card270.py):
  14 models x 3 instances = 42 services, batch 1, 500 requests each. The 14 models: the 15
  workloads without speech (assumption: the dossier says 14 and names seq2seq "small" for
  inference; speech is the one left out). Requests are open loop with exponential gaps of mean
  10 s (Salus' SALUS_TFBENCH_EVAL_INTERVAL=10, read as seconds; its jitter knob RAND_FACTOR=3
  is not modelled beyond the exponential gaps -- its exact formula is in Salus'
  tf_benchmarks fork, not in the dossier). First request at 1 s, after the model is loaded.

salus_inference_42_gap1s.jsonl -- the same services with a mean gap of 1 s (10x the load; a
  sensitivity check, since the unit of Salus' interval knob is not verified).

salus_inference_solo.jsonl -- the "dedicated GPU" baseline of the same experiment: instance 0
  of each of the 14 models with the very same request times as in salus_inference_42.jsonl,
  shifted into disjoint time windows so that, run under `exclusive`, each service has the GPU
  to itself (one dedicated GPU per service).
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
# iterations per minute from dossier §1.3 (Salus tests/workloads.csv, "iters in ~1 min").
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
