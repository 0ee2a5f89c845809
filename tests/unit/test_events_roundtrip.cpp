// events.jsonl written and read back through the kinds' field tables (event_fields.hpp): a log
// holding every kind with every field set, and a real run's log, come back event by event
// equal (and summarise to the same summary); a bad line is refused with the file, the line and
// the problem named. Also the end-reason name table that JobEnd labels are built from.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/events_reader.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/io/summary.hpp"
#include "test_support.hpp"

using namespace gpumux;
namespace fs = std::filesystem;

namespace {

/// A file in a fresh temporary folder, removed with the folder.
class TempFile {
 public:
  TempFile() {
    dir_ =
        fs::temp_directory_path() / ("gpumux_events_" + std::to_string(std::random_device{}()) +
                                     "_" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(dir_);
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] std::string path() const { return (dir_ / "events.jsonl").string(); }
  void write(const std::string& text) const { std::ofstream(path(), std::ios::binary) << text; }

 private:
  fs::path dir_;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Every field of kind k's table set to a value of its own (distinct per kind and field), so a
/// field written under the wrong key or read into the wrong slot shows.
Event full_event(EventLog& log, const EventLayout& l, std::int64_t seed) {
  Event e;
  e.kind = l.kind;
  e.t_ns = 1'000'000 * seed + 7;
  for (std::size_t i = 0; i < l.count; ++i) {
    const std::int64_t v = seed * 100 + static_cast<std::int64_t>(i) + 1;
    switch (l.fields[i].slot) {
      case Slot::Job:
        e.job = static_cast<std::uint32_t>(v);
        break;
      case Slot::Op:
        e.op = static_cast<std::uint64_t>(v) << 33;  // beyond 32 bits
        break;
      case Slot::Device:
        e.device = static_cast<std::uint16_t>(v % 7);
        break;
      case Slot::Stream:
        e.stream = static_cast<std::uint32_t>(v);
        break;
      case Slot::OpKind:
        e.op_kind = OpKind::CopyD2H;
        break;
      case Slot::Purpose:
        e.purpose = OpPurpose::MigrateState;
        break;
      case Slot::Status:
        e.status = OpStatus::Aborted;
        break;
      case Slot::Layers:
        e.first_layer = 3;
        e.last_layer = static_cast<std::uint32_t>(v);
        break;
      case Slot::A:
        e.a = -v;  // negative: a is signed
        break;
      case Slot::B:
        e.b = v * 1'000'000'007;
        break;
      case Slot::Value:
        e.value = 0.1 * static_cast<double>(v);
        break;
      case Slot::Label:
        // A JobEnd label must name an end reason; the others take any text, escapes included.
        e.label = log.intern(l.kind == EventKind::JobEnd
                                 ? end_label(EndReason::Rejected, "out of \"memory\"")
                                 : "label \\ \"" + std::string(l.name) + "\"\n\t\x01");
        break;
    }
  }
  return e;
}

void require_equal_logs(const EventLog& a, const EventLog& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("event " << i << " (" << to_string(a.events()[i].kind) << ")");
    CHECK(a.events()[i] == b.events()[i]);
  }
}

std::string read_error(const std::string& file) {
  try {
    (void)read_events_jsonl(file);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("every event kind's table round-trips through events.jsonl", "[events]") {
  EventLog log;
  for (const EventLayout& l : kEventLayouts) {
    log.add(full_event(log, l, static_cast<std::int64_t>(l.kind) + 1));
    // The optional fields left out: no job, no label.
    Event bare = full_event(log, l, 50);
    bare.job = kNoJob;
    if (l.kind != EventKind::JobEnd) bare.label = {};
    log.add(bare);
  }
  TempFile f;
  {
    std::ofstream out(f.path(), std::ios::binary);
    log.write_jsonl(out);
  }
  const EventLog back = read_events_jsonl(f.path());
  require_equal_logs(log, back);
  // And written again, the same bytes.
  TempFile g;
  {
    std::ofstream out(g.path(), std::ios::binary);
    back.write_jsonl(out);
  }
  CHECK(slurp(g.path()) == slurp(f.path()));
}

TEST_CASE("a run's events.jsonl reads back event by event and summarises the same", "[events]") {
  const auto root = test::source_dir();
  // Training and serving, preemption, a context start, timeslice notes, a metric, job ends.
  const std::vector<std::vector<std::string>> cases = {
      {"policy.name=pipeswitch", "horizon_s=3"},
      {"policy.name=time_slicing", "horizon_s=3"},
  };
  for (const auto& overrides : cases) {
    INFO(overrides.front());
    const ExperimentConfig cfg =
        load_experiment(root / "experiments" / "configs" / "default.json", overrides, root);
    const ExperimentResult r = run_experiment(cfg, root, false, /*keep_log=*/true);
    REQUIRE(r.log.size() > 100);
    TempFile f;
    {
      std::ofstream out(f.path(), std::ios::binary);
      r.log.write_jsonl(out);
    }
    const EventLog back = read_events_jsonl(f.path());
    require_equal_logs(r.log, back);
    CHECK(summarize(back, r.jobs, cfg.devices.size()).dump() == r.summary.dump());
  }
}

TEST_CASE("a bad events.jsonl line is refused naming the file, the line and the problem",
          "[events]") {
  const std::string good = R"({"t":0,"ev":"run_start","a":1,"b":1,"label":"fifo"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"t\":", "line 2"},
      {"[1,2]", "line 2: expected a JSON object"},
      {R"({"ev":"run_end","a":1,"b":0})", "line 2: missing key 't'"},
      {R"({"t":5,"a":1,"b":0})", "line 2: missing key 'ev'"},
      {R"({"t":5,"ev":"run_ended","a":1,"b":0})", "line 2: ev: unknown event kind 'run_ended'"},
      {R"({"t":5,"ev":"run_end","a":1,"b":0,"job":3})",
       "line 2: key 'job' is not a field of run_end"},
      {R"({"t":5,"ev":"request_end","job":0,"a":1})", "line 2: missing key 'b' of request_end"},
      {R"({"t":5,"ev":"run_end","a":"many","b":0})", "line 2: a: "},
      {R"({"t":5,"ev":"op_start","job":0,"op":1,"dev":0,"stream":0,"kind":"fft","purpose":"forward","layers":[0,1]})",
       "line 2: kind: unknown value 'fft'"},
      {R"({"t":5,"ev":"op_start","job":0,"op":1,"dev":0,"stream":0,"kind":"h2d","purpose":"forward","layers":[0]})",
       "line 2: layers: expected [first, last]"},
      {R"({"t":5,"ev":"job_end","job":0,"a":0,"b":0,"label":"exploded"})",
       "line 2: label: 'exploded' names no end reason"},
  };
  for (const auto& [line, expected] : cases) {
    INFO(line);
    TempFile f;
    f.write(good + "\n" + line + "\n");
    const std::string msg = read_error(f.path());
    CHECK_THAT(msg, Catch::Contains(f.path() + ": " + expected));
  }
  CHECK_THAT(read_error("/nonexistent/events.jsonl"),
             Catch::Contains("/nonexistent/events.jsonl") && Catch::Contains("cannot open"));
}

TEST_CASE("end reasons: one name table for labels and parsing", "[events]") {
  for (const auto& [reason, name] : kEndReasonNames.entries) {
    CHECK(to_string(reason) == name);
    CHECK(parse_end_reason(end_label(reason)) == reason);
    CHECK(parse_end_reason(end_label(reason, "why")) == reason);
  }
  // The labels the engine has always written.
  CHECK(end_label(EndReason::Finished) == "finished");
  CHECK(end_label(EndReason::Horizon) == "horizon");
  CHECK(end_label(EndReason::Rejected, "") == "rejected: ");
  CHECK(end_label(EndReason::Unfinished, "no work left to run") ==
        "unfinished: no work left to run");
  CHECK_FALSE(parse_end_reason("finishedish").has_value());
  CHECK_FALSE(parse_end_reason("").has_value());
}
