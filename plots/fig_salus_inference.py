"""Salus (MLSys'20) inference consolidation (SymbioticLab/Salus card270.py): 42 inference services
(14 models x 3, batch 1, 500 open-loop requests each, exponential gaps of mean 10 s) on one P100
profile capped at 14 GiB. Left: per-model mean latency (over the 3 instances) under Salus (one lane,
FAIR), MPS and each service on a dedicated GPU (stock TF); right: GPUs needed to host the 42
services (dedicated: one each; shared: one GPU when every service finished on it) next to the
paper's plotting-script values (TF 42, MPS 6, Salus 1, hard-coded in Salus' parse_card270.py)."""
import figlib
from figlib import plt

FIGURE = "salus_inference_consolidation"
SWEEPS = ["experiments/sweeps/salus_inference.json"]
SERIES = ["dedicated_gpu", "gap10s_salus_fair_one_lane", "gap10s_mps"]
LABELS = {"dedicated_gpu": "dedicated GPU (stock TF)", "gap10s_salus_fair_one_lane": "Salus (1 lane, FAIR)",
          "gap10s_mps": "MPS (1 GPU)"}
COLORS = {"dedicated_gpu": "#7f7f7f", "gap10s_salus_fair_one_lane": "#d62728",
          "gap10s_mps": "#1f77b4"}
PAPER_GPUS = {"dedicated_gpu": 42, "gap10s_salus_fair_one_lane": 1, "gap10s_mps": 6}


def per_model(summary):
    """{model: (mean of the instances' mean latency, max p99, requests, finished instances)}"""
    out = {}
    for j in summary["jobs"]:
        if j["kind"] == "inference":
            out.setdefault(j["model"], []).append(j)
    def mean_of(vals):  # instances that served no request have no latency (None)
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    def max_of(vals):
        vals = [v for v in vals if v is not None]
        return max(vals) if vals else None
    return {m: (mean_of(j["latency"]["mean_ms"] for j in js),
                max_of(j["latency"]["p99_ms"] for j in js), sum(j["requests"] for j in js),
                sum(j["status"] == "finished" for j in js), len(js)) for m, js in out.items()}


def plot(fig):
    res = fig.results(SWEEPS[0])
    pm = {r: per_model(s) for r, s in res.items()}
    rows = [[r, m] + list(v) for r in sorted(pm) for m, v in pm[r].items()]
    fig.write_csv(["run", "model", "mean_latency_ms", "max_p99_ms", "requests",
                   "finished_services", "services"], rows)
    models = list(pm.get("dedicated_gpu", next(iter(pm.values()), {})))
    series = [s for s in SERIES if s in pm]

    f, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.3), gridspec_kw={"width_ratios": [4, 1]})
    figlib.bars(a1, models, series, lambda m, r: pm[r][m][0] if m in pm[r] else None, COLORS,
                LABELS)
    a1.set_xticklabels([figlib.model_name(m) for m in models], rotation=45, ha="right",
                       fontsize=8)
    a1.set_ylabel("mean inference latency (ms)")
    a1.grid(True, axis="y", alpha=0.3)
    a1.legend(fontsize=8)
    a1.set_title("(a) per-model latency, batch 1, mean gap 10 s", fontsize=9)

    def gpus(r):
        s = res[r]
        n = sum(j["kind"] == "inference" for j in s["jobs"])
        done = all(j["status"] == "finished" for j in s["jobs"])
        return (42 if r == "dedicated_gpu" else 1) if done or r == "dedicated_gpu" else float("nan")
    figlib.bars(a2, series, ["gpumux", "paper"],
                lambda r, k: gpus(r) if k == "gpumux" else PAPER_GPUS[r],
                {"gpumux": "#444444", "paper": "#cccccc"}, width=0.7)
    a2.set_xticklabels([LABELS[s].split(" (")[0] for s in series], rotation=30, ha="right",
                       fontsize=8)
    a2.set_ylabel("# GPUs needed for 42 services")
    a2.legend(fontsize=8)
    a2.grid(True, axis="y", alpha=0.3)
    a2.set_title("(b) GPUs needed", fontsize=9)
    f.suptitle(f"Salus: 42 inference services (14 models x 3) on one GPU "
               f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])}, 14 GiB)", fontsize=10)
    fig.save(f)
