// What the engine remembers of each op it submitted (compact; devices hold the full spec),
// indexed by op id in an OpTable (op_table.hpp).
//
// Internal to gpumux_engine. Thread rules: runtime thread only.
#pragma once

#include "gpumux/api/ids.hpp"
#include "gpumux/api/job_state.hpp"
#include "gpumux/api/op.hpp"

namespace gpumux {

/// The job id of ops that belong to no job (context start-up).
inline constexpr JobId kSystemJob{0xffffffffu};

struct OpInfo {
  JobId job{};
  DeviceId device{};
  StreamId stream{};
  OpKind kind = OpKind::Compute;
  OpPurpose purpose = OpPurpose::Other;
  LayerRange layers{};
  Cursor before{};  ///< the job's dispatch cursor before this op (compute)
  Cursor after{};   ///< ... and after it
  bool ends_unit = false;
  std::uint32_t batch_requests = 1;  ///< requests the op's unit serves (dynamic batching)
  bool complete = false;
  bool finished = false;  ///< complete, dropped or aborted
  bool counts_in_flight = false;
  /// A data-parallel job's op that does not move its cursor (replica ops, the all-reduce);
  /// the unit's last op (its barrier) does.
  bool replica = false;
  DeviceId migrate_from{};
  DeviceId migrate_to{};            ///< destination of a migration (the job may move on meanwhile)
  std::size_t load_allocation = 0;  ///< index into residency allocations (loads)
  TimeNs submitted_ns = 0;

  /// The bookkeeping of an op, started from what its spec already says.
  static OpInfo of(const OpSpec& spec) noexcept {
    OpInfo info;
    copy_op_identity(spec, info);
    return info;
  }
};

}  // namespace gpumux
