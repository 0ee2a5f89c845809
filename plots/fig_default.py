"""The default experiment (experiments/configs/default.json; no paper figure): batch-8
ResNet-152 inference requests (Poisson 1/s) arriving while a batch-8 ResNet-152 training job runs
on the V100 profile, under every baseline. Left: inference latency (p50, p99); right: training
throughput (samples/s while the job was present). A policy that served no request has no
latency: empty CSV cells and a note instead of a bar."""
import figlib
from figlib import plt

FIGURE = "default_baselines"
SWEEPS = ["experiments/sweeps/default.json"]
ORDER = ["ready_model", "exclusive", "stop_and_start", "time_slicing", "mps"]


def plot(fig):
    res = fig.results(SWEEPS[0])
    runs = [r for r in ORDER if r in res] + sorted(set(res) - set(ORDER))
    rows = [[r, res[r]["inference"]["count"], res[r]["inference"]["requests_unserved"],
             res[r]["inference"]["p50_ms"], res[r]["inference"]["p99_ms"],
             res[r]["inference"]["slo_attainment_arrived"],
             res[r]["training"]["samples_per_s_present_sum"],
             res[r]["jobs_overall"]["rejected"], res[r]["jobs_overall"]["never_started"]]
            for r in runs]
    fig.write_csv(["policy", "requests_served", "requests_unserved", "p50_ms", "p99_ms",
                   "slo_attainment", "training_samples_per_s", "jobs_rejected",
                   "jobs_never_started"], rows)
    f, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    figlib.bars(a1, runs, ["p50", "p99"],
                lambda r, k: res[r]["inference"][k + "_ms"] if res[r]["inference"]["count"]
                else None, {"p50": "#1f77b4", "p99": "#d62728"})
    for i, r in enumerate(runs):
        if not res[r]["inference"]["count"]:
            a1.annotate("no request\nserved", (i, 0.05), xycoords=("data", "axes fraction"),
                        ha="center", fontsize=7)
    a1.set_yscale("log")
    a1.set_ylabel("inference latency (ms, log)")
    a1.legend(fontsize=8)
    a2.bar(range(len(runs)), [x[6] for x in rows], color="#2ca02c", width=0.6)
    a2.set_xticks(range(len(runs)))
    a2.set_ylabel("training throughput (samples/s)")
    for a in (a1, a2):
        a.set_xticklabels(runs, rotation=20, fontsize=8)
        a.grid(True, axis="y", which="both", alpha=0.3)
    f.suptitle("Default experiment: ResNet-152 inference (Poisson 1/s) during ResNet-152 training "
               f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])})", fontsize=10)
    fig.save(f)
