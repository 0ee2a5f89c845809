"""Olympian (Middleware'18) overhead vs quantum (docs/figures.md): the 10 Inception-v3
clients of the fairness experiment (GTX 1080 Ti profile) under Olympian fair sharing for quanta
0.25-16 ms at depth 1 and 2 (nodes the token holder keeps in flight). Left: makespan overhead
relative to stock TF-Serving (paper's abstract: < 2 % at 1-2 ms); right: the interleaving interval
(mean time a client holds the token, policy metric olympian.token_hold_us)."""
import figlib
from figlib import plt

FIGURE = "olympian_overhead_vs_quantum"
SWEEPS = ["experiments/sweeps/olympian_overhead.json"]
SENT_S = 1.0


def span(summary):
    return max(j["end_s"] for j in summary["jobs"] if not j["name"].startswith("warmup")) - SENT_S


def plot(fig):
    pts = fig.points(SWEEPS[0])
    ref = next(span(s) for _, c, s in pts if c["policy"]["name"] == "tf_serving")
    rows = []
    for label, cfg, s in pts:
        p = cfg["policy"]
        hold = s["policy_metrics"].get("olympian.token_hold_us", {})
        rows.append([label, p["name"], figlib.get(p, "params.quantum_us", ""),
                     figlib.get(p, "params.depth", ""), span(s), 100 * (span(s) / ref - 1),
                     hold.get("mean", ""), hold.get("p50", ""), hold.get("p99", "")])
    rows.sort(key=lambda r: (r[1] != "olympian", r[3] or 0, r[2] or 0))
    fig.write_csv(["run", "policy", "quantum_us", "depth", "span_s", "overhead_pct_vs_tf_serving",
                   "token_hold_mean_us", "token_hold_p50_us", "token_hold_p99_us"], rows)

    f, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for depth, color in ((1, "#1f77b4"), (2, "#d62728")):
        r = [x for x in rows if x[1] == "olympian" and x[3] == depth]
        q = [x[2] / 1000 for x in r]
        a1.plot(q, [x[5] for x in r], marker="o", color=color, label=f"Olympian fair, depth {depth}")
        a2.plot(q, [x[6] / 1000 for x in r], marker="o", color=color, label=f"mean, depth {depth}")
        a2.fill_between(q, [x[7] / 1000 for x in r], [x[8] / 1000 for x in r], color=color,
                        alpha=0.12, label=f"p50-p99, depth {depth}")
    for x in rows:
        if x[1] == "exclusive":
            a1.axhline(x[5], color="gray", linestyle=":", label="exclusive (back to back)")
    a1.axhline(2, color="black", linestyle="--", linewidth=0.8, label="paper: < 2 %")
    q = sorted({x[2] / 1000 for x in rows if x[1] == "olympian"})
    a2.plot(q, q, color="black", linestyle="--", linewidth=0.8, label="hold = quantum")
    a1.set_ylabel("makespan overhead vs TF-Serving (%)")
    a2.set_ylabel("token hold time (ms, log)")
    a2.set_yscale("log")
    for a in (a1, a2):
        a.set_xscale("log")
        a.set_xlabel("quantum (ms of GPU time, log)")
        a.set_xticks(q)
        a.set_xticklabels([f"{x:g}" for x in q])
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    a1.set_ylim(bottom=0)
    f.suptitle("Olympian: overhead and interleaving interval vs quantum, 10 Inception-v3 clients "
               f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])})", fontsize=10)
    fig.save(f)
