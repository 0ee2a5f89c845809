#!/usr/bin/env python3
"""Regenerates every figure: runs the sweeps each figure needs (simulated unless the sweep
says otherwise), then each figure script. Output: plots/out/<figure>.{png,pdf,csv}.

  /usr/bin/python3 plots/make_figures.py [--quick] [--only NAME ...] [--out DIR] [-j N]
                                         [--platform sim|emulated|cuda] [--set KEY=VALUE ...]

--platform cuda runs the same sweeps on the real GPU (one point at a time, in real time:
each point takes its horizon in wall-clock time) into results/figures-cuda[-quick] and
plots/out/cuda/; name the GPU with --out when committing (e.g. --out plots/gpu/h100-sxm).

Sweeps are resumable: complete points under the results root are reused (--force re-runs them).
A run's events.jsonl is deleted once its sweep is done unless a figure lists the sweep in
EVENTS (the PipeSwitch sweeps write ~170 MB of events per point). A failed sweep point or
figure is reported at the end and makes the exit status 1; the other figures are still made.
"""
import argparse
import glob
import importlib.util
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figlib  # noqa: E402


def load_figures():
    mods = []
    for path in sorted(glob.glob(os.path.join(figlib.ROOT, "plots", "fig_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods


def events_missing(results, sweep):
    d = os.path.join(results, figlib.sweep_name(sweep))
    runs = [os.path.join(d, x) for x in os.listdir(d)] if os.path.isdir(d) else []
    return any(os.path.exists(os.path.join(r, "run.json"))
               and not os.path.exists(os.path.join(r, "events.jsonl")) for r in runs)


def drop_events(results, sweep):
    for f in glob.glob(os.path.join(results, figlib.sweep_name(sweep), "*", "events.jsonl")):
        os.remove(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller traces, same code")
    ap.add_argument("--only", nargs="*", default=None, help="figure names to make")
    ap.add_argument("--out", default=os.path.join(figlib.ROOT, "plots", "out"))
    ap.add_argument("--results", default=None, help="results root (default results/figures[-quick])")
    ap.add_argument("--gpumux", default=os.path.join(figlib.ROOT, "build", "experiments", "gpumux"))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--force", action="store_true", help="re-run complete sweep points")
    ap.add_argument("--keep-events", action="store_true", help="keep every run's events.jsonl")
    ap.add_argument("--platform", default="sim", choices=["sim", "emulated", "cuda"],
                    help="where the sweeps run (default sim); real platforms run one point at a time")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="override applied to every run (repeatable), e.g. devices.0.profile=h100-sxm")
    args = ap.parse_args()
    real = args.platform != "sim"
    if real:
        args.jobs = 1  # concurrent points would share the GPU (or the host) and skew each other
        args.sets.insert(0, "platform=" + args.platform)
    suffix = ("-" + args.platform if real else "") + ("-quick" if args.quick else "")
    results = os.path.abspath(args.results or os.path.join(figlib.ROOT, "results",
                                                           "figures" + suffix))
    if real and args.out == ap.get_default("out"):
        args.out = os.path.join(args.out, args.platform)
    args.gpumux = os.path.abspath(args.gpumux)
    os.makedirs(args.out, exist_ok=True)
    all_figures = load_figures()
    unknown = sorted(set(args.only or []) - {m.FIGURE for m in all_figures})
    if unknown:
        ap.error("unknown figure(s) for --only: " + ", ".join(unknown) + "; figures: " +
                 ", ".join(m.FIGURE for m in all_figures))  # exit status 2
    figures = [m for m in all_figures if args.only is None or m.FIGURE in args.only]
    needs_events = {s for m in figures for s in getattr(m, "EVENTS", [])}
    t0 = time.time()
    failed = []
    done = set()
    for m in figures:
        for s in m.SWEEPS:
            if s in done:
                continue
            done.add(s)
            force = args.force or (s in needs_events and events_missing(results, s))
            t1 = time.time()
            keep = s in needs_events or args.keep_events
            if not figlib.run_sweep(args.gpumux, s, results, args.quick, args.jobs, force, keep,
                                    args.sets):
                failed.append(f"sweep {s} (some points failed; see its output above)")
            print(f"  {s}: {time.time() - t1:.1f} s", file=sys.stderr, flush=True)
            if s not in needs_events and not args.keep_events:
                drop_events(results, s)
    for m in figures:
        try:
            m.plot(figlib.FigureContext(m, results, args.out, args.quick))
        except Exception:  # one broken figure must not hide the others
            traceback.print_exc()
            failed.append(f"figure {m.FIGURE}")
            continue
        print(f"figure {m.FIGURE}: {os.path.relpath(os.path.join(args.out, m.FIGURE), figlib.ROOT)}"
              ".png/.pdf/.csv", flush=True)
    print(f"{len(figures)} figures in {time.time() - t0:.1f} s", flush=True)
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
