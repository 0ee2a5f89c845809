"""PipeSwitch (OSDI'20) Fig. 8: effectiveness of unified memory management. The Fig. 5
scenario under PipeSwitch (optimal grouping) with the pre-allocated pool ("unified") or one
cudaMalloc per tensor on the switch path, from pinned or pageable host copies; V100 and T4
profiles. Bar = mean end-to-end latency. The paper's "no IPC optimisation" and CUDA-unified-memory
variants are not modelled (policies/pipeswitch/pipeswitch.cpp, Faithfulness notes)."""
import figlib

FIGURE = "pipeswitch_fig8_memory"
SWEEPS = ["experiments/sweeps/pipeswitch_fig8.json"]
VARIANTS = ["unified/pinned", "per_allocation/pinned", "unified/pageable",
            "per_allocation/pageable"]
LABELS = {"unified/pinned": "PipeSwitch (pool, pinned)",
          "per_allocation/pinned": "cudaMalloc per tensor, pinned",
          "unified/pageable": "pool, pageable host memory",
          "per_allocation/pageable": "cudaMalloc per tensor, pageable"}


def variant(cfg):
    return (figlib.get(cfg, "policy.params.memory", "unified") + "/"
            + figlib.get(cfg, "policy.params.host_memory", "pinned"))


def plot(fig):
    figlib.pipeswitch_ablation(fig, SWEEPS[0], variant, VARIANTS, LABELS,
                               "PipeSwitch Fig. 8: memory-management ablation")
