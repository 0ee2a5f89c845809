"""PipeSwitch (OSDI'20) Fig. 6: inference throughput and latency vs the scheduling cycle.
ResNet-152 on the V100 profile: a client alternates a training phase and an inference phase,
each one cycle long (1, 2, 5, 10, 30 s); in inference phases it sends batch-8 requests back to
back. Throughput is counted as the artifact's client counts it (netx-repo/PipeSwitch
client/throughput.py: a reply that comes after the phase's time ran out is not counted):
requests that ended inside the inference phase they were sent in / (inference phases x cycle),
from summary.json's jobs[].phases (the ready model is the upper bound). The client also averages
only its last 10 of 20 phases; gpumux runs 10 inference phases and counts them all. Latency =
mean with min-max bars over every served request, including those that ended after their phase;
a point with no request served has no latency and is left out (its CSV cells are empty)."""
import figlib
from figlib import plt

FIGURE = "pipeswitch_fig6_cycle"
SWEEPS = ["experiments/sweeps/pipeswitch_fig6.json"]
SYSTEMS = ["ready_model", "pipeswitch", "mps", "stop_and_start"]
LABELS = {"ready_model": "ready model (upper bound)", "pipeswitch": "PipeSwitch", "mps": "MPS",
          "stop_and_start": "stop-and-start"}
COLORS = {"ready_model": "#999999", "pipeswitch": "#d62728", "mps": "#1f77b4",
          "stop_and_start": "#8c564b"}


def plot(fig):
    rows = []
    for _, cfg, s in fig.points(SWEEPS[0]):
        arr = figlib.get(cfg, "workload.services.0.arrivals")
        cycle = arr["on_s"]
        inf = next(j for j in s["jobs"] if j["kind"] == "inference")
        lat = inf["latency"]
        ph = inf["phases"]
        phases = ph["count"]  # inference phases begun before the run ended
        rows.append([cfg["policy"]["name"], cycle, phases, inf["requests"],
                     ph["requests_in_phase"], ph["requests_in_phase"] / (phases * cycle),
                     lat["mean_ms"], lat["min_ms"], lat["max_ms"],
                     s["training"]["samples_per_s_present_sum"]])
    rows.sort(key=lambda r: (SYSTEMS.index(r[0]) if r[0] in SYSTEMS else 99, r[1]))
    fig.write_csv(["system", "cycle_s", "inference_phases", "requests_served",
                   "requests_in_phase", "batches_per_s", "mean_ms", "min_ms", "max_ms",
                   "training_samples_per_s"], rows)

    f, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for p in SYSTEMS:
        r = [x for x in rows if x[0] == p]
        if not r:
            continue
        cyc = [x[1] for x in r]
        style = dict(marker="o", color=COLORS[p], label=LABELS[p])
        if p == "ready_model":
            style.update(linestyle="--", marker=None)
        a1.plot(cyc, [x[5] for x in r], **style)
        served = [x for x in r if x[3]]  # no request served: no latency, no point
        a2.errorbar([x[1] for x in served], [x[6] for x in served], capsize=3, **style,
                    yerr=[[max(0, x[6] - x[7]) for x in served],
                          [max(0, x[8] - x[6]) for x in served]])
        for x in r:
            if not x[3]:
                a2.annotate(f"{LABELS[p]}: no request served", (x[1], 0.03), fontsize=7,
                            xycoords=("data", "axes fraction"), color=COLORS[p])
    for a in (a1, a2):
        a.set_xscale("log")
        a.set_xlabel("scheduling cycle (s, log)")
        cycles = sorted({x[1] for x in rows})
        a.set_xticks(cycles)
        a.set_xticklabels([f"{c:g}" for c in cycles])
        a.grid(True, which="both", alpha=0.3)
    a1.set_ylabel("inference throughput (batches/s)")
    a2.set_ylabel("inference latency (ms, log; bars: min-max)")
    a2.set_yscale("log")
    a1.legend(fontsize=8)
    f.suptitle(f"PipeSwitch Fig. 6: ResNet-152 batch 8, training/inference phases alternate "
               f"({fig.platform_word(SWEEPS[0])}, {fig.device_label(SWEEPS[0])})", fontsize=10)
    fig.save(f)
