// A memo of CostModel results per op shape, for the engine's dispatch path: op_kernels,
// op_demand and update_kernels are pure functions of (profile, options, model, range, batch,
// pass, inference / optimizer), yet an op-by-op run asks for the same few shapes millions of
// times, and each answer walks the op's layers (calibration lookups by model name, tile
// counts). The memo returns exactly what the CostModel computed the first time (values are
// stored, not re-derived), so results are byte-identical; errors are not memoised (a throwing
// call throws again).
//
// Keys hold the Model's address: the models must outlive the memo and not change (the engine's
// catalog). Memory: one entry per distinct shape asked for (bounded by layers^2 x passes per
// model, in practice layers x passes).
//
// Thread rules: not thread-safe, even for lookups (they insert); one owner thread (the engine's
// runtime thread). Units as in CostModel (ns).
#pragma once

#include <cstdint>
#include <vector>

#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

class OpCostMemo {
 public:
  /// `cost` must outlive the memo.
  explicit OpCostMemo(const CostModel& cost) : cost_(&cost) {}

  /// CostModel::op_kernels(model, range, batch, pass, inference), memoised.
  [[nodiscard]] OpKernels op_kernels(const Model& model, LayerRange range, std::uint32_t batch,
                                     Pass pass, bool inference);
  /// CostModel::op_demand(model, range, batch, pass), memoised.
  [[nodiscard]] double op_demand(const Model& model, LayerRange range, std::uint32_t batch,
                                 Pass pass);
  /// A forward or backward compute op's kernels and demand in one lookup (the dispatch path
  /// needs both): the same values op_kernels and op_demand return.
  struct Compute {
    OpKernels kernels;
    double demand = 1.0;
    /// kernels.full_residual_ns2 / solo and full_wave_residual_ns2 / solo (OpSpec's
    /// kernel_wait_ns, kernel_wait_priority_ns), solo = kernels.solo_ns(); 0 when solo is 0.
    double kernel_wait_ns = 0;
    double kernel_wait_priority_ns = 0;
  };
  [[nodiscard]] Compute op_compute(const Model& model, LayerRange range, std::uint32_t batch,
                                   Pass pass, bool inference);
  /// CostModel::update_kernels(model, optimizer), memoised.
  [[nodiscard]] OpKernels update_kernels(const Model& model, Optimizer optimizer);
  /// An optimizer step as a Compute (demand 1), memoised with its kernel waits.
  [[nodiscard]] Compute update_compute(const Model& model, Optimizer optimizer);

  [[nodiscard]] const CostModel& cost() const noexcept { return *cost_; }
  /// Distinct shapes memoised so far.
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  enum class What : std::uint8_t { Kernels, Demand, Update, Compute, UpdateCompute };
  struct Key {
    const Model* model = nullptr;
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    std::uint32_t batch = 0;
    std::uint32_t tag = 0;  ///< What, pass, inference, optimizer packed
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct Entry {
    Key key;
    OpKernels kernels;  ///< Kernels, Update, Compute, UpdateCompute
    double demand = 0;  ///< Demand, Compute, UpdateCompute
    double kernel_wait_ns = 0, kernel_wait_priority_ns = 0;  ///< Compute, UpdateCompute
  };
  /// The Compute of `kernels` and `demand`, kernel waits included (divided once per shape).
  static Compute with_waits(const OpKernels& kernels, double demand) noexcept;

  static Key make_key(What what, const Model& model, LayerRange range, std::uint32_t batch,
                      std::uint32_t detail) noexcept;
  /// The entry's index, or -1.
  [[nodiscard]] std::int64_t find(const Key& key, std::uint64_t hash) const noexcept;
  void insert(Entry entry, std::uint64_t hash);
  void rehash(std::size_t buckets);
  static std::uint64_t hash_of(const Key& key) noexcept;

  const CostModel* cost_;
  std::vector<Entry> entries_;
  /// Open addressing, linear probing: entry index + 1, 0 = empty; power-of-two size, at most
  /// half full.
  std::vector<std::uint32_t> table_;
};

}  // namespace gpumux
