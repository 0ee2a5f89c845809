"""Cross-paper figure (none of the four papers has it): every policy and baseline on one
identical mixed trace — real Azure LLM inference 2023 arrivals driving a BERT-base service and
a Philly-derived training stream — plotted as inference p99 latency against training
throughput. Down and to the right is better."""
import math

import figlib
from figlib import plt

FIGURE = "crosspaper_latency_vs_throughput"
SWEEPS = ["experiments/sweeps/crosspaper.json"]


def plot(fig):
    res = fig.results(SWEEPS[0])
    rows = []
    for label, s in res.items():
        inf = s["inference"]
        rows.append([label, inf["count"], inf["p50_ms"], inf["p99_ms"],
                     inf["slo_attainment"] if inf["slo_attainment"] is not None else "",
                     s["training"]["samples_per_s"], s["training"]["iterations"],
                     s["devices"][0]["compute_utilisation"]])
    fig.write_csv(["policy", "requests_served", "p50_ms", "p99_ms", "slo_attainment",
                   "training_samples_per_s", "training_iterations", "gpu0_utilisation"], rows)
    f, ax = plt.subplots(figsize=(7, 4.5))
    for i, r in enumerate(rows):
        p99 = r[3] if r[1] else float("nan")
        if math.isnan(p99):
            ax.annotate(f"{r[0]} (no request served)", (r[5], 1), fontsize=7, color="gray")
            continue
        ax.scatter(r[5], p99, s=40)
        # Stagger labels: policies can land on the same point (e.g. inference-only ones).
        ax.annotate(r[0], (r[5], p99), textcoords="offset points", xytext=(4, 4 - 11 * (i % 3)),
                    fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel("training throughput (samples/s)")
    ax.set_ylabel("inference p99 latency (ms, log)")
    ax.set_title(f"All policies, one trace: Azure LLM 2023 arrivals + Philly training\n"
                 f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])})", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.save(f)
