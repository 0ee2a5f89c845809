// What the engine keeps for serving dynamic models (D38), beside the job states: the online
// execution-time windows policies query (per service and batch size, and per request), and
// the sequence-length variants of the models that input-length requests run.
//
// Internal to gpumux_engine. Units: ns. Thread rules: runtime thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "gpumux/api/exec_time_window.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

/// Samples each execution-time window keeps. Assumption: the Orloj paper (arXiv 2209.00159)
/// keeps per-application distributions but gives no window; 1000 is our choice. Clockwork's
/// own estimate reads only the last 10 of them (ExecTimeWindow::percentile's `last`).
inline constexpr std::size_t kExecTimeWindow = 1000;

class ServingState {
 public:
  /// Windows keep the last `window` samples each.
  ServingState(std::size_t jobs, std::size_t window) : per_job_(jobs), window_(window) {}

  /// The window of the job's batches of `requests` requests (an empty one if none ran).
  [[nodiscard]] const ExecTimeWindow& batch_times(std::size_t job, std::uint32_t requests) const {
    const auto& m = per_job_[job].batches;
    const auto it = m.find(requests);
    return it == m.end() ? empty_ : it->second;
  }
  [[nodiscard]] const ExecTimeWindow& request_times(std::size_t job) const {
    const auto& w = per_job_[job].requests;
    return w ? *w : empty_;
  }
  void add_batch(std::size_t job, std::uint32_t requests, DurationNs ns) {
    per_job_[job].batches.try_emplace(requests, window_).first->second.add(ns);
  }
  void add_request(std::size_t job, DurationNs ns) {
    auto& w = per_job_[job].requests;
    if (!w) w = std::make_unique<ExecTimeWindow>(window_);
    w->add(ns);
  }

  /// `base` run at `tokens` tokens (at_sequence_length), built once; the reference stays valid
  /// for the engine's life (node-based map), as the cost memos key on its address.
  [[nodiscard]] const Model& at_length(const Model& base, std::uint32_t tokens) {
    if (tokens == base.sequence_length()) return base;
    const auto key = std::make_pair(&base, tokens);
    auto it = variants_.find(key);
    if (it == variants_.end()) it = variants_.emplace(key, at_sequence_length(base, tokens)).first;
    return it->second;
  }

 private:
  struct PerJob {
    std::map<std::uint32_t, ExecTimeWindow> batches;
    std::unique_ptr<ExecTimeWindow> requests;
  };
  std::vector<PerJob> per_job_;
  std::size_t window_;
  ExecTimeWindow empty_{1};
  std::map<std::pair<const Model*, std::uint32_t>, Model> variants_;
};

}  // namespace gpumux
