"""SwitchFlow (Middleware'21) Fig. 6: p95 latency of batch-1 high-priority inference (Poisson
20 req/s for 10 s) co-running with a batch-32 background training job (MobileNetV2, ResNet-50 or
VGG-16), per inference model. SwitchFlow on server B (V100 + dual Xeons: the training job
migrates to the CPU), SwitchFlow on the V100 alone (no migration target), and free sharing (MPS,
time slicing) on the V100. The paper's baseline is multi-threaded TF, which gpumux does not
have; "xN" = time slicing / SwitchFlow, "paper xN" = TF / SwitchFlow from the paper's bar labels
(Fig. 6). InceptionResNetV2 and NMT (panel d) are not in the model zoo."""
import figlib
from figlib import plt

FIGURE = "switchflow_fig6_p95_latency"
SWEEPS = ["experiments/sweeps/switchflow_fig6.json", "experiments/sweeps/switchflow_fig6_one_gpu.json"]
BACKGROUND = ["mobilenet_v2", "resnet50", "vgg16"]
MODELS = ["resnet50", "vgg16", "vgg19", "densenet121", "densenet169", "inception_v3", "mobilenet_v2"]
SYSTEMS = ["switchflow", "switchflow_one_gpu", "mps", "time_slicing"]
LABELS = {"switchflow": "SwitchFlow (V100 + CPU)", "switchflow_one_gpu": "SwitchFlow (V100 only)",
          "mps": "MPS", "time_slicing": "time slicing"}
COLORS = {"switchflow": "#d62728", "switchflow_one_gpu": "#ff9896", "mps": "#1f77b4",
          "time_slicing": "#7f7f7f"}
PAPER = {  # TF / SwitchFlow p95 ratios printed on the paper's bars (SwitchFlow Fig. 6)
    "mobilenet_v2": {"resnet50": 1.70, "vgg16": 1.16, "vgg19": 1.12, "densenet121": 2.10,
                     "densenet169": 1.97, "inception_v3": 1.82},
    "resnet50": {"vgg16": 6.20, "vgg19": 6.84, "densenet121": 5.66, "densenet169": 4.20,
                 "inception_v3": 5.82, "mobilenet_v2": 6.62},
    "vgg16": {"resnet50": 11.08, "vgg19": 13.48, "densenet121": 11.65, "densenet169": 11.05,
              "inception_v3": 15.08, "mobilenet_v2": 14.33},
}


def plot(fig):
    p95 = {}
    for sweep in SWEEPS:
        for _, cfg, s in fig.points(sweep):
            system = cfg["policy"]["name"] + ("_one_gpu" if len(cfg["devices"]) == 1 and
                                              cfg["policy"]["name"] == "switchflow" else "")
            inf = figlib.job(s, "infer")
            key = (figlib.get(cfg, "workload.jobs.0.model"), inf["model"], system)
            p95[key] = (inf["latency"]["p95_ms"], inf["requests"])
    rows = []
    for bg in BACKGROUND:
        for m in MODELS:
            sf = p95.get((bg, m, "switchflow"))
            for sy in SYSTEMS:
                if (bg, m, sy) in p95:
                    v, n = p95[(bg, m, sy)]
                    # No request served: no p95 (an empty cell, no bar), never 0 ms.
                    rows.append([bg, m, sy, n, v, v / sf[0] if v and sf and sf[0] else "",
                                 PAPER.get(bg, {}).get(m, "")])
    fig.write_csv(["background_training", "inference_model", "system", "requests", "p95_ms",
                   "over_switchflow", "paper_tf_over_switchflow"], rows)

    bgs = [b for b in BACKGROUND if any(k[0] == b for k in p95)]
    f, axes = plt.subplots(len(bgs), 1, figsize=(10, 3.4 * len(bgs)), squeeze=False)
    for ax, bg in zip(axes[:, 0], bgs):
        systems = [s for s in SYSTEMS if any(k[0] == bg and k[2] == s for k in p95)]
        val = lambda m, s: p95[(bg, m, s)][0] if (bg, m, s) in p95 else None
        figlib.bars(ax, MODELS, systems, val, COLORS, LABELS)
        top = max((v[0] for k, v in p95.items() if k[0] == bg and v[0] is not None), default=1)
        for i, m in enumerate(MODELS):
            sf, ts = val(m, "switchflow"), val(m, "time_slicing")
            text = f"x{ts / sf:.2f}" if sf and ts else ""
            if m in PAPER.get(bg, {}):
                text += f"\npaper x{PAPER[bg][m]:.2f}"
            ax.annotate(text, (i, top * 1.02), ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, top * 1.7)
        ax.set_xticklabels([figlib.model_name(m) for m in MODELS], fontsize=8)
        ax.set_ylabel("p95 latency (ms)")
        ax.set_title(f"background training: {figlib.model_name(bg)} (batch 32); batch-1 inference",
                     fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", ncol=4)
    f.suptitle("SwitchFlow Fig. 6: p95 latency of high-priority inference under background "
               f"training\n({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])}; xN = time slicing / "
               "SwitchFlow)", fontsize=10)
    fig.save(f)
