"""PipeSwitch (OSDI'20) Fig. 5: end-to-end latency of a batch-8 inference request that arrives
while ResNet-152 training (batch 8) runs, for ResNet-152, Inception-v3 and BERT-base, on the V100
(PCIe 3.0 x16) and T4 (PCIe 3.0 x8) profiles. Systems: ready model (lower bound), PipeSwitch,
MPS, stop-and-start. Bar = mean latency over the sweep's requests; the label on a PipeSwitch bar
is its total overhead (PipeSwitch - ready model), the paper's 5.4-34.6 ms (abstract)."""
import figlib
from figlib import plt

FIGURE = "pipeswitch_fig5_switch_latency"
SWEEPS = ["experiments/sweeps/pipeswitch_fig5.json"]
SYSTEMS = ["ready_model", "pipeswitch", "mps", "stop_and_start"]
LABELS = {"ready_model": "ready model", "pipeswitch": "PipeSwitch", "mps": "MPS",
          "stop_and_start": "stop-and-start"}
COLORS = {"ready_model": "#999999", "pipeswitch": "#d62728", "mps": "#1f77b4",
          "stop_and_start": "#8c564b"}


def plot(fig):
    lat = {}
    for _, cfg, s in fig.points(SWEEPS[0]):
        key = (figlib.get(cfg, "devices.0.profile"), figlib.get(cfg, "workload.jobs.1.model"),
               cfg["policy"]["name"])
        lat[key] = figlib.job(s, "infer")
    devices = sorted({k[0] for k in lat}, key=lambda d: not d.startswith("v100"))
    models = [m for m in ["resnet152", "inception_v3", "bert_base_seq251"]
              if any(k[1] == m for k in lat)]
    rows = []
    for d in devices:
        for m in models:
            ready = lat.get((d, m, "ready_model"))
            for p in SYSTEMS:
                j = lat.get((d, m, p))
                if j is None:
                    continue
                mean, ready_mean = j["latency"]["mean_ms"], ready and ready["latency"]["mean_ms"]
                # No request served: no latency, an empty cell (never 0 ms).
                over = mean - ready_mean if mean is not None and ready_mean is not None else ""
                rows.append([d, m, p, j["requests"], j["latency"]["mean_ms"],
                             j["latency"]["min_ms"], j["latency"]["max_ms"], over])
    fig.write_csv(["device", "model", "system", "requests", "mean_ms", "min_ms", "max_ms",
                   "minus_ready_model_ms"], rows)

    f, axes = plt.subplots(1, len(devices), figsize=(5.5 * len(devices), 4.2), squeeze=False)
    for ax, d in zip(axes[0], devices):
        mean = lambda m, p: lat[(d, m, p)]["latency"]["mean_ms"] if (d, m, p) in lat else None
        figlib.bars(ax, models, SYSTEMS, mean, COLORS, LABELS)
        for m_i, m in enumerate(models):
            ps, ready = mean(m, "pipeswitch"), mean(m, "ready_model")
            if ps is not None and ready is not None:
                x = m_i - 0.4 + (SYSTEMS.index("pipeswitch") + 0.5) * 0.8 / len(SYSTEMS)
                ax.annotate(f"+{ps - ready:.1f}", (x, ps), ha="center", va="bottom", fontsize=7,
                            color=COLORS["pipeswitch"])
        ax.set_xticklabels([figlib.model_name(m) for m in models])
        ax.set_yscale("log")
        ax.set_ylabel("inference latency (ms, log)")
        ax.set_title(f"{d}", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="upper left")
    f.suptitle("PipeSwitch Fig. 5: latency of a request arriving during ResNet-152 training "
               f"({fig.platform_word(SWEEPS[0])}; +N = PipeSwitch - ready model, ms)", fontsize=10)
    fig.save(f)
