// PipeSwitch's parameters (params.hpp).
#include "pipeswitch/params.hpp"

#include <optional>

namespace gpumux::policies::pipeswitch {
namespace {

inline constexpr EnumNames<GroupingMode, 5> kGroupingNames{
    {{GroupingMode::Optimal, "optimal"},
     {GroupingMode::PerLayer, "per_layer"},
     {GroupingMode::Whole, "whole"},
     {GroupingMode::NoPipeline, "no_pipeline"},
     {GroupingMode::Artifact, "artifact"}}};
enum class MemoryMode : std::uint8_t { Unified, PerAllocation };
inline constexpr EnumNames<MemoryMode, 2> kMemoryNames{
    {{MemoryMode::Unified, "unified"}, {MemoryMode::PerAllocation, "per_allocation"}}};
enum class HostMemory : std::uint8_t { Pinned, Pageable };
inline constexpr EnumNames<HostMemory, 2> kHostMemoryNames{
    {{HostMemory::Pinned, "pinned"}, {HostMemory::Pageable, "pageable"}}};
inline constexpr EnumNames<Switching, 3> kSwitchingNames{
    {{Switching::ActiveStandby, "active_standby"},
     {Switching::OneContext, "one_context"},
     {Switching::KillRestart, "kill_restart"}}};
inline constexpr EnumNames<GroupTransfer, 2> kGroupTransferNames{
    {{GroupTransfer::Artifact, "artifact"}, {GroupTransfer::EventWait, "event_wait"}}};

}  // namespace

// Defaults of the artifact's host costs, sources in docs/policies/pipeswitch.md: event_sync
// 7 us (CUDA.jl PR 896), python_copy 13.5 us (2 eager torch calls), pipe_message 15 us
// (multiprocessing.Pipe one way), pipe_recv 3 us.
const ParamSpecs& Params::specs() {
  using param::duration;
  constexpr auto us = TimeUnit::Microseconds;
  static const ParamSpecs specs{
      param::choice("grouping", kGroupingNames, GroupingMode::Optimal,
                    "how layers are grouped for pipelined transmission"),
      param::choice("memory", kMemoryNames, MemoryMode::Unified,
                    "one unified block, or one allocation per tensor"),
      param::choice("host_memory", kHostMemoryNames, HostMemory::Pinned,
                    "host memory the weights are copied from"),
      param::choice("switching", kSwitchingNames, Switching::ActiveStandby,
                    "how the GPU changes task"),
      param::choice("group_transfer", kGroupTransferNames, GroupTransfer::Artifact,
                    "how a group's compute waits for its copy"),
      duration("ipc_message_us", us, 100.0, "switch request message (old task to stop)"),
      duration("group_sync_us", us, std::nullopt,
               "event wait per group with event_wait (default: the profile's event_ns)"),
      duration("event_sync_us", us, 7.0, "event/device synchronize round trip"),
      duration("python_copy_us", us, 13.5, "host cost before each later copy"),
      duration("pipe_message_us", us, 15.0, "group-ready message, one way"),
      duration("pipe_recv_us", us, 3.0, "recv of a queued message before a group computes"),
      duration("train_sync_us", us, std::nullopt,
               "synchronisation before each training op (default: event_sync_us)"),
      param::integer("train_layers_per_op", 1, "zoo layers per training op, in [1, 1e6]")};
  return specs;
}

Params Params::read(const PolicyArgs& args) {
  Params out;
  auto p = policy_params(args, specs());
  out.grouping = p.choice("grouping", kGroupingNames);
  out.per_allocation = p.choice("memory", kMemoryNames) == MemoryMode::PerAllocation;
  out.pageable = p.choice("host_memory", kHostMemoryNames) == HostMemory::Pageable;
  out.switching = p.choice("switching", kSwitchingNames);
  out.group_transfer = p.choice("group_transfer", kGroupTransferNames);
  out.ipc_message_ns = p.duration("ipc_message_us");
  out.group_sync_ns = p.optional_duration("group_sync_us").value_or(-1);  // -1: event_ns
  out.event_sync_ns = p.duration("event_sync_us");
  out.python_copy_ns = p.duration("python_copy_us");
  out.pipe_message_ns = p.duration("pipe_message_us");
  out.pipe_recv_ns = p.duration("pipe_recv_us");
  out.train_sync_ns = p.optional_duration("train_sync_us").value_or(out.event_sync_ns);
  out.train_layers_per_op = p.integer_in<std::uint32_t>("train_layers_per_op", 1, 1'000'000);
  p.finish();
  return out;
}

}  // namespace gpumux::policies::pipeswitch
