"""Salus (MLSys'20) hyper-parameter exploration (SymbioticLab/Salus card271.py): 300 identical jobs
x 500 iterations of one small model (VAE batch 64, SuperRes batch 128, ResNet-50 batch 50), all
submitted at t = 0, on the P100 profile capped at 14 GiB: sequential stock TF (one job after the
other) vs Salus PACK with its lane manager. Bar = makespan; label = TF / Salus. Claim: 2.38x better
GPU utilisation for hyper-parameter tuning (abstract)."""
import figlib
from figlib import plt

FIGURE = "salus_hp_makespan"
SWEEPS = ["experiments/sweeps/salus_hp.json"]
SYSTEMS = ["sequential_tf", "salus_pack"]
LABELS = {"sequential_tf": "stock TF, sequential", "salus_pack": "Salus PACK (lanes)"}
COLORS = {"sequential_tf": "#7f7f7f", "salus_pack": "#d62728"}


def plot(fig):
    mk, jobs = {}, {}
    for label, cfg, s in fig.points(SWEEPS[0]):
        model = s["jobs"][0]["model"]
        system = "sequential_tf" if cfg["policy"]["name"] == "exclusive" else "salus_pack"
        mk[(model, system)] = s["jobs_overall"]["makespan_s"]
        jobs[(model, system)] = (s["jobs_overall"]["finished"], len(s["jobs"]),
                                 s["jobs"][0]["batch"], s["jobs"][0].get("iterations"))
    models = [m for m in ["vae", "superres", "resnet50"] if (m, SYSTEMS[0]) in mk or
              (m, SYSTEMS[1]) in mk]
    rows = [[m, p, jobs[(m, p)][2], jobs[(m, p)][1], jobs[(m, p)][0], mk[(m, p)],
             mk[(m, "sequential_tf")] / mk[(m, p)] if (m, "sequential_tf") in mk else ""]
            for m in models for p in SYSTEMS if (m, p) in mk]
    fig.write_csv(["model", "system", "batch", "jobs", "finished", "makespan_s",
                   "tf_makespan_over_this"], rows)

    f, ax = plt.subplots(figsize=(7, 4.2))
    figlib.bars(ax, models, SYSTEMS, lambda m, p: mk.get((m, p), float("nan")) / 60,
                COLORS, LABELS, width=0.6)
    for i, m in enumerate(models):
        if (m, "sequential_tf") in mk and (m, "salus_pack") in mk:
            ax.annotate(f"{mk[(m, 'sequential_tf')] / mk[(m, 'salus_pack')]:.2f}x",
                        (i + 0.15, mk[(m, "salus_pack")] / 60), ha="center", va="bottom",
                        fontsize=8)
    n = max((v[1] for v in jobs.values()), default=0)
    ax.set_xticklabels([f"{figlib.model_name(m)} (batch {jobs[(m, SYSTEMS[0])][2]})"
                        if (m, SYSTEMS[0]) in jobs else m for m in models])
    ax.set_yscale("log")
    ax.set_ylabel("makespan (min, log)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Salus: hyper-parameter exploration, {n} identical jobs per model; "
                 f"label = TF / Salus\n({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])}, 14 GiB)",
                 fontsize=10)
    fig.save(f)
