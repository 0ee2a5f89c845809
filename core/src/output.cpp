// A run's result files, written through a ResultWriter (result_dir.hpp).
#include "gpumux/output.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include "gpumux/errors.hpp"
#include "gpumux/summary.hpp"

namespace gpumux {

namespace fs = std::filesystem;

nlohmann::json build_info() {
  return {{"version", GPUMUX_VERSION},
          {"git_revision", GPUMUX_GIT_REVISION},
          {"build_type", GPUMUX_BUILD_TYPE},
          {"compiler", GPUMUX_CXX_COMPILER},
          {"sanitize", GPUMUX_SANITIZE_FLAGS},
          {"cuda_compiled", static_cast<bool>(GPUMUX_CUDA_BUILT)}};
}

void write_chrome_trace(const EventLog& log, const std::vector<JobSpec>& jobs, std::ostream& out) {
  // Chrome's trace-event format (chrome://tracing, ui.perfetto.dev): pid = device (one track
  // per stream), pid 1000 = jobs (one track per job: requests and iterations).
  constexpr int kJobsPid = 1000;
  auto us = [](TimeNs t) { return static_cast<double>(t) / 1000.0; };
  nlohmann::json events = nlohmann::json::array();
  std::map<std::pair<int, std::uint32_t>, bool> named_threads;
  std::map<int, bool> named_procs;
  auto name_thread = [&](int pid, std::uint32_t tid, const std::string& name) {
    if (named_threads.emplace(std::make_pair(pid, tid), true).second) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid},
                        {"args", {{"name", name}}}});
    }
    if (named_procs.emplace(pid, true).second) {
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid},
                        {"args", {{"name", pid == kJobsPid ? std::string("jobs")
                                                           : "device " + std::to_string(pid)}}}});
    }
  };
  auto job_name = [&](std::uint32_t j) {
    return j < jobs.size() ? jobs[j].name : std::string("system");
  };
  std::vector<TimeNs> last_iteration_end(jobs.size(), -1);
  std::vector<TimeNs> request_arrival;
  for (const Event& e : log.events()) {
    switch (e.kind) {
      case EventKind::OpEnd: {
        if (e.a >= e.t_ns && e.status != OpStatus::Ok) break;
        name_thread(e.device, e.stream, "stream " + std::to_string(e.stream));
        std::string name = job_name(e.job) + " " + std::string(to_string(e.purpose));
        events.push_back({{"ph", "X"}, {"name", name}, {"cat", std::string(to_string(e.op_kind))},
                          {"pid", e.device}, {"tid", e.stream}, {"ts", us(e.a)},
                          {"dur", us(e.t_ns - e.a)},
                          {"args", {{"op", e.op}, {"layers", {e.first_layer, e.last_layer}},
                                    {"status", std::string(to_string(e.status))}}}});
        break;
      }
      case EventKind::RequestArrival:
        if (request_arrival.size() <= static_cast<std::size_t>(e.a)) {
          request_arrival.resize(static_cast<std::size_t>(e.a) + 1, 0);
        }
        request_arrival[static_cast<std::size_t>(e.a)] = e.t_ns;
        break;
      case EventKind::RequestEnd:
        if (e.job < jobs.size()) {
          name_thread(kJobsPid, e.job, job_name(e.job));
          events.push_back({{"ph", "X"}, {"name", "request " + std::to_string(e.a)},
                            {"cat", "request"}, {"pid", kJobsPid}, {"tid", e.job},
                            {"ts", us(e.t_ns - e.b)}, {"dur", us(e.b)}});
        }
        break;
      case EventKind::IterationEnd:
        if (e.job < jobs.size()) {
          name_thread(kJobsPid, e.job, job_name(e.job));
          TimeNs start = last_iteration_end[e.job];
          if (start >= 0) {
            events.push_back({{"ph", "X"}, {"name", "iteration " + std::to_string(e.a)},
                              {"cat", "iteration"}, {"pid", kJobsPid}, {"tid", e.job},
                              {"ts", us(start)}, {"dur", us(e.t_ns - start)}});
          }
          last_iteration_end[e.job] = e.t_ns;
        }
        break;
      case EventKind::Preempt:
      case EventKind::Migrate:
      case EventKind::DeviceNote:
        events.push_back({{"ph", "i"}, {"name", std::string(to_string(e.kind)) + " " +
                                                    std::string(e.label)},
                          {"pid", e.kind == EventKind::DeviceNote ? static_cast<int>(e.device)
                                                                  : kJobsPid},
                          {"tid", e.job == kNoJob ? 0u : e.job}, {"ts", us(e.t_ns)}, {"s", "t"}});
        break;
      default: break;
    }
  }
  nlohmann::json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  out << doc.dump();
}

nlohmann::json write_run_outputs(ResultWriter& writer, const RunOutputs& o) {
  writer.write("config.resolved.json", o.resolved_config.dump(2) + "\n");
  if (o.write_events) {
    writer.write("events.jsonl", [&](std::ostream& out) { o.log->write_jsonl(out); });
  }
  nlohmann::json summary = summarize(*o.log, *o.jobs, o.device_count);
  writer.write("summary.json", summary.dump(2) + "\n");
  writer.write("summary.csv", [&](std::ostream& out) { write_summary_csv(summary, out); });
  if (o.write_trace) {
    writer.write("trace.json",
                 [&](std::ostream& out) { write_chrome_trace(*o.log, *o.jobs, out); });
  }
  writer.write("run.json", o.run_info.dump(2) + "\n");
  // The marker last: only now does the folder appear under its final name.
  writer.commit(o.identity);
  return summary;
}

}  // namespace gpumux
