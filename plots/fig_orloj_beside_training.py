"""Orloj beside training (no paper figure): one trace, a static BERT-base
service (Azure LLM 2023 conv arrivals, 18.9 requests/s, SLO 30.6 ms = 5 x its solo time)
beside ResNet-50 training on a V100, under the four serving policies (orloj, clockwork,
clipper, nexus) and the GPU-sharing systems (SwitchFlow, PipeSwitch, Salus, Olympian, time
slicing, MPS; ready model = the service alone). Left: the service's finish rate (on time /
arrived); right: the training job's samples/s. The serving policies run a whole training pass
whenever no batch is chosen and never preempt it."""
import figlib
from figlib import plt

FIGURE = "orloj_beside_training"
SWEEPS = ["experiments/sweeps/orloj_beside_training.json"]
SERVING = ["orloj", "clockwork", "clipper", "nexus"]
COLORS = {"orloj": "#d62728", "clockwork": "#1f77b4", "clipper": "#2ca02c", "nexus": "#9467bd"}


def plot(fig):
    rows = []
    for label, cfg, s in fig.points(SWEEPS[0]):
        serve, train = figlib.job(s, "serve"), figlib.job(s, "train-resnet50")
        rejected = train["status"].startswith("rejected")
        rows.append([cfg["policy"]["name"], serve["finish_rate"], serve["late_rate"],
                     serve["drop_rate"], serve["latency"]["p50_ms"], serve["latency"]["p99_ms"],
                     "" if rejected else train["samples_per_s"], train["status"]])
    order = {p: i for i, p in enumerate(SERVING)}
    rows.sort(key=lambda r: (order.get(r[0], len(SERVING)), -(r[1] or 0)))
    fig.write_csv(["policy", "finish_rate", "late_rate", "drop_rate", "p50_ms", "p99_ms",
                   "training_samples_per_s", "training_status"], rows)

    f, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    names = [r[0] for r in rows]
    colors = [COLORS.get(n, "#999999") for n in names]
    axes[0].bar(range(len(rows)), [100 * (r[1] or 0) for r in rows], color=colors)
    axes[0].set_ylabel("service finish rate (%)")
    axes[0].set_ylim(0, 105)
    axes[1].bar(range(len(rows)), [r[6] or 0 for r in rows], color=colors)
    axes[1].set_ylabel("ResNet-50 training (samples/s)")
    for ax in axes:
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    f.suptitle("BERT-base service (Azure conv trace, SLO 30.6 ms) beside ResNet-50 training "
               f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])}; red/blue/green/"
               "purple: serving policies)", fontsize=9)
    fig.save(f)
