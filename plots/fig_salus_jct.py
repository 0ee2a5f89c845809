"""Salus (MLSys'20) JCT CDFs for long-running training (SymbioticLab/Salus card272.py): the 100-job
trace of the 15 Salus workloads (Poisson arrivals) on the P100 profile capped at 14 GiB, under
stock-TF FIFO (one job at a time: exclusive) and Salus' SRTF, PACK and FAIR in one whole-GPU lane
(the paper's four curves; thicker), plus Salus' other schedulers and lane modes (thin). Claim: SRTF
improves the average JCT 3.19x over FIFO (abstract)."""
import figlib
from figlib import plt

FIGURE = "salus_jct_cdf"
SWEEPS = ["experiments/sweeps/salus_jct.json"]
MAIN = {"fifo_tf": ("FIFO (stock TF)", "black"), "salus_srtf_single": ("Salus SRTF", "#d62728"),
        "salus_pack_single": ("Salus PACK", "#1f77b4"), "salus_fair_single": ("Salus FAIR",
                                                                                "#2ca02c")}


def plot(fig):
    res = fig.results(SWEEPS[0])
    jct = {r: sorted(j["jct_s"] for j in s["jobs"] if j["status"] == "finished")
           for r, s in res.items()}
    rows = [[r, s["jobs_overall"]["finished"], len(s["jobs"]), s["jobs_overall"]["mean_jct_s"],
             s["jobs_overall"]["p50_jct_s"], s["jobs_overall"]["p95_jct_s"],
             s["jobs_overall"]["makespan_s"]] for r, s in res.items()]
    fifo = res["fifo_tf"]["jobs_overall"]["mean_jct_s"] if "fifo_tf" in res else None
    for r in rows:
        r.append(fifo / r[3] if fifo and r[3] else "")
    fig.write_csv(["run", "finished", "jobs", "mean_jct_s", "p50_jct_s", "p95_jct_s",
                   "makespan_s", "fifo_mean_over_this_mean"], rows)

    f, ax = plt.subplots(figsize=(8, 4.8))
    order = [r for r in MAIN if r in jct] + sorted(set(jct) - set(MAIN))
    for r in order:
        v = jct[r]
        if not v:
            continue
        ys = [(i + 1) / len(res[r]["jobs"]) for i in range(len(v))]
        mean = res[r]["jobs_overall"]["mean_jct_s"]
        name, color = MAIN.get(r, (r, None))
        main = r in MAIN
        ax.step(v, ys, where="post", color=color, linewidth=2 if main else 0.8,
                alpha=1 if main else 0.6, linestyle="-" if main else "--",
                label=f"{name}: mean {mean:,.0f} s" + (f" ({fifo / mean:.2f}x)" if fifo else ""))
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (s, log)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    n = len(next(iter(res.values()))["jobs"]) if res else 0
    ax.set_title(f"Salus: JCT CDF, {n}-job training trace; (Nx) = FIFO mean / this mean\n"
                 f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])}, 14 GiB)", fontsize=10)
    fig.save(f)
