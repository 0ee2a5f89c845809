"""Olympian (Middleware'18) fairness among homogeneous clients (the paper's setup as we recall it,
not verified; docs/figures.md): 10 identical Inception-v3 clients (batch 100, 5 requests each, all
sent at t = 1 s after a warm-up that builds the profile) on the GTX 1080 Ti profile, under Olympian
fair sharing (quantum 1 ms, depth 2), stock TF-Serving (one compute stream; and per-client streams),
time slicing, MPS and exclusive (back to back). Bar = each client's finish time after the requests
were sent; the label is the spread (last - first) / last."""
import figlib
from figlib import plt

FIGURE = "olympian_fairness_finish_times"
SWEEPS = ["experiments/sweeps/olympian_fairness.json"]
SENT_S = 1.0
ORDER = ["olympian_fair", "tf_serving", "tf_serving_per_client", "time_slicing", "mps",
         "exclusive"]
LABELS = {"olympian_fair": "Olympian fair\n(q 1 ms)", "tf_serving": "TF-Serving\n(1 stream)",
          "tf_serving_per_client": "TF-Serving\n(stream/client)", "time_slicing": "time slicing",
          "mps": "MPS", "exclusive": "exclusive\n(back to back)"}


def plot(fig):
    res = fig.results(SWEEPS[0])
    runs = [r for r in ORDER if r in res] + sorted(set(res) - set(ORDER))
    ends = {r: {j["name"]: j["end_s"] - SENT_S for j in res[r]["jobs"]
                if not j["name"].startswith("warmup")} for r in runs}
    clients = sorted(next(iter(ends.values()))) if ends else []
    rows = [[r, c, ends[r][c]] for r in runs for c in clients]
    fig.write_csv(["policy", "client", "finish_s_after_send"], rows)

    f, ax = plt.subplots(figsize=(9, 4.2))
    cmap = plt.get_cmap("viridis")
    figlib.bars(ax, runs, clients, lambda r, c: ends[r][c],
                {c: cmap(i / max(1, len(clients) - 1)) for i, c in enumerate(clients)})
    for i, r in enumerate(runs):
        v = ends[r].values()
        ax.annotate(f"spread {100 * (max(v) - min(v)) / max(v):.2f} %", (i, max(v)),
                    ha="center", va="bottom", fontsize=7)
    ax.set_xticklabels([LABELS.get(r, r) for r in runs], fontsize=8)
    ax.set_ylabel("client finish time after send (s)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(f"Olympian: 10 identical Inception-v3 clients (batch 100, 5 requests); one bar per "
                 f"client\n({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])})", fontsize=10)
    fig.save(f)
