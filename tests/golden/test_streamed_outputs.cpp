// Streamed outputs against the whole-log code they replaced: the summary accumulated while a
// run streams (bounded busy time) equals the batch summary of its kept log, and the streamed
// events.jsonl and trace.json are the bytes the whole-log writers give for that log.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "gpumux/io/config.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/io/output.hpp"
#include "gpumux/io/summary.hpp"
#include "test_support.hpp"

using namespace gpumux;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("the streamed summary equals the batch summary of the kept log", "[golden][streamed]") {
  const auto root = test::source_dir();
  // Every policy family, training and serving, preemption and migration, two devices.
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"default", {}},
      {"crosspaper_mixed", {"horizon_s=40"}},
      {"olympian_mix", {}},
      {"pipeswitch_fig6", {}},
      {"salus_jct_small", {}},
      {"salus_inference", {}},
      {"switchflow_fig6", {}},
      {"switchflow_fig7", {}},
      {"default", {"policy.name=stop_and_start", "horizon_s=8"}},
      {"default", {"policy.name=mps", "horizon_s=8"}}};
  for (const auto& [name, overrides] : cases) {
    INFO(name);
    const ExperimentConfig cfg =
        load_experiment(root / "experiments" / "configs" / (name + ".json"), overrides, root);
    const ExperimentResult r = run_experiment(cfg, root, false, /*keep_log=*/true);
    REQUIRE(r.log.size() > 0);
    const nlohmann::json batch = summarize(r.log, r.jobs, cfg.devices.size());
    CHECK(r.summary.dump(2) == batch.dump(2));
  }
}

TEST_CASE("without a kept log the run's events are not held in memory", "[golden][streamed]") {
  const auto root = test::source_dir();
  const ExperimentConfig cfg =
      load_experiment(root / "experiments" / "configs" / "default.json", {"horizon_s=8"}, root);
  const ExperimentResult kept = run_experiment(cfg, root, false, true);
  const ExperimentResult dropped = run_experiment(cfg, root, false, false);
  CHECK(kept.log.size() > 100);
  CHECK(dropped.log.size() == 0);
  CHECK(dropped.summary == kept.summary);
  CHECK(dropped.summary["run"]["events"] == kept.log.size());
}

TEST_CASE("streamed events.jsonl and trace.json are the whole-log writers' bytes",
          "[golden][streamed]") {
  const auto root = test::source_dir();
  const fs::path out =
      fs::temp_directory_path() / ("gpumux_streamed_" + std::to_string(std::random_device{}()));
  ExperimentConfig cfg = load_experiment(root / "experiments" / "configs" / "switchflow_fig6.json",
                                         {"out_dir=" + out.string()}, root);
  const ExperimentResult r = run_experiment(cfg, root, true, /*keep_log=*/true);
  std::ostringstream events, trace;
  r.log.write_jsonl(events);
  write_chrome_trace(r.log, r.jobs, trace);
  const std::string events_file = slurp(out / "events.jsonl");
  const std::string trace_file = slurp(out / "trace.json");
  CHECK(events_file.size() > 1000);
  CHECK(events_file == events.str());
  CHECK(trace_file == trace.str());
  // The trace is one JSON document with the events Perfetto reads.
  const nlohmann::json doc = nlohmann::json::parse(trace_file);
  CHECK(doc["displayTimeUnit"] == "ms");
  CHECK(doc["traceEvents"].size() > 10);
  fs::remove_all(out);
}

TEST_CASE("bounded busy time is exact on an engine-ordered stream", "[golden][streamed]") {
  // Ops on four streams of one device: each submitted at the current time, started later,
  // ending in time order with start times that vary (long and short ops overlap).
  std::mt19937_64 rng(7);
  std::vector<JobSpec> jobs(1);
  jobs[0].name = "j";
  EventLog log;
  struct Live {
    std::uint64_t op;
    TimeNs start, end;
    OpKind kind;
  };
  std::vector<Live> live;
  TimeNs now = 0;
  std::uint64_t next_op = 0;
  for (int step = 0; step < 20000; ++step) {
    now += static_cast<TimeNs>(rng() % 50);
    // End every op due by now, in end-time order.
    std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.end < b.end; });
    while (!live.empty() && live.front().end <= now) {
      Event e;
      e.kind = EventKind::OpEnd;
      e.t_ns = live.front().end;
      e.a = live.front().start;
      e.op = live.front().op;
      e.op_kind = live.front().kind;
      e.job = 0;
      log.add(e);
      live.erase(live.begin());
    }
    if (live.size() < 4) {
      Event e;
      e.kind = EventKind::OpSubmit;
      e.t_ns = now;
      e.op = next_op;
      e.job = 0;
      log.add(e);
      const TimeNs start = now + static_cast<TimeNs>(rng() % 100);
      const TimeNs len = (rng() % 10 == 0) ? 5000 : static_cast<TimeNs>(rng() % 80);
      live.push_back(
          {next_op++, start, start + len, rng() % 3 == 0 ? OpKind::CopyH2D : OpKind::Compute});
    }
  }
  SummaryAccumulator bounded(jobs, 1, true);
  std::size_t max_open = 0;
  for (const Event& e : log.events()) {
    bounded.on_event(e);
    max_open = std::max(max_open, bounded.open_busy_pieces());
  }
  CHECK(bounded.late_intervals() == 0);
  CHECK(max_open < 200);  // pieces since the earliest op in flight, not all of them
  CHECK(bounded.finish() == summarize(log, jobs, 1));
}
