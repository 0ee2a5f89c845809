"""Olympian (Middleware'18) heterogeneous mix with policies (the authors' client in
USC-NSL/TF-Serving-Downloads; docs/figures.md): the authors' 7 models (Inception-v3, GoogLeNet,
ResNet-50/101/152, AlexNet, VGG-16 at batches 150/200/144/128/100/256/120) x 2 clients x 5 requests,
all sent at t = 10 s, GTX 1080 Ti profile. (a) each model's GPU share while all 14 clients compete
(t = 10 s to the first client's end, from events.jsonl; equal = 1/7) under stock TF-Serving and
Olympian fair sharing (quantum 1 ms, the code's 51.2 ms threshold, and 1 ms with overshoot repaid);
(b) weighted fair sharing (client c0 weight 10, c1 weight 1): each model's c0:c1 GPU-share ratio;
(c) priority (c0 priority 5): each client's finish time, against fair sharing."""
import figlib
from figlib import plt

FIGURE = "olympian_mix_policies"
SWEEPS = ["experiments/sweeps/olympian_mix.json"]
EVENTS = SWEEPS  # the GPU shares come from the op events
SENT_S = 10.0
MODELS = ["inception_v3", "googlenet", "resnet50", "resnet101", "resnet152", "alexnet", "vgg16"]
FAIR = ["tf_serving", "fair_q1000", "fair_q51200", "fair_q1000_repay"]
WEIGHTED = ["weighted_q1000", "weighted_q1000_repay"]
LABELS = {"tf_serving": "TF-Serving (1 stream)", "fair_q1000": "Olympian fair, q 1 ms",
          "fair_q51200": "Olympian fair, q 51.2 ms", "fair_q1000_repay": "fair, q 1 ms, repay",
          "weighted_q1000": "weighted fair 10:1, q 1 ms",
          "weighted_q1000_repay": "weighted 10:1, q 1 ms, repay"}


def ends(summary):
    return {j["name"]: j["end_s"] for j in summary["jobs"] if not j["name"].startswith("warmup")}


def shares(fig, label, summary):
    """Each client's share of the GPU time spent from SENT_S to the first client's end."""
    names = [j["name"] for j in summary["jobs"]]
    e = ends(summary)
    t0, t1 = SENT_S * 1e9, min(e.values()) * 1e9
    busy = dict.fromkeys(e, 0.0)
    for ev in fig.events(SWEEPS[0], label):
        if ev["ev"] == "op_end" and ev.get("kind") == "compute" and ev.get("status") == "ok":
            n = names[ev["job"]]
            a, b = max(ev["start"], t0), min(ev["t"], t1)
            if n in busy and b > a:
                busy[n] += b - a
    total = sum(busy.values()) or 1.0
    return {n: v / total for n, v in busy.items()}


def plot(fig):
    res = fig.results(SWEEPS[0])
    sh = {r: shares(fig, r, res[r]) for r in FAIR + WEIGHTED if r in res}
    fin = {r: ends(res[r]) for r in res}
    rows = []
    for r in sorted(res):
        for m in MODELS:
            for c in ("c0", "c1"):
                n = f"{m}-{c}"
                rows.append([r, m, c, sh[r][n] if r in sh else "", fin[r][n] - SENT_S])
    fig.write_csv(["run", "model", "client", "gpu_share_while_all_compete", "finish_s_after_send"],
                  rows)

    f, (a1, a2, a3) = plt.subplots(3, 1, figsize=(9, 10.5))
    fair = [r for r in FAIR if r in sh]
    figlib.bars(a1, MODELS, fair, lambda m, r: sh[r][m + "-c0"] + sh[r][m + "-c1"], labels=LABELS)
    a1.axhline(1 / len(MODELS), color="black", linestyle="--", linewidth=0.8, label="equal (1/7)")
    a1.set_ylabel("model's GPU share")
    a1.set_title("(a) GPU share while all 14 clients compete", fontsize=9)

    wt = [r for r in WEIGHTED if r in sh]
    figlib.bars(a2, MODELS, wt, lambda m, r: sh[r][m + "-c0"] / max(sh[r][m + "-c1"], 1e-12),
                labels=LABELS, width=0.5)
    a2.axhline(10, color="black", linestyle="--", linewidth=0.8, label="target 10:1")
    a2.set_ylabel("c0 : c1 GPU-share ratio")
    a2.set_title("(b) weighted fair sharing, weights 10 (c0) : 1 (c1)", fontsize=9)

    series = [("priority_q1000", "c0", "priority: c0 (high)"), ("priority_q1000", "c1",
              "priority: c1 (low)"), ("fair_q1000", "c0", "fair: c0"), ("fair_q1000", "c1",
              "fair: c1")]
    series = [s for s in series if s[0] in fin]
    colors = dict(zip([s[2] for s in series], ["#d62728", "#1f77b4", "#ff9896", "#aec7e8"]))
    figlib.bars(a3, MODELS, [s[2] for s in series],
                lambda m, k: next(fin[r][f"{m}-{c}"] - SENT_S for r, c, lab in series if lab == k),
                colors)
    a3.set_ylabel("client finish time after send (s)")
    a3.set_title("(c) priority (c0 priority 5, c1 priority 0) vs fair sharing, quantum 1 ms",
                 fontsize=9)
    for a in (a1, a2, a3):
        a.set_xticklabels([figlib.model_name(m) for m in MODELS], fontsize=8)
        a.grid(True, axis="y", alpha=0.3)
        a.legend(fontsize=7, ncol=3)
    a1.set_ylim(0, a1.get_ylim()[1] * 1.25)
    a2.set_ylim(0, a2.get_ylim()[1] * 1.25)
    a3.set_ylim(0, a3.get_ylim()[1] * 1.25)
    f.suptitle("Olympian: 7-model mix x 2 clients under fair, weighted-fair and priority "
               f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])})", fontsize=10)
    fig.save(f)
