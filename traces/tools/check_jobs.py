#!/usr/bin/python3
"""Strict checker for gpumux job files (JSONL), mirroring the rules in traces/formats.md.

Usage: /usr/bin/python3 traces/tools/check_jobs.py FILE.jsonl [...] [--repo REPO_ROOT] [--models traces/models]
Prints "error: <file>:<line>: <key>: <what>" for the first problem of each file and exits with 2;
prints a one-line summary per good file and exits with 0.  --models additionally checks that each
model name has traces/models/<model>.json.  Stdlib only.
"""
import json
import math
import os
import sys

COMMON = {'name', 'kind', 'model', 'batch', 'arrival_s', 'priority', 'weight', 'tenant', 'expected_duration_s'}
TRAINING = COMMON | {'iterations', 'optimizer'}
INFERENCE = COMMON | {'requests', 'slo_ms'}
REQ_OBJ = {'file', 'offset_s', 'time_scale', 'limit'}
OPTIMIZERS = ('sgd', 'momentum', 'adam')


class Bad(Exception):
    def __init__(self, key, what):
        super().__init__(key, what)
        self.key, self.what = key, what


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def check_arrivals_file(path, key):
    if not os.path.isfile(path):
        raise Bad(key, 'file not found: %s' % path)
    with open(path) as f:
        header = f.readline().strip().split(',')
        if not header or header[0] != 'arrival_s':
            raise Bad(key, '%s: first column must be arrival_s' % path)
        prev = None
        for n, line in enumerate(f, start=2):
            try:
                v = float(line.split(',')[0])
            except ValueError:
                raise Bad(key, '%s:%d: arrival_s is not a number' % (path, n))
            if v < 0 or (prev is not None and v < prev):
                raise Bad(key, '%s:%d: arrival_s negative or decreasing' % (path, n))
            prev = v


def check_job(o, repo, models, names, prev_arrival):
    if not isinstance(o, dict):
        raise Bad('-', 'line is not a JSON object')
    for k in ('name', 'kind', 'model', 'batch', 'arrival_s'):
        if k not in o:
            raise Bad(k, 'missing required key')
    if not isinstance(o['name'], str) or not o['name']:
        raise Bad('name', 'must be a non-empty string')
    if o['name'] in names:
        raise Bad('name', 'duplicate name %r' % o['name'])
    if o['kind'] not in ('training', 'inference'):
        raise Bad('kind', 'must be "training" or "inference"')
    allowed = TRAINING if o['kind'] == 'training' else INFERENCE
    for k in o:
        if k not in allowed:
            raise Bad(k, 'unknown key for kind %s' % o['kind'])
    if not isinstance(o['model'], str) or not o['model']:
        raise Bad('model', 'must be a non-empty string')
    if models and not os.path.isfile(os.path.join(models, o['model'] + '.json')):
        raise Bad('model', 'no model %r in %s' % (o['model'], models))
    if not is_int(o['batch']) or o['batch'] < 1:
        raise Bad('batch', 'must be an integer >= 1')
    a = o['arrival_s']
    if not is_num(a) or a < 0:
        raise Bad('arrival_s', 'must be a number >= 0')
    if prev_arrival is not None and a < prev_arrival:
        raise Bad('arrival_s', 'decreases (previous line: %s)' % prev_arrival)
    if 'priority' in o and not is_int(o['priority']):
        raise Bad('priority', 'must be an integer')
    if 'weight' in o and (not is_num(o['weight']) or o['weight'] <= 0):
        raise Bad('weight', 'must be a number > 0')
    if 'tenant' in o and (not isinstance(o['tenant'], str) or not o['tenant']):
        raise Bad('tenant', 'must be a non-empty string')
    if 'expected_duration_s' in o and (not is_num(o['expected_duration_s']) or o['expected_duration_s'] < 0):
        raise Bad('expected_duration_s', 'must be a number >= 0')
    if o['kind'] == 'training':
        if 'iterations' not in o:
            raise Bad('iterations', 'missing required key')
        if not is_int(o['iterations']) or o['iterations'] < 1:
            raise Bad('iterations', 'must be an integer >= 1')
        if 'optimizer' in o and o['optimizer'] not in OPTIMIZERS:
            raise Bad('optimizer', 'must be one of %s' % ', '.join(OPTIMIZERS))
    else:
        if 'requests' not in o:
            raise Bad('requests', 'missing required key')
        r = o['requests']
        if isinstance(r, list):
            prev = None
            for i, t in enumerate(r):
                if not is_num(t):
                    raise Bad('requests', 'element %d is not a number' % i)
                if t < a:
                    raise Bad('requests', 'element %d (%s) is before arrival_s' % (i, t))
                if prev is not None and t < prev:
                    raise Bad('requests', 'element %d decreases' % i)
                prev = t
        elif isinstance(r, dict):
            for k in r:
                if k not in REQ_OBJ:
                    raise Bad('requests.' + k, 'unknown key')
            if not isinstance(r.get('file'), str) or not r['file']:
                raise Bad('requests.file', 'missing or not a string')
            if 'offset_s' in r and (not is_num(r['offset_s']) or r['offset_s'] < a):
                raise Bad('requests.offset_s', 'must be a number >= arrival_s')
            if 'time_scale' in r and (not is_num(r['time_scale']) or r['time_scale'] <= 0):
                raise Bad('requests.time_scale', 'must be a number > 0')
            if 'limit' in r and (not is_int(r['limit']) or r['limit'] < 1):
                raise Bad('requests.limit', 'must be an integer >= 1')
            if repo:
                check_arrivals_file(os.path.join(repo, r['file']), 'requests.file')
        else:
            raise Bad('requests', 'must be an array of times or an object with "file"')
        if 'slo_ms' in o and (not is_num(o['slo_ms']) or o['slo_ms'] <= 0):
            raise Bad('slo_ms', 'must be a number > 0')
    return a


def check_file(path, repo, models):
    names, prev, n = set(), None, 0
    kinds = {}
    with open(path) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                return 'error: %s:%d: -: empty line' % (path, lineno)
            try:
                o = json.loads(line)
            except json.JSONDecodeError as e:
                return 'error: %s:%d: -: invalid JSON (%s)' % (path, lineno, e.msg)
            try:
                prev = check_job(o, repo, models, names, prev)
            except Bad as b:
                return 'error: %s:%d: %s: %s' % (path, lineno, b.key, b.what)
            names.add(o['name'])
            kinds[o['model']] = kinds.get(o['model'], 0) + 1
            n += 1
    if n == 0:
        return 'error: %s:1: -: file has no jobs' % path
    print('ok: %s: %d jobs %s' % (path, n, dict(sorted(kinds.items()))))
    return None


def main(argv):
    repo, models, files = None, None, []
    it = iter(argv)
    for a in it:
        if a == '--repo':
            repo = next(it)
        elif a == '--models':
            models = next(it)
        else:
            files.append(a)
    if not files:
        print(__doc__)
        return 2
    if repo is None:
        repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rc = 0
    for p in files:
        err = check_file(p, repo, models)
        if err:
            print(err, file=sys.stderr)
            rc = 2
    return rc


if __name__ == '__main__':
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
