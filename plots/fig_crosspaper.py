"""Cross-paper figure (none of the four papers has it): every policy and baseline on one
identical mixed trace — real Azure LLM inference 2023 arrivals driving a BERT-base service and
a Philly-derived training stream — plotted as inference p99 latency against training
throughput. Down and to the right is better.

Read with docs/figures.md's caveats. Training throughput is the sum over training jobs of each
job's samples per second while it was present (arrival to finish, rejection or the run's end):
a job rejected for memory adds nothing, and the CSV counts the rejected and never-started jobs
beside it. A policy that served no request has no latency: its p50/p99 cells are empty and it
gets no point, only a note at the bottom of the plot."""
from figlib import plt

FIGURE = "crosspaper_latency_vs_throughput"
SWEEPS = ["experiments/sweeps/crosspaper.json"]


def plot(fig):
    res = fig.results(SWEEPS[0])
    rows = []
    for label, s in res.items():
        inf, tr = s["inference"], s["training"]
        rows.append([label, inf["requests_arrived"], inf["count"], inf["requests_unserved"],
                     inf["p50_ms"], inf["p99_ms"], inf["slo_attainment"],
                     inf["slo_attainment_arrived"], inf["goodput_per_s"],
                     tr["samples_per_s_present_sum"], tr["iterations"], tr["jobs"],
                     tr["finished"], tr["rejected"], tr["never_started"], tr["unfinished"],
                     s["devices"][0]["compute_utilisation"]])
    fig.write_csv(["policy", "requests_arrived", "requests_served", "requests_unserved",
                   "p50_ms", "p99_ms", "slo_attainment_served", "slo_attainment_arrived",
                   "goodput_per_s", "training_samples_per_s", "training_iterations",
                   "training_jobs", "training_finished", "training_rejected",
                   "training_never_started", "training_unfinished", "gpu0_utilisation"], rows)
    f, ax = plt.subplots(figsize=(7.5, 5))
    notes = []
    for i, r in enumerate(rows):
        counts = ", ".join(x for x in (f"{r[13]} rej." if r[13] else "",
                                       f"{r[14]} not started" if r[14] else "") if x)
        label = f"{r[0]} ({counts})" if counts else r[0]
        if not r[2]:  # no request served: no latency, no point
            notes.append(f"{r[0]}: no request served, {r[9]:.0f} samples/s"
                         + (f", {r[13]} training jobs rejected" if r[13] else ""))
            continue
        ax.scatter(r[9], r[5], s=40)
        # Stagger labels: policies can land on the same point (e.g. inference-only ones).
        ax.annotate(label, (r[9], r[5]), textcoords="offset points",
                    xytext=(4, 4 - 11 * (i % 3)), fontsize=8)
    for k, n in enumerate(notes):
        ax.annotate(n, (0.01, 0.02 + 0.045 * k), xycoords="axes fraction", fontsize=7,
                    color="gray")
    ax.set_yscale("log")
    ax.set_xlabel("training throughput (samples/s, sum over jobs while present)")
    ax.set_ylabel("inference p99 latency (ms, log)")
    ax.set_title(f"All policies, one trace: Azure LLM 2023 arrivals + Philly training\n"
                 f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])}; "
                 "rej. / not started: training jobs)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.save(f)
