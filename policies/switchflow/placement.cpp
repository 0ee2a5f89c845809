// SwitchFlow's placement (switchflow.hpp): the device each active job should run on, placed
// lowest priority first, and the move of its state there: a migration after the drain, or a
// load from the host when nothing of it ran where it was.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/model/model.hpp"
#include "switchflow/device_ranking.hpp"
#include "switchflow/switchflow.hpp"

namespace gpumux::policies::switchflow {

void SwitchFlow::settle_moves(Context& ctx) {
  for (auto& [j, info] : jobs_) {
    if (!info.moving) continue;
    const JobView s = ctx.job(j);
    const LayerRange all{0, s.model().layer_count()};
    if (!s.active() || !info.where) {
      info.moving = false;
    } else if (s.resident(*info.where, all)) {
      info.moving = false;
      if (info.migrating) {
        ctx.record("switchflow.migration_ms",
                   static_cast<double>(ctx.now() - info.move_start_ns) * 1e-6);
        memory_freed(info.move_from);
      }
    } else if (!s.resident_or_loading(*info.where, all)) {
      // The copy was dropped: a migration leaves the state where it was.
      info.moving = false;
      if (info.migrating) {
        info.where = s.device();
      } else {
        info.where.reset();
        info.engine_knows = false;
      }
    }
  }
}

bool SwitchFlow::present(const Context& ctx, JobId j) {
  if (!ctx.job(j).active()) return false;
  if (return_idle_ns_ < 0 || busy(ctx, j)) return true;
  return ctx.now() - jobs_[j].last_busy_ns < return_idle_ns_;
}

std::vector<JobId> SwitchFlow::active_by_priority(const Context& ctx) {
  std::vector<JobId> order;
  for (JobId j : ctx.arrived_jobs()) {
    if (ctx.job(j).active()) order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(), [&ctx](JobId a, JobId b) {
    return ctx.job(a).spec().priority > ctx.job(b).spec().priority;
  });
  return order;
}

std::map<JobId, std::optional<DeviceId>> SwitchFlow::desired_devices(Context& ctx) {
  std::map<JobId, std::optional<DeviceId>> desired;
  std::vector<std::pair<int, DeviceId>> claims;  // (priority, GPU) of present jobs
  for (JobId j : active_by_priority(ctx)) {
    const Info& info = jobs_[j];
    const int priority = ctx.job(j).spec().priority;
    std::optional<DeviceId> choice;
    for (DeviceId d : ranked_) {
      if (info.no_fit.count(d)) continue;
      const bool claimed = std::any_of(claims.begin(), claims.end(), [&](const auto& c) {
        return c.second == d && c.first > priority;
      });
      if (migrate_ && is_gpu(ctx, d) && claimed) continue;
      choice = d;
      break;
    }
    if (!choice) {
      // Every GPU it fits on belongs to a higher class and there is no CPU: wait there.
      if (info.where && !info.no_fit.count(*info.where)) {
        choice = info.where;
      } else {
        for (DeviceId d : ranked_) {
          if (!info.no_fit.count(d)) {
            choice = d;
            break;
          }
        }
      }
    }
    desired[j] = choice;
    if (choice && present(ctx, j)) claims.emplace_back(priority, *choice);
  }
  return desired;
}

bool SwitchFlow::place_jobs(Context& ctx) {
  const auto desired = desired_devices(ctx);
  std::vector<JobId> order = active_by_priority(ctx);
  std::reverse(order.begin(), order.end());
  for (JobId j : order) {
    Info& info = jobs_[j];
    if (info.moving) continue;
    const JobView s = ctx.job(j);
    if (info.where && is_gpu(ctx, *info.where) &&
        !s.resident_or_loading(*info.where, {0, s.model().layer_count()})) {
      info.where.reset();  // its state was lost there (a dropped load): place it afresh
      info.engine_knows = false;
    }
    const std::optional<DeviceId> want = desired.at(j);
    if (!want) {
      reject(ctx, j,
             "out of memory: " + std::to_string(ctx.memory().persistent_bytes(j)) +
                 " B of state and " + std::to_string(ctx.memory().ephemeral_bytes(j)) +
                 " B of activations fit on no device");
      return true;
    }
    if (info.where == want) continue;
    switch (move(ctx, j, *want, desired)) {
      case MoveResult::Moved:
      case MoveResult::Wait:
        break;
      case MoveResult::NoFit:
        info.no_fit.insert(*want);
        return true;
    }
  }
  return false;
}

bool SwitchFlow::freeing(DeviceId d, const std::map<JobId, std::optional<DeviceId>>& desired) {
  for (const auto& [j, info] : jobs_) {
    if (info.moving && info.move_from == d && info.where != d) return true;
    if (info.evict_from == d) return true;
    if (info.where == d && !info.moving) {
      auto it = desired.find(j);
      if (it != desired.end() && it->second != d) return true;
    }
  }
  return false;
}

MoveResult SwitchFlow::move(Context& ctx, JobId j, DeviceId to,
                            const std::map<JobId, std::optional<DeviceId>>& desired) {
  Info& info = jobs_[j];
  const JobView s = ctx.job(j);
  if (is_gpu(ctx, to)) {
    const MemoryStats m = ctx.memory().stats(to);
    const std::uint64_t state = ctx.memory().persistent_bytes(j);
    const std::uint64_t need = state + ctx.memory().ephemeral_bytes(j);
    if (need > m.capacity_bytes) return MoveResult::NoFit;
    const bool already_there = s.resident_or_loading(to, {0, s.model().layer_count()});
    const bool room = already_there || ctx.memory().fits(j, to);
    if (!room) return freeing(to, desired) ? MoveResult::Wait : MoveResult::NoFit;
  }
  const std::optional<DeviceId> from = info.where;
  if (from) stop_compute(ctx, j, *from);
  const LayerRange all{0, s.model().layer_count()};
  const bool copy_needed = from && (is_gpu(ctx, *from) || is_gpu(ctx, to));
  if (copy_needed && info.engine_knows && s.device() == *from &&
      (!is_gpu(ctx, *from) || s.resident_or_loading(*from, all))) {
    // The state moves device to device, after the drain, on a side copy stream.
    const StreamId stream =
        is_gpu(ctx, *from) ? gpus_[index_of(*from)].evac : gpus_[index_of(to)].load;
    try {
      (void)ctx.memory().migrate(j, to, stream);
    } catch (const OutOfMemory&) {
      return freeing(to, desired) ? MoveResult::Wait : MoveResult::NoFit;
    }
    if (info.evict_from == to) info.evict_from.reset();
    info.where = to;
    info.moving = true;
    info.migrating = true;
    info.move_from = *from;
    info.move_start_ns = ctx.now();
    return MoveResult::Moved;
  }
  // Nothing of it ran where it is: bring the state from the host instead.
  if (is_gpu(ctx, to)) {
    try {
      (void)load_whole(ctx, j, gpus_[index_of(to)].load);
    } catch (const OutOfMemory&) {
      return freeing(to, desired) ? MoveResult::Wait : MoveResult::NoFit;
    }
  }
  if (from && is_gpu(ctx, *from) && *from != to && s.resident_bytes(*from) > 0) {
    info.evict_from = *from;
  }
  if (info.evict_from == to) info.evict_from.reset();
  info.where = to;
  info.engine_knows = false;
  info.moving = !s.resident(to, all);
  info.migrating = false;
  info.move_from = from.value_or(to);
  info.move_start_ns = ctx.now();
  return MoveResult::Moved;
}

void SwitchFlow::stop_compute(Context& ctx, JobId j, DeviceId device) {
  if (is_gpu(ctx, device)) {
    Gpu& g = gpus_[index_of(device)];
    if (g.holder == j && !g.preempted) preempt_holder(ctx, g);
    return;
  }
  const Info& info = jobs_[j];
  auto it = info.cpu_streams.find(device);
  if (it != info.cpu_streams.end() &&
      ctx.streams().queued(it->second) + ctx.streams().in_flight(it->second) > 0) {
    ctx.preempt(j, PreemptMode::DropQueued);
  }
}

void SwitchFlow::finish_evictions(Context& ctx) {
  for (auto& [j, info] : jobs_) {
    if (!info.evict_from || !ctx.job(j).active()) continue;
    const DeviceId d = *info.evict_from;
    if (ctx.ops_in_flight(j, d) > 0) continue;
    ctx.memory().evict(j, d);
    info.evict_from.reset();
    memory_freed(d);
  }
}

}  // namespace gpumux::policies::switchflow
