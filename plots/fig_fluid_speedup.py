"""Fluid (MLSys'21; executors: docs/policies/fluid.md): time-to-target and makespan of a tuning job
per tuning algorithm x workload, with and without Fluid, and the GPU utilisation over time of one
case. Top rows: bars (mean over the seeds, whiskers min-max) of time-to-target and makespan per
tuner, one panel per workload, one bar per executor; each non-baseline bar is annotated with its
speed-up over trial_per_gpu (Ray Tune's one trial per GPU), the mean of the per-seed ratios baseline
/ executor; third row: the trials' GPU time (the paper's GPU-seconds, Fig. 3b), same ratio, > 1 =
fewer GPU-seconds. A target ends the tuning, so makespan = time-to-target, one metric in the paper
too (Fluid §6.1). Bottom: busy fraction of the 8 GPUs over time (compute ops, union per GPU, 40
windows) for UTIL_CASE's first seed, one line per executor, from events.jsonl.

The executors are data: every policy.name found in the sweeps' points is drawn (ORDER only
fixes the order and colour of the known ones), so an executor added to the sweeps' policy.name
lists appears without editing this file. The abstract's claims: SyncBOHB +100 % (200 % in
the proceedings abstract), BOHB and ASHA ~30 %, same final accuracy. The CSV has every
(workload, tuner, executor): seeds, time-to-target and makespan (mean, min, max), speed-up
(mean, min, max over seeds), best metric, trials started, GPU time, mean GPU utilisation."""
import figlib
from figlib import plt

FIGURE = "fluid_speedup"
WORKLOADS = [("cifar", "CIFAR-10 AlexNet (acc >= 0.90)"), ("wlm", "WLM LSTM (ppl <= 140)"),
             ("dcgan", "DCGAN MNIST (IS >= 5.2)")]
TUNERS = [("hyperband", "Hyperband"), ("asha", "ASHA"), ("bohb", "BOHB"),
          ("sync_bohb", "SyncBOHB")]
SWEEPS = [f"experiments/sweeps/fluid_{w}_{t}.json" for w, _ in WORKLOADS for t, _ in TUNERS]
UTIL_CASE = "experiments/sweeps/fluid_dcgan_hyperband.json"
EVENTS = [UTIL_CASE]
BASELINE = "trial_per_gpu"
ORDER = ["trial_per_gpu", "fluid", "dynamic_fluid", "fluid_band"]
COLORS = {"trial_per_gpu": "#7f7f7f", "fluid": "#1f77b4", "dynamic_fluid": "#2ca02c",
          "fluid_band": "#d62728"}
UTIL_WINDOWS = 40


def executor_order(found):
    return [e for e in ORDER if e in found] + sorted(found - set(ORDER))


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def collect(fig):
    """{(workload, tuner): {executor: {seed: tuning row of the summary + utilisation}}}"""
    out = {}
    for w, _ in WORKLOADS:
        for t, _ in TUNERS:
            for _, cfg, s in fig.points(f"experiments/sweeps/fluid_{w}_{t}.json"):
                row = dict(s["tuning"][0])
                devs = s["devices"]
                row["utilisation"] = mean([d["compute_utilisation"] for d in devs])
                out.setdefault((w, t), {}).setdefault(cfg["policy"]["name"], {})[cfg["seed"]] = row
    return out


def stats(by_seed, key):
    xs = [r[key] for r in by_seed.values() if r[key] is not None]
    return (mean(xs), min(xs), max(xs)) if xs else (None, None, None)


def speedups(by_exec, executor, key):
    """Per-seed ratios baseline / executor over the seeds both have a value for."""
    base, other = by_exec.get(BASELINE, {}), by_exec.get(executor, {})
    return [base[s][key] / other[s][key] for s in sorted(set(base) & set(other))
            if base[s][key] is not None and other[s][key]]


def busy_over_time(events, windows):
    """(window edges in s, mean busy fraction of the GPUs per window) from op_end records of
    compute ops: the union of each GPU's op intervals, so packed trials count once."""
    per_dev, end = {}, 0
    for e in events:
        if e.get("ev") == "op_end" and e.get("kind") == "compute" and e.get("status") == "ok":
            per_dev.setdefault(e["dev"], []).append((e["start"], e["t"]))
            end = max(end, e["t"])
        elif e.get("ev") == "run_end":
            end = max(end, e["t"])
    if end == 0 or not per_dev:
        return [], []
    width = end / windows
    busy = [0.0] * windows
    for ivs in per_dev.values():
        ivs.sort()
        cur_s, cur_e = ivs[0]
        merged = []
        for s, e in ivs[1:]:
            if s <= cur_e:
                cur_e = max(cur_e, e)
            else:
                merged.append((cur_s, cur_e))
                cur_s, cur_e = s, e
        merged.append((cur_s, cur_e))
        for s, e in merged:
            k = int(s // width)
            while k < windows and k * width < e:
                lo, hi = max(s, k * width), min(e, (k + 1) * width)
                busy[k] += max(0.0, hi - lo)
                k += 1
    gpus = max(per_dev) + 1
    return ([(k + 0.5) * width / 1e9 for k in range(windows)],
            [b / (width * gpus) for b in busy])


def plot(fig):
    data = collect(fig)
    found = {e for by_exec in data.values() for e in by_exec}
    executors = executor_order(found)
    rows = []
    for (w, t), by_exec in sorted(data.items()):
        for e in executor_order(set(by_exec)):
            by_seed = by_exec[e]
            ttt, mk = stats(by_seed, "time_to_target_s"), stats(by_seed, "makespan_s")
            sp = speedups(by_exec, e, "time_to_target_s")
            spm = speedups(by_exec, e, "makespan_s")
            gpu = speedups(by_exec, e, "gpu_time_s")
            reached = sum(1 for r in by_seed.values() if r["target_reached"])
            rows.append([w, t, e, len(by_seed), reached, *ttt, *mk,
                         mean(sp), min(sp, default=None), max(sp, default=None), mean(spm), mean(gpu),
                         mean([r["best_metric"] for r in by_seed.values()]),
                         mean([r["trials_started"] for r in by_seed.values()]),
                         mean([r["gpu_time_s"] for r in by_seed.values()]),
                         mean([r["utilisation"] for r in by_seed.values()])])
    fig.write_csv(["workload", "tuner", "executor", "seeds", "target_reached", "ttt_mean_s",
                   "ttt_min_s", "ttt_max_s", "makespan_mean_s", "makespan_min_s",
                   "makespan_max_s", "speedup_ttt_mean", "speedup_ttt_min", "speedup_ttt_max",
                   "speedup_makespan_mean", "gpu_time_ratio_mean", "best_metric_mean", "trials_started_mean",
                   "gpu_time_mean_s", "gpu_utilisation_mean"],
                  [["" if x is None else x for x in r] for r in rows])

    workloads = [(w, label) for w, label in WORKLOADS if any(k[0] == w for k in data)]
    tuners = [(t, label) for t, label in TUNERS if any(k[1] == t for k in data)]
    f = plt.figure(figsize=(4.6 * max(len(workloads), 1), 13.5))
    grid = f.add_gridspec(4, max(len(workloads), 1))
    metrics = [("time_to_target_s", "time-to-target (s)"), ("makespan_s", "makespan (s)"),
               ("gpu_time_s", "GPU time of the trials (s)")]
    for r, (key, ylabel) in enumerate(metrics):
        for c, (w, wlabel) in enumerate(workloads):
            ax = f.add_subplot(grid[r, c])
            groups = [t for t, _ in tuners]
            n = len(executors)
            width = 0.8 / max(n, 1)
            for i, e in enumerate(executors):
                for g, t in enumerate(groups):
                    by_seed = data.get((w, t), {}).get(e)
                    if not by_seed:
                        continue
                    m, lo, hi = stats(by_seed, key)
                    if m is None:
                        continue
                    x = g - 0.4 + (i + 0.5) * width
                    ax.bar(x, m, width, color=COLORS.get(e), label=e if g == 0 else None,
                           yerr=[[m - lo], [hi - m]], capsize=2, error_kw={"lw": 0.8})
                    sp = speedups(data[(w, t)], e, key)
                    if e != BASELINE and sp:
                        ax.annotate(f"{mean(sp):.2f}x", (x, hi), ha="center", va="bottom",
                                    fontsize=7, rotation=90, xytext=(0, 2),
                                    textcoords="offset points")
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels([label for _, label in tuners], fontsize=8)
            lo, hi = ax.get_ylim()
            ax.set_ylim(0, hi * 1.25)  # room for the ratios
            ax.grid(True, axis="y", alpha=0.3)
            ax.set_title(wlabel, fontsize=9)
            if c == 0:
                ax.set_ylabel(ylabel + ", simulated")
            if r == 0 and c == 0:
                ax.legend(fontsize=7, loc="upper left")
    ax = f.add_subplot(grid[3, :])
    pts = fig.points(UTIL_CASE)
    seed = min((cfg["seed"] for _, cfg, _ in pts), default=None)
    for label, cfg, _ in sorted(pts, key=lambda p: executors.index(p[1]["policy"]["name"])
                                if p[1]["policy"]["name"] in executors else 99):
        if cfg["seed"] != seed:
            continue
        try:
            xs, ys = busy_over_time(fig.events(UTIL_CASE, label), UTIL_WINDOWS)
        except FileNotFoundError:
            continue
        e = cfg["policy"]["name"]
        ax.plot(xs, [100 * y for y in ys], marker="o", ms=3, color=COLORS.get(e), label=e)
    ax.set_ylim(0, 105)
    ax.set_xlabel("time (s, simulated)")
    ax.set_ylabel("GPU busy (%, mean of GPUs)")
    ax.set_title(f"GPU utilisation over time: {figlib.sweep_name(UTIL_CASE)}, seed {seed} "
                 f"({UTIL_WINDOWS} windows per run)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    seeds = max((len(by_seed) for by_exec in data.values() for by_seed in by_exec.values()),
                default=0)
    f.suptitle("Fluid vs one trial per GPU: tuning time-to-target and makespan "
               f"({fig.platform_word(SWEEPS[0])}, 8 x {fig.device_label(SWEEPS[0]).split(',')[0]};"
               f" bars: mean of {seeds} seed(s), whiskers min-max; label: speed-up vs "
               "trial_per_gpu)", fontsize=9)
    fig.save(f)
    return rows
