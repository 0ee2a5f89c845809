#include "test_support.hpp"

#include <map>
#include <set>
#include <sstream>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/config.hpp"

namespace gpumux::test {

std::filesystem::path source_dir() {
  return GPUMUX_SOURCE_DIR;
}

nlohmann::json make_config(const std::string& policy, nlohmann::json workload,
                           std::vector<std::string> devices) {
  nlohmann::json doc;
  doc["name"] = "test";
  doc["platform"] = "sim";
  doc["seed"] = 7;
  doc["devices"] = nlohmann::json::array();
  for (const auto& d : devices) doc["devices"].push_back({{"profile", d}});
  doc["policy"] = {{"name", policy}, {"params", nlohmann::json::object()}};
  doc["workload"] = std::move(workload);
  doc["trace"] = false;
  return doc;
}

ExperimentResult run_config(const nlohmann::json& doc) {
  ExperimentConfig cfg = parse_experiment(doc, "<test config>", source_dir());
  return run_experiment(cfg, source_dir(), /*write_outputs=*/false);
}

std::vector<std::string> standard_traces() {
  return {"traces/workloads/small_mixed.jsonl", "traces/workloads/small_training_pair.jsonl",
          "traces/workloads/small_inference_mix.jsonl", "traces/workloads/small_multi_tenant.jsonl",
          "traces/workloads/small_dynamic_serving.jsonl"};
}

std::string events_jsonl(const ExperimentResult& result) {
  std::ostringstream out;
  result.log.write_jsonl(out);
  return out.str();
}

std::vector<std::string> check_invariants(const ExperimentResult& result,
                                          const std::vector<std::uint64_t>& capacity,
                                          const std::vector<bool>& is_cpu, bool virtual_time) {
  std::vector<std::string> bad;
  auto violation = [&](const std::string& what, const Event& e) {
    if (bad.size() < 20) {
      bad.push_back(what + " (t=" + std::to_string(e.t_ns) + " job=" + std::to_string(e.job) +
                    " op=" + std::to_string(e.op) + ")");
    }
  };
  const std::size_t n_dev = capacity.size();
  std::vector<std::int64_t> mem(n_dev, 0);
  // Layers loaded per (job, device): a set of [first,last) ranges.
  std::map<std::pair<std::uint32_t, std::uint16_t>,
           std::vector<std::pair<std::uint32_t, std::uint32_t>>>
      loaded;
  std::map<std::uint32_t, std::uint16_t> migrate_dest;
  // A data-parallel job (one with an all-reduce) runs its replicas' ops side by side: its
  // compute ops are ordered per device; any other job's across devices.
  std::set<std::uint32_t> data_parallel;
  for (const Event& e : result.log.events()) {
    if (e.kind == EventKind::OpSubmit && e.purpose == OpPurpose::AllReduce) {
      data_parallel.insert(e.job);
    }
  }
  const auto chain = [&](const Event& e) {
    return std::make_pair(e.job, data_parallel.contains(e.job) ? e.device : std::uint16_t{0xffff});
  };
  std::map<std::pair<std::uint32_t, std::uint16_t>, TimeNs> last_compute_end;
  std::map<std::uint64_t, TimeNs> op_start;
  std::map<std::pair<std::uint16_t, std::uint32_t>, TimeNs> stream_last_start;
  std::set<std::uint32_t> ended;
  TimeNs last_t = 0;
  for (const Event& e : result.log.events()) {
    if (virtual_time && e.t_ns < last_t) violation("time went back in the event log", e);
    last_t = std::max(last_t, e.t_ns);
    const auto key = std::make_pair(e.job, e.device);
    switch (e.kind) {
      case EventKind::Alloc:
        mem[e.device] += e.a;
        if (static_cast<std::uint64_t>(mem[e.device]) > capacity[e.device]) {
          violation("memory exceeds capacity on device " + std::to_string(e.device), e);
        }
        break;
      case EventKind::Free:
        mem[e.device] -= e.a;
        if (mem[e.device] < 0) violation("more memory freed than allocated", e);
        if (e.label == "weights" || e.label == "state") loaded.erase(key);
        break;
      case EventKind::Migrate:
        migrate_dest[e.job] = e.device;
        break;
      case EventKind::OpStart: {
        op_start[e.op] = e.t_ns;
        auto& prev = stream_last_start[{e.device, e.stream}];
        if (e.t_ns < prev) violation("ops started out of order on a stream", e);
        prev = e.t_ns;
        if (e.op_kind != OpKind::Compute || e.job == kNoJob) break;
        auto it = last_compute_end.find(chain(e));
        if (it != last_compute_end.end() && e.t_ns < it->second) {
          violation("compute op started before the job's previous compute op ended", e);
        }
        if (is_cpu[e.device]) break;
        const auto& ranges = loaded[key];
        for (std::uint32_t l = e.first_layer; l < e.last_layer; ++l) {
          bool ok = false;
          for (const auto& [f, t] : ranges) ok = ok || (l >= f && l < t);
          if (!ok) {
            violation("compute op started before layer " + std::to_string(l) + " was on device " +
                          std::to_string(e.device),
                      e);
            break;
          }
        }
        break;
      }
      case EventKind::OpEnd: {
        if (e.status == OpStatus::Ok && e.t_ns < e.a) violation("op ended before it started", e);
        if (e.status != OpStatus::Ok || e.job == kNoJob) break;
        if (e.op_kind == OpKind::Compute) last_compute_end[chain(e)] = e.t_ns;
        if (e.purpose == OpPurpose::LoadWeights)
          loaded[key].emplace_back(e.first_layer, e.last_layer);
        if (e.purpose == OpPurpose::MigrateState) {
          const std::uint16_t dst = migrate_dest.count(e.job) ? migrate_dest[e.job] : e.device;
          loaded[{e.job, dst}].emplace_back(e.first_layer, e.last_layer);
        }
        break;
      }
      case EventKind::JobEnd: {
        if (!ended.insert(e.job).second) violation("job ended twice", e);
        const JobEndView end = job_end_of(e);
        if (end.reason == EndReason::Rejected &&
            end.label.size() <= end_label(EndReason::Rejected, "").size()) {
          violation("job rejected without a reason", e);
        }
        if (end.reason != EndReason::Finished && end.reason != EndReason::Rejected &&
            end.reason != EndReason::Stopped) {
          violation("job neither finished nor rejected: " + std::string(e.label), e);
        }
        break;
      }
      default:
        break;
    }
  }
  for (std::size_t j = 0; j < result.jobs.size(); ++j) {
    if (!ended.count(static_cast<std::uint32_t>(j))) {
      bad.push_back("job " + result.jobs[j].name + " never ended");
    }
  }
  return bad;
}

}  // namespace gpumux::test
