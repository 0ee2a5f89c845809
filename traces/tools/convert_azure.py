#!/usr/bin/python3
"""Convert the Azure LLM inference trace 2023 (and Orion's inter-arrival gaps) into gpumux arrival CSVs.

Inputs (read-only reference copies, see traces/arrivals/SOURCE.txt):
  <shared>/data/azure-llm-inference-2023/AzureLLMInferenceTrace_{code,conv}.csv
      TIMESTAMP,ContextTokens,GeneratedTokens   (TIMESTAMP like 2023-11-16 18:17:03.9799600, 100 ns resolution)
  <shared>/data/orion-kernel-profiles/inter_arrival_times.json   (list of gaps in seconds)
Outputs:
  traces/arrivals/azure_llm_2023_{code,conv}.csv   header arrival_s,context_tokens,generated_tokens
  traces/arrivals/orion_inter_arrival.csv          header arrival_s

arrival_s = seconds since the first request of the file, printed with exactly 6 decimals (microseconds).
All time arithmetic is done in integers (100 ns ticks) so no float rounding enters; ticks are rounded
half-up to microseconds.  The script checks that the source is sorted (non-decreasing) and fails if not.

Usage: /usr/bin/python3 traces/tools/convert_azure.py [--shared /work/shared] [--out traces/arrivals]
Stdlib only.
"""
import argparse
import calendar
import csv
import json
import os
import sys
import time
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def parse_ts_ticks(ts):
    """'2023-11-16 18:17:03.9799600' -> integer number of 100 ns ticks since the Unix epoch (UTC assumed)."""
    date_part, _, frac = ts.strip().partition('.')
    t = time.strptime(date_part, '%Y-%m-%d %H:%M:%S')
    secs = calendar.timegm(t)
    if not frac.isdigit() or len(frac) > 7:
        raise ValueError('bad fractional seconds in %r' % ts)
    frac = (frac + '0000000')[:7]
    return secs * 10_000_000 + int(frac)


def ticks_to_us_str(ticks):
    us = (ticks + 5) // 10  # half-up rounding, ticks >= 0
    return '%d.%06d' % (us // 1_000_000, us % 1_000_000)


def convert_azure(src, dst):
    rows = []
    with open(src, newline='') as f:
        rd = csv.reader(f)
        header = next(rd)
        if header != ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens']:
            raise SystemExit('error: %s: unexpected header %r' % (src, header))
        for lineno, r in enumerate(rd, start=2):
            if len(r) != 3:
                raise SystemExit('error: %s:%d: expected 3 columns' % (src, lineno))
            rows.append((parse_ts_ticks(r[0]), int(r[1]), int(r[2]), lineno))
    unsorted = sum(1 for a, b in zip(rows, rows[1:]) if b[0] < a[0])
    if unsorted:
        raise SystemExit('error: %s: %d timestamps go backwards; refusing to reorder silently' % (src, unsorted))
    t0 = rows[0][0]
    with open(dst, 'w', newline='') as f:
        f.write('arrival_s,context_tokens,generated_tokens\n')
        for ticks, ctx, gen, _ in rows:
            f.write('%s,%d,%d\n' % (ticks_to_us_str(ticks - t0), ctx, gen))
    span = (rows[-1][0] - t0) / 1e7
    return len(rows), span


def convert_orion(src, dst):
    with open(src) as f:
        gaps = json.load(f)
    if not isinstance(gaps, list) or not gaps:
        raise SystemExit('error: %s: expected a non-empty JSON list' % src)
    t = Decimal(0)
    with open(dst, 'w', newline='') as f:
        f.write('arrival_s\n')
        for i, g in enumerate(gaps):
            d = Decimal(repr(g))  # exact decimal of the printed JSON value, no binary rounding
            if d < 0:
                raise SystemExit('error: %s: gap %d is negative' % (src, i))
            t += d
            f.write('%s\n' % format(t.quantize(Decimal('0.000001')), 'f'))
    return len(gaps), float(t)


def check_nondecreasing(path):
    prev = None
    n = 0
    with open(path) as f:
        next(f)
        for line in f:
            v = Decimal(line.split(',')[0])
            if prev is not None and v < prev:
                raise SystemExit('error: %s: arrival_s decreases at data row %d' % (path, n + 1))
            prev = v
            n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--shared', default=os.path.join(os.path.dirname(REPO), 'shared'))
    ap.add_argument('--out', default=os.path.join(REPO, 'traces', 'arrivals'))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    az = os.path.join(a.shared, 'data', 'azure-llm-inference-2023')
    for kind in ('code', 'conv'):
        src = os.path.join(az, 'AzureLLMInferenceTrace_%s.csv' % kind)
        dst = os.path.join(a.out, 'azure_llm_2023_%s.csv' % kind)
        n, span = convert_azure(src, dst)
        check_nondecreasing(dst)
        print('%s: %d requests over %.3f s (%.2f req/s) -> %s' % (os.path.basename(src), n, span, n / span, dst))
    src = os.path.join(a.shared, 'data', 'orion-kernel-profiles', 'inter_arrival_times.json')
    dst = os.path.join(a.out, 'orion_inter_arrival.csv')
    n, span = convert_orion(src, dst)
    check_nondecreasing(dst)
    print('%s: %d arrivals over %.3f s -> %s' % (os.path.basename(src), n, span, dst))


if __name__ == '__main__':
    sys.exit(main())
