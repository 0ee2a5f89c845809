// PipeSwitch's parameters: the grouping, memory, host-memory, switching and group-transfer
// modes and the host costs, their declarations and reading, and the per-group costs they imply.
#pragma once

#include <cstdint>

#include "common/job_runner.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux::policies::pipeswitch {

enum class GroupingMode : std::uint8_t { Optimal, PerLayer, Whole, NoPipeline, Artifact };
enum class Switching : std::uint8_t { ActiveStandby, OneContext, KillRestart };
enum class GroupTransfer : std::uint8_t { Artifact, EventWait };

struct Params {
  GroupingMode grouping = GroupingMode::Optimal;
  bool per_allocation = false;
  bool pageable = false;
  Switching switching = Switching::ActiveStandby;
  GroupTransfer group_transfer = GroupTransfer::Artifact;
  DurationNs ipc_message_ns = 0, group_sync_ns = -1, train_sync_ns = 0;  // group_sync -1: event_ns
  DurationNs event_sync_ns = 0, python_copy_ns = 0, pipe_message_ns = 0, pipe_recv_ns = 0;
  std::uint32_t train_layers_per_op = 1;

  /// The declarations PipeSwitch registers.
  static const ParamSpecs& specs();
  /// Reads args.params through specs(); ConfigError for a bad or unknown key.
  static Params read(const PolicyArgs& args);

  /// Whether inference models travel group by group with the artifact's per-group messages.
  [[nodiscard]] bool artifact_groups() const {
    return group_transfer == GroupTransfer::Artifact && switching == Switching::ActiveStandby;
  }
  /// The controller's Python work before the first group's copy (inside the switch's gate).
  [[nodiscard]] DurationNs first_issue_ns() const { return artifact_groups() ? python_copy_ns : 0; }
  /// kill_restart's process moves a freshly built (unpinned) model: `model.to('cuda')`.
  [[nodiscard]] bool load_pageable() const {
    return pageable || switching == Switching::KillRestart;
  }
  /// o_s: what a group pays before it computes once it may (see grouping.hpp): the worker's
  /// recv of the queued message, an event wait in the CUDA-backend form, nothing in one process
  /// (one_context, kill_restart: the compute follows the blocking copy in the same thread).
  [[nodiscard]] DurationNs group_setup_ns() const {
    if (switching != Switching::ActiveStandby) return 0;
    return artifact_groups() ? pipe_recv_ns : group_sync_ns;
  }
  /// o_h: the controller's host time per group that keeps the copy engine idle.
  [[nodiscard]] DurationNs group_gap_ns() const {
    return artifact_groups() ? python_copy_ns + event_sync_ns + pipe_message_ns : 0;
  }
};

}  // namespace gpumux::policies::pipeswitch
