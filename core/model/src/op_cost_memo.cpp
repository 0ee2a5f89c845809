#include "gpumux/model/op_cost_memo.hpp"
#include "gpumux/api/seed.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {}  // namespace

OpCostMemo::Key OpCostMemo::make_key(What what, const Model& model, LayerRange range,
                                     std::uint32_t batch, std::uint32_t detail) noexcept {
  return Key{&model, range.first, range.last, batch,
             static_cast<std::uint32_t>(what) | (detail << 8)};
}

std::uint64_t OpCostMemo::hash_of(const Key& key) noexcept {
  // The fields folded into one word (shapes of one run differ mostly in first/last, which land
  // in different bits), then one finaliser.
  const std::uint64_t x =
      reinterpret_cast<std::uintptr_t>(key.model) ^ (static_cast<std::uint64_t>(key.first) << 40) ^
      (static_cast<std::uint64_t>(key.last) << 20) ^ (static_cast<std::uint64_t>(key.batch) << 52) ^
      (static_cast<std::uint64_t>(key.tag) << 8);
  return mix64(x);
}

std::int64_t OpCostMemo::find(const Key& key, std::uint64_t hash) const noexcept {
  if (table_.empty()) return -1;
  const std::size_t mask = table_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const std::uint32_t slot = table_[i];
    if (slot == 0) return -1;
    if (entries_[slot - 1].key == key) return static_cast<std::int64_t>(slot - 1);
  }
}

void OpCostMemo::insert(Entry entry, std::uint64_t hash) {
  if (2 * (entries_.size() + 1) > table_.size()) rehash(table_.empty() ? 64 : 2 * table_.size());
  entries_.push_back(entry);
  const std::size_t mask = table_.size() - 1;
  std::size_t i = hash & mask;
  while (table_[i] != 0) i = (i + 1) & mask;
  table_[i] = static_cast<std::uint32_t>(entries_.size());
}

void OpCostMemo::rehash(std::size_t buckets) {
  table_.assign(buckets, 0);
  const std::size_t mask = buckets - 1;
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    std::size_t i = hash_of(entries_[e].key) & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = static_cast<std::uint32_t>(e + 1);
  }
}

OpKernels OpCostMemo::op_kernels(const Model& model, LayerRange range, std::uint32_t batch,
                                 Pass pass, bool inference) {
  const Key key = make_key(What::Kernels, model, range, batch,
                           static_cast<std::uint32_t>(pass) | (inference ? 0x10u : 0u));
  const std::uint64_t h = hash_of(key);
  if (const std::int64_t e = find(key, h); e >= 0) return entries_[e].kernels;
  Entry entry{key, cost_->op_kernels(model, range, batch, pass, inference), 0};
  insert(entry, h);
  return entry.kernels;
}

double OpCostMemo::op_demand(const Model& model, LayerRange range, std::uint32_t batch, Pass pass) {
  const Key key = make_key(What::Demand, model, range, batch, static_cast<std::uint32_t>(pass));
  const std::uint64_t h = hash_of(key);
  if (const std::int64_t e = find(key, h); e >= 0) return entries_[e].demand;
  Entry entry{key, {}, cost_->op_demand(model, range, batch, pass)};
  insert(entry, h);
  return entry.demand;
}

OpCostMemo::Compute OpCostMemo::op_compute(const Model& model, LayerRange range,
                                           std::uint32_t batch, Pass pass, bool inference) {
  const Key key = make_key(What::Compute, model, range, batch,
                           static_cast<std::uint32_t>(pass) | (inference ? 0x10u : 0u));
  const std::uint64_t h = hash_of(key);
  if (const std::int64_t e = find(key, h); e >= 0) {
    const Entry& x = entries_[e];
    return {x.kernels, x.demand, x.kernel_wait_ns, x.kernel_wait_priority_ns};
  }
  // Kernels first: it is the one that can throw (a range outside the model).
  const OpKernels kernels = cost_->op_kernels(model, range, batch, pass, inference);
  const Compute c = with_waits(kernels, cost_->op_demand(model, range, batch, pass));
  insert(Entry{key, c.kernels, c.demand, c.kernel_wait_ns, c.kernel_wait_priority_ns}, h);
  return c;
}

OpCostMemo::Compute OpCostMemo::with_waits(const OpKernels& kernels, double demand) noexcept {
  Compute c{kernels, demand, 0, 0};
  if (kernels.solo_ns() > 0) {
    const double solo = static_cast<double>(kernels.solo_ns());
    c.kernel_wait_ns = kernels.full_residual_ns2 / solo;
    c.kernel_wait_priority_ns = kernels.full_wave_residual_ns2 / solo;
  }
  return c;
}

OpCostMemo::Compute OpCostMemo::update_compute(const Model& model, Optimizer optimizer) {
  const Key key =
      make_key(What::UpdateCompute, model, {}, 0, static_cast<std::uint32_t>(optimizer));
  const std::uint64_t h = hash_of(key);
  if (const std::int64_t e = find(key, h); e >= 0) {
    const Entry& x = entries_[e];
    return {x.kernels, x.demand, x.kernel_wait_ns, x.kernel_wait_priority_ns};
  }
  const Compute c = with_waits(cost_->update_kernels(model, optimizer), 1.0);
  insert(Entry{key, c.kernels, c.demand, c.kernel_wait_ns, c.kernel_wait_priority_ns}, h);
  return c;
}

OpKernels OpCostMemo::update_kernels(const Model& model, Optimizer optimizer) {
  const Key key = make_key(What::Update, model, {}, 0, static_cast<std::uint32_t>(optimizer));
  const std::uint64_t h = hash_of(key);
  if (const std::int64_t e = find(key, h); e >= 0) return entries_[e].kernels;
  Entry entry{key, cost_->update_kernels(model, optimizer), 0};
  insert(entry, h);
  return entry.kernels;
}

}  // namespace gpumux
