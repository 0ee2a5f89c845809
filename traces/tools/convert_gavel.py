#!/usr/bin/python3
"""Convert Gavel's Philly-derived per-VC traces into gpumux training-job files (JSONL).

Input : <shared>/data/gavel/traces/msr/seed=0/<vc>.trace  (tab-separated, no header; MIT, see
        traces/workloads/SOURCE.txt), plus <shared>/data/gavel/simulation_throughputs.json for the
        optional expected_duration_s hint.
Output: traces/workloads/philly_<vc>.jsonl            one file per VC that keeps at least one job
        traces/workloads/philly_1gpu_first200.jsonl   first 200 kept jobs of the representative VC,
                                                      arrival times shifted so the first is 0
        a per-VC kept/dropped table on stdout (copied into traces/workloads/README.md)

Trace line formats (detected by the number of tab-separated fields):
  7 fields  (the msr/seed=0 traces): job_type, command, num_steps_arg, needs_data_dir, total_steps,
            arrival_time, scale_factor.  No priority_weight column: weight = 1.0.
  10 fields (Gavel's later format, physical_cluster/*.trace): job_type, command, working_directory,
            num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, SLO, arrival_time.

Mapping (gpumux schedules one GPU per job):
  "ResNet-18 (batch size B)"   -> model resnet18,  optimizer momentum
  "ResNet-50 (batch size B)"   -> model resnet50,  optimizer momentum
  "Transformer (batch size B)" -> model bert_base, optimizer adam   (approximation: Gavel's Transformer is an
                                  encoder-decoder translation model; bert_base is a 12-layer encoder)
  A3C, CycleGAN, LM, Recommendation -> dropped (no zoo model), counted per type
  scale_factor != 1            -> dropped (multi-GPU job), counted
  batch = B from the job type; iterations = total_steps; arrival_s = arrival_time; weight = priority_weight
  (1.0 when absent); priority 0; tenant = VC id; name = philly-<vc>-<0-based line index in the trace>.
  expected_duration_s = total_steps / (Gavel's measured isolated V100 steps/s for that job type at 1 GPU):
  a user hint only (measured on Gavel's own workload, e.g. ResNet-18 on CIFAR-10 32x32 images).

Usage: /usr/bin/python3 traces/tools/convert_gavel.py [--shared /work/shared] [--out traces/workloads]
       [--subset-vc VC] [--subset-n 200]
Stdlib only.
"""
import argparse
import ast
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

MODEL_MAP = {
    'ResNet-18': ('resnet18', 'momentum'),
    'ResNet-50': ('resnet50', 'momentum'),
    'Transformer': ('bert_base', 'adam'),
}
TYPE_RE = re.compile(r'^(?P<family>[^()]+?)(?: \(batch size (?P<batch>\d+)\))?$')


def parse_line(fields, path, lineno):
    if len(fields) == 7:
        job_type, _cmd, _arg, _needs_data, total_steps, arrival, scale = fields
        weight = 1.0
    elif len(fields) == 10:
        job_type, _cmd, _wd, _arg, _needs_data, total_steps, scale, weight, _slo, arrival = fields
        weight = float(weight)
    else:
        raise SystemExit('error: %s:%d: expected 7 or 10 tab-separated fields, got %d' % (path, lineno, len(fields)))
    m = TYPE_RE.match(job_type.strip())
    if not m:
        raise SystemExit('error: %s:%d: cannot parse job type %r' % (path, lineno, job_type))
    return {
        'job_type': job_type.strip(),
        'family': m.group('family').strip(),
        'batch': int(m.group('batch')) if m.group('batch') else None,
        'total_steps': int(total_steps),
        'arrival': float(arrival),
        'scale': int(scale),
        'weight': weight,
    }


def load_v100_throughputs(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        d = json.load(f)
    out = {}
    for k, v in d.get('v100', {}).items():
        job_type, scale = ast.literal_eval(k)
        if scale == 1 and isinstance(v, dict) and v.get('null'):
            out[job_type] = float(v['null'])
    return out


def num(x):
    """JSON number: integers without a fraction, others with up to 6 decimals."""
    if float(x).is_integer():
        return '%.1f' % x
    return ('%.6f' % x).rstrip('0')


def job_line(j):
    # fixed key order, compact but readable
    parts = [
        '"name": %s' % json.dumps(j['name']),
        '"kind": "training"',
        '"model": %s' % json.dumps(j['model']),
        '"batch": %d' % j['batch'],
        '"arrival_s": %s' % num(j['arrival_s']),
        '"iterations": %d' % j['iterations'],
        '"optimizer": %s' % json.dumps(j['optimizer']),
        '"priority": 0',
        '"weight": %s' % num(j['weight']),
        '"tenant": %s' % json.dumps(j['tenant']),
    ]
    if j.get('expected_duration_s') is not None:
        parts.append('"expected_duration_s": %s' % num(round(j['expected_duration_s'], 3)))
    return '{' + ', '.join(parts) + '}'


def convert_vc(path, thr):
    vc = os.path.basename(path)[:-len('.trace')]
    stats = {'vc': vc, 'total': 0, 'kept': 0, 'multi_gpu': 0, 'dropped_types': {}, 'kept_models': {}}
    jobs = []
    prev_arrival = None
    with open(path) as f:
        for idx, line in enumerate(f):
            line = line.rstrip('\n')
            if not line.strip():
                continue
            stats['total'] += 1
            r = parse_line(line.split('\t'), path, idx + 1)
            if prev_arrival is not None and r['arrival'] < prev_arrival:
                raise SystemExit('error: %s:%d: arrival_time decreases' % (path, idx + 1))
            prev_arrival = r['arrival']
            if r['family'] not in MODEL_MAP or r['batch'] is None:
                stats['dropped_types'][r['family']] = stats['dropped_types'].get(r['family'], 0) + 1
                continue
            if r['scale'] != 1:
                stats['multi_gpu'] += 1
                continue
            if r['total_steps'] < 1 or r['weight'] <= 0:
                raise SystemExit('error: %s:%d: total_steps < 1 or weight <= 0' % (path, idx + 1))
            model, opt = MODEL_MAP[r['family']]
            t = thr.get(r['job_type'])
            jobs.append({
                'name': 'philly-%s-%d' % (vc, idx),
                'model': model,
                'batch': r['batch'],
                'arrival_s': r['arrival'],
                'iterations': r['total_steps'],
                'optimizer': opt,
                'weight': r['weight'],
                'tenant': vc,
                'expected_duration_s': (r['total_steps'] / t) if t else None,
            })
            stats['kept'] += 1
            stats['kept_models'][model] = stats['kept_models'].get(model, 0) + 1
    return vc, jobs, stats


def write_jsonl(path, jobs):
    with open(path, 'w') as f:
        for j in jobs:
            f.write(job_line(j) + '\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--shared', default=os.path.join(os.path.dirname(REPO), 'shared'))
    ap.add_argument('--out', default=os.path.join(REPO, 'traces', 'workloads'))
    ap.add_argument('--subset-vc', default=None,
                    help='VC for philly_1gpu_first200 (default: among VCs with >= subset-n kept jobs, the one whose '
                         'kept-model mix is closest (L1, rounded to 0.01) to the pooled mix of all VCs; ties go to '
                         'the shortest span of its first subset-n jobs)')
    ap.add_argument('--subset-n', type=int, default=200)
    a = ap.parse_args()
    gavel = os.path.join(a.shared, 'data', 'gavel')
    thr = load_v100_throughputs(os.path.join(gavel, 'simulation_throughputs.json'))
    traces = sorted(glob.glob(os.path.join(gavel, 'traces', 'msr', 'seed=0', '*.trace')))
    if not traces:
        raise SystemExit('error: no traces under %s' % gavel)
    os.makedirs(a.out, exist_ok=True)
    all_stats, by_vc = [], {}
    for p in traces:
        vc, jobs, st = convert_vc(p, thr)
        all_stats.append(st)
        by_vc[vc] = jobs
        out = os.path.join(a.out, 'philly_%s.jsonl' % vc)
        if jobs:
            write_jsonl(out, jobs)
        elif os.path.exists(out):
            os.remove(out)

    # representative VC: smallest L1 distance between its kept-model shares and the pooled shares
    models = sorted(MODEL_MAP[k][0] for k in MODEL_MAP)
    pooled = {m: sum(s['kept_models'].get(m, 0) for s in all_stats) for m in models}
    ptot = sum(pooled.values())
    cand = []
    for s in all_stats:
        if s['kept'] >= a.subset_n:
            dist = sum(abs(s['kept_models'].get(m, 0) / s['kept'] - pooled[m] / ptot) for m in models)
            first = by_vc[s['vc']][:a.subset_n]
            span = first[-1]['arrival_s'] - first[0]['arrival_s']
            cand.append((round(dist, 2), span, dist, s['vc']))
    cand.sort()
    vc = a.subset_vc or (cand[0][3] if cand else None)
    if vc is None or len(by_vc.get(vc, [])) < a.subset_n:
        raise SystemExit('error: no VC with %d kept single-GPU jobs' % a.subset_n)
    sub = [dict(j) for j in by_vc[vc][:a.subset_n]]
    t0 = sub[0]['arrival_s']
    for j in sub:
        j['arrival_s'] -= t0
    write_jsonl(os.path.join(a.out, 'philly_1gpu_first200.jsonl'), sub)

    # report (markdown table, pasted into traces/workloads/README.md)
    types = sorted({t for s in all_stats for t in s['dropped_types']})
    print('| VC | jobs | kept (1 GPU) | resnet18 | resnet50 | bert_base | dropped: multi-GPU | '
          + ' | '.join('dropped: %s' % t for t in types) + ' |')
    print('|' + '---|' * (7 + len(types)))
    tot = {'total': 0, 'kept': 0, 'multi_gpu': 0}
    tot_models = {m: 0 for m in models}
    tot_types = {t: 0 for t in types}
    for s in all_stats:
        for k in tot:
            tot[k] += s[k]
        for m in models:
            tot_models[m] += s['kept_models'].get(m, 0)
        for t in types:
            tot_types[t] += s['dropped_types'].get(t, 0)
        print('| %s | %d | %d | %d | %d | %d | %d | %s |' % (
            s['vc'], s['total'], s['kept'], s['kept_models'].get('resnet18', 0), s['kept_models'].get('resnet50', 0),
            s['kept_models'].get('bert_base', 0), s['multi_gpu'],
            ' | '.join(str(s['dropped_types'].get(t, 0)) for t in types)))
    print('| **all** | %d | %d | %d | %d | %d | %d | %s |' % (
        tot['total'], tot['kept'], tot_models['resnet18'], tot_models['resnet50'], tot_models['bert_base'],
        tot['multi_gpu'], ' | '.join(str(tot_types[t]) for t in types)))
    print()
    print('representative VC ranking (L1 distance of kept-model mix to the pooled mix rounded to 0.01, ties by the '
          'shortest span of the first %d kept jobs; VCs with >= %d kept):' % (a.subset_n, a.subset_n))
    for _, span, d, v in cand:
        print('  %s distance %.3f, span of first %d: %.0f s' % (v, d, a.subset_n, span))
    span = sub[-1]['arrival_s']
    print('philly_1gpu_first200.jsonl: VC %s, %d jobs, arrivals 0 .. %.0f s, original offset %.0f s, models %s' % (
        vc, len(sub), span, t0, {m: sum(1 for j in sub if j['model'] == m) for m in models}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
