"""PipeSwitch (OSDI'20) Fig. 7: effectiveness of pipelined model transmission. The Fig. 5
scenario (a batch-8 request arriving during ResNet-152 training) under PipeSwitch with the
model sent whole then computed, per-layer copies without overlap, the per-layer pipeline, the
artifact's hand-made groups and the optimal (model-aware) grouping; V100 and T4 profiles.
Bar = mean end-to-end latency."""
import figlib

FIGURE = "pipeswitch_fig7_grouping"
SWEEPS = ["experiments/sweeps/pipeswitch_fig7.json"]
VARIANTS = ["whole", "no_pipeline", "per_layer", "artifact", "optimal"]
LABELS = {"whole": "whole model, then compute", "no_pipeline": "per layer, no pipeline",
          "per_layer": "per-layer pipeline", "artifact": "artifact's groups",
          "optimal": "optimal grouping (PipeSwitch)"}


def plot(fig):
    figlib.pipeswitch_ablation(
        fig, SWEEPS[0], lambda c: figlib.get(c, "policy.params.grouping", "optimal"), VARIANTS,
        LABELS, "PipeSwitch Fig. 7: pipelining and grouping ablation, request during training")
