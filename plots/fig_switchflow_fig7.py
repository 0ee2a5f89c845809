"""SwitchFlow (Middleware'21) Fig. 7: throughput of two batch-32 training jobs sharing a GPU.
A low-priority background job (ResNet-50 or VGG-16) starts first; the high-priority job (one of
six models) arrives at 0.2 s. Free sharing (MPS on the GTX 1080 Ti or on the RTX 2080 Ti: both
jobs on one GPU) vs SwitchFlow on server A (RTX 2080 Ti + GTX 1080 Ti + Xeons), whose high job
takes the 2080 Ti while the background job migrates to the CPU (panel d; no 1080 Ti) or to the
1080 Ti (panels e, f). Bars = co-run images/s; black ticks = the job's solo rate on the same GPU
(no solo run exists for the CPU). Time slicing is in the CSV."""
import figlib
from figlib import plt

FIGURE = "switchflow_fig7_cotraining"
SWEEPS = ["experiments/sweeps/switchflow_fig7.json", "experiments/sweeps/switchflow_fig7_baselines.json",
          "experiments/sweeps/switchflow_fig7_solo.json"]
MODELS = ["resnet50", "vgg16", "vgg19", "densenet121", "densenet169", "inception_v3"]
PANELS = [("mps", "gtx1080ti"), ("mps", "rtx2080ti"), ("switchflow", "cpu"),
          ("switchflow", "gtx1080ti")]
TITLES = {("mps", "gtx1080ti"): "MPS, both on GTX 1080 Ti", ("mps", "rtx2080ti"):
          "MPS, both on RTX 2080 Ti", ("switchflow", "cpu"): "SwitchFlow: high on 2080 Ti,\nlow "
          "migrated to the CPU", ("switchflow", "gtx1080ti"): "SwitchFlow: high on 2080 Ti,\nlow "
          "migrated to the 1080 Ti"}


def plot(fig):
    solo = {}
    for _, cfg, s in fig.points(SWEEPS[2]):
        solo[(cfg["devices"][0]["profile"], s["jobs"][0]["model"])] = s["jobs"][0]["samples_per_s"]
    co = {}  # (policy, where, background, high) -> (high job row, low job row)
    for sweep in SWEEPS[:2]:
        for _, cfg, s in fig.points(sweep):
            profiles = [d["profile"] for d in cfg["devices"]]
            p = cfg["policy"]["name"]
            where = ("gtx1080ti" if "gtx1080ti" in profiles else "cpu") if p == "switchflow" \
                else profiles[0]
            hi, lo = figlib.job(s, "high"), figlib.job(s, "low")
            co[(p, where, lo["model"], hi["model"])] = (hi, lo)
    rows = []
    for (p, where, bg, m), (hi, lo) in sorted(co.items()):
        hi_dev = "rtx2080ti" if p == "switchflow" else where
        rows.append([p, where, bg, m, hi["samples_per_s"], hi["status"],
                     solo.get((hi_dev, m), ""), lo["samples_per_s"], lo["status"],
                     solo.get((where, bg), "")])
    fig.write_csv(["policy", "shared_gpu_or_low_job_target", "background_low_model", "high_model",
                   "high_img_per_s", "high_status", "high_solo_img_per_s", "low_img_per_s",
                   "low_status", "low_solo_img_per_s"], rows)

    bgs = sorted({k[2] for k in co}, key=lambda m: MODELS.index(m) if m in MODELS else 99)
    f, axes = plt.subplots(len(bgs), len(PANELS), figsize=(4.2 * len(PANELS), 3.6 * len(bgs)),
                           squeeze=False, sharey="row")
    colors = {"high": "#d62728", "low": "#1f77b4"}
    for r, bg in enumerate(bgs):
        for c, (p, where) in enumerate(PANELS):
            ax = axes[r][c]
            val = lambda m, k: co[(p, where, bg, m)][0 if k == "high" else 1]["samples_per_s"] \
                if (p, where, bg, m) in co else None
            labels = {"high": "high-priority job", "low": f"background {figlib.model_name(bg)}"}
            figlib.bars(ax, MODELS, ["high", "low"], val, colors, labels)
            hi_dev = "rtx2080ti" if p == "switchflow" else where
            for i, m in enumerate(MODELS):
                for k, x, dev, model in (("high", i - 0.2, hi_dev, m), ("low", i + 0.2, where, bg)):
                    if (dev, model) in solo:
                        ax.plot([x - 0.18, x + 0.18], [solo[(dev, model)]] * 2, color="black",
                                linewidth=1.5, label="solo" if (i, k) == (0, "high") else None)
                    if (p, where, bg, m) in co and co[(p, where, bg, m)][k == "low"]["status"] \
                            .startswith("rejected"):  # "rejected: <reason>"
                        ax.annotate("OOM", (x, 0), ha="center", va="bottom", fontsize=7)
            ax.set_xticklabels([figlib.model_name(m) for m in MODELS], rotation=35, ha="right",
                               fontsize=8)
            ax.set_title(f"{TITLES[(p, where)]} (bg {figlib.model_name(bg)})", fontsize=8)
            ax.grid(True, axis="y", alpha=0.3)
            if c == 0:
                ax.set_ylabel("training throughput (images/s)")
        axes[r][0].legend(fontsize=7)
    f.suptitle("SwitchFlow Fig. 7: two batch-32 training jobs; co-run vs solo "
               f"({fig.platform_word(SWEEPS[0])}; "
               "server A: rtx2080ti, gtx1080ti, xeon-2x18)", fontsize=10)
    fig.save(f)
