"""PipeSwitch (OSDI'20) Fig. 9: effectiveness of active-standby worker switching. The Fig. 5
scenario under PipeSwitch (optimal grouping) with two warm workers (active-standby), one process
for every task (one context: the old task's clean-up is on the critical path), and
kill-and-restart of a process per switch; V100 and T4 profiles. Bar = mean end-to-end latency
(log scale: kill-and-restart pays a process start)."""
import figlib

FIGURE = "pipeswitch_fig9_workers"
SWEEPS = ["experiments/sweeps/pipeswitch_fig9.json"]
VARIANTS = ["active_standby", "one_context", "kill_restart"]
LABELS = {"active_standby": "active-standby (PipeSwitch)", "one_context": "one process",
          "kill_restart": "kill and restart"}


def plot(fig):
    figlib.pipeswitch_ablation(
        fig, SWEEPS[0], lambda c: figlib.get(c, "policy.params.switching", "active_standby"),
        VARIANTS, LABELS, "PipeSwitch Fig. 9: worker-switching ablation", log=True)
