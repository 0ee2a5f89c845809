// Job files (JSONL), job objects, arrivals CSVs, validation, and the closed-loop schedule.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/workload.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gpumux::JobKind;
using gpumux::TimeNs;

namespace {

const std::string kTrain =
    R"({"name": "t1", "kind": "training", "model": "resnet50", "batch": 16, "arrival_s": 12.5, )"
    R"("iterations": 100})";

// Writes `text` as a JSONL file and returns the error message of loading it.
std::string jsonl_error(const std::string& text, fs::path* written = nullptr) {
  const auto root = fx::make_temp_dir("jobs_err");
  const auto path = root / "w.jsonl";
  fx::write_file(path, text);
  if (written) *written = path;
  try {
    (void)gpumux::load_jobs_jsonl(path, root);
  } catch (const gpumux::TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

// The message of a one-line file, with the "<file>: " prefix checked and removed.
std::string line_error(const std::string& text) {
  fs::path path;
  const std::string msg = jsonl_error(text, &path);
  const std::string prefix = path.string() + ": ";
  if (msg.rfind(prefix, 0) != 0) return "(file not named) " + msg;
  return msg.substr(prefix.size());
}

}  // namespace

TEST_CASE("A good job file: comments, blank lines, both kinds, request files", "[workload]") {
  const auto root = fx::make_temp_dir("jobs_ok");
  fx::write_file(root / "traces/arrivals/a.csv", "arrival_s,other\n0.0,1\n0.5,2\n1.5,3\n3.0,4\n");
  fx::write_file(root / "w.jsonl",
                 "# a comment line\n" + kTrain + "\n\n" +
                     R"({"name": "s1", "kind": "inference", "model": "bert_base", "batch": 4, )"
                     R"("arrival_s": 13.0, "requests": [13.0, 13.25, 20], "slo_ms": 50, )"
                     R"("priority": 2, "weight": 0.5, "tenant": "team-a"})"
                     "\n" +
                     R"({"name": "s2", "kind": "inference", "model": "m", "batch": 1, )"
                     R"("arrival_s": 14, "requests": {"file": "traces/arrivals/a.csv", )"
                     R"("offset_s": 20, "time_scale": 2, "limit": 3}, "expected_duration_s": 9})"
                     "\r\n");
  const auto jobs = gpumux::load_jobs_jsonl(root / "w.jsonl", root);
  REQUIRE(jobs.size() == 3);
  const auto& t = jobs[0];
  CHECK(t.name == "t1");
  CHECK(t.kind == JobKind::Training);
  CHECK(t.model == "resnet50");
  CHECK(t.batch == 16);
  CHECK(t.arrival_ns == 12'500'000'000);
  CHECK(t.iterations == 100);
  CHECK(t.optimizer == gpumux::Optimizer::Momentum);  // the default
  CHECK(t.tenant == "t1");                            // defaults to the name
  CHECK(t.weight == 1.0);
  CHECK(t.priority == 0);
  const auto& s1 = jobs[1];
  CHECK(s1.kind == JobKind::Inference);
  CHECK(s1.requests_ns == std::vector<TimeNs>{13'000'000'000, 13'250'000'000, 20'000'000'000});
  CHECK(s1.slo_ns == 50'000'000);
  CHECK(s1.priority == 2);
  CHECK(s1.weight == 0.5);
  CHECK(s1.tenant == "team-a");
  // offset 20 s + 2 x (0, 0.5, 1.5); the limit drops the fourth row
  CHECK(jobs[2].requests_ns == std::vector<TimeNs>{20'000'000'000, 21'000'000'000, 23'000'000'000});
  CHECK(jobs[2].expected_duration_ns == 9'000'000'000);
  CHECK_NOTHROW(gpumux::validate_jobs(jobs, "w.jsonl"));
  CHECK(gpumux::to_string(JobKind::Inference) == "inference");
}

TEST_CASE("Job file errors name the file, the line and the key", "[workload]") {
  SECTION("malformed JSON") {
    CHECK_THAT(line_error(kTrain + "\n{\"name\": \"x\",\n"), Contains("line 2: invalid JSON"));
  }
  SECTION("unknown key") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "training", "model": "m", "batch": 1, )"
                          R"("arrival_s": 0, "iterations": 5, "colour": "red"})"),
               Equals("line 1: colour: unknown key"));
  }
  SECTION("wrong type") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "training", "model": "m", "batch": "8", )"
                          R"("arrival_s": 0, "iterations": 5})"),
               Equals("line 1: batch: expected an integer, got string"));
  }
  SECTION("negative arrival") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "training", "model": "m", "batch": 1, )"
                          R"("arrival_s": -1, "iterations": 5})"),
               Equals("line 1: arrival_s: must be >= 0, got -1"));
  }
  SECTION("unsorted arrivals") {
    const std::string a = R"({"name": "a", "kind": "training", "model": "m", "batch": 1, )"
                          R"("arrival_s": 1, "iterations": 5})";
    const std::string b = R"({"name": "b", "kind": "training", "model": "m", "batch": 1, )"
                          R"("arrival_s": 13.5, "iterations": 5})";
    const std::string c = R"({"name": "c", "kind": "training", "model": "m", "batch": 1, )"
                          R"("arrival_s": 12.0, "iterations": 5})";
    CHECK_THAT(line_error(a + "\n" + b + "\n" + c + "\n"),
               Equals("line 3: arrival_s: arrivals must be non-decreasing (12.0 after 13.5)"));
  }
  SECTION("missing requests") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "inference", "model": "m", "batch": 1, )"
                          R"("arrival_s": 0})"),
               Equals("line 1: requests: missing required key"));
  }
  SECTION("request before the arrival") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "inference", "model": "m", "batch": 1, )"
                          R"("arrival_s": 5, "requests": [6, 4]})"),
               Contains("line 1: requests[1]: request at 4.0 s is before arrival_s (5.0)"));
  }
  SECTION("unsorted requests") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "inference", "model": "m", "batch": 1, )"
                          R"("arrival_s": 0, "requests": [2, 1]})"),
               Contains("line 1: requests[1]: requests must be sorted (1.0 after 2.0)"));
  }
  SECTION("key of the other kind") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "inference", "model": "m", "batch": 1, )"
                          R"("arrival_s": 0, "requests": [1], "iterations": 3})"),
               Equals("line 1: iterations: not allowed for an inference job"));
  }
  SECTION("bad optimizer") {
    CHECK_THAT(
        line_error(R"({"name": "a", "kind": "training", "model": "m", "batch": 1, )"
                   R"("arrival_s": 0, "iterations": 3, "optimizer": "lamb"})"),
        Contains("line 1: optimizer: unknown value 'lamb'; valid values: sgd, momentum, adam"));
  }
  SECTION("bad request file options") {
    CHECK_THAT(line_error(R"({"name": "a", "kind": "inference", "model": "m", "batch": 1, )"
                          R"("arrival_s": 0, "requests": {"file": "x.csv", "time_scale": 0}})"),
               Contains("line 1: requests.time_scale: must be > 0"));
    CHECK_THAT(line_error(R"({"name": "a", "kind": "inference", "model": "m", "batch": 1, )"
                          R"("arrival_s": 0, "requests": {"file": "missing.csv"}})"),
               Contains("line 1: requests.file: "));
  }
  SECTION("duplicate names") {
    CHECK_THAT(line_error(kTrain + "\n" + kTrain + "\n"),
               Equals("line 2: name: duplicate job name 't1' (first on line 1)"));
  }
  SECTION("a line that is not an object") {
    CHECK_THAT(line_error("[1, 2]\n"), Equals("line 1: expected an object, got array"));
  }
}

TEST_CASE("A missing job file is an error naming it", "[workload]") {
  CHECK_THROWS_WITH(gpumux::load_jobs_jsonl("/nonexistent/jobs.jsonl", ""),
                    Equals("/nonexistent/jobs.jsonl: no such file (cannot open it)"));
}

TEST_CASE("parse_job prefixes config key paths", "[workload]") {
  auto j = nlohmann::json::parse(kTrain);
  j["batch"] = 0;
  CHECK_THROWS_WITH(gpumux::parse_job(j, "cfg.json", "workload.jobs[2]", ""),
                    Equals("cfg.json: workload.jobs[2].batch: must be an integer in [1, 1048576], "
                           "got 0"));
  CHECK_THROWS_AS(gpumux::parse_job(j, "cfg.json", "workload.jobs[2]", ""), gpumux::TraceError);
  j["batch"] = 2;
  j["optimizer"] = "adam";
  const auto job = gpumux::parse_job(j, "cfg.json", "workload.jobs[2]", "");
  CHECK(job.optimizer == gpumux::Optimizer::Adam);
}

TEST_CASE("Arrivals CSV: header, numbers, order", "[workload]") {
  const auto dir = fx::make_temp_dir("csv");
  fx::write_file(dir / "ok.csv", "arrival_s\n0.031\n0.043\n\n0.116\n");
  CHECK(gpumux::load_arrivals_csv(dir / "ok.csv") == std::vector<double>{0.031, 0.043, 0.116});
  fx::write_file(dir / "header.csv", "time,x\n1,2\n");
  CHECK_THROWS_WITH(gpumux::load_arrivals_csv(dir / "header.csv"),
                    Contains("line 1: no arrival_s column in the header 'time,x'"));
  fx::write_file(dir / "order.csv", "arrival_s\n1.0\n0.5\n");
  CHECK_THROWS_WITH(gpumux::load_arrivals_csv(dir / "order.csv"),
                    Contains("line 3: arrival_s: arrivals must be non-decreasing (0.5 after 1.0)"));
  fx::write_file(dir / "text.csv", "arrival_s,x\nsoon,1\n");
  CHECK_THROWS_WITH(gpumux::load_arrivals_csv(dir / "text.csv"),
                    Contains("line 2: arrival_s: expected a number, got 'soon'"));
  CHECK_THROWS_AS(gpumux::load_arrivals_csv(dir / "none.csv"), gpumux::TraceError);
  // The real traces load.
  const auto real = gpumux::load_arrivals_csv(std::filesystem::path(GPUMUX_SOURCE_DIR) /
                                              "traces/arrivals/azure_llm_2023_code.csv");
  CHECK(real.size() > 1000);
}

TEST_CASE("validate_jobs checks names, order and requests", "[workload]") {
  gpumux::JobSpec a;
  a.name = "a";
  a.iterations = 1;
  gpumux::JobSpec b = a;
  CHECK_THROWS_WITH(gpumux::validate_jobs({a, b}, "f"), Contains("duplicate job name 'a'"));
  b.name.assign(1, 'b');  // not = "b": a GCC 12 -Wrestrict false positive
  b.arrival_ns = -1;
  CHECK_THROWS_WITH(gpumux::validate_jobs({a, b}, "f"), Contains("sorted by arrival"));
  b.arrival_ns = 5;
  b.kind = JobKind::Inference;
  CHECK_THROWS_WITH(gpumux::validate_jobs({a, b}, "f"), Contains("needs requests"));
  b.requests_ns = {4};
  CHECK_THROWS_WITH(gpumux::validate_jobs({a, b}, "f"), Contains("before the job arrives"));
  b.requests_ns.clear();
  b.closed_loop.enabled = true;
  CHECK_NOTHROW(gpumux::validate_jobs({a, b}, "f"));
}

TEST_CASE("ClosedLoop::next_send_time follows the on/off schedule", "[workload]") {
  gpumux::ClosedLoop c;
  c.enabled = true;
  c.start_ns = 1000;
  c.on_ns = 2000;   // on [1000, 3000), [6000, 8000), ...
  c.off_ns = 3000;  // off [3000, 6000), ...
  c.end_ns = 10000;
  CHECK(c.next_send_time(0) == 1000);     // before the start
  CHECK(c.next_send_time(2500) == 2500);  // inside the first on phase
  CHECK(c.next_send_time(3000) == 6000);  // off phase begins exactly at 3000
  CHECK(c.next_send_time(3500) == 6000);  // off: wait for the next on phase
  CHECK(c.next_send_time(6100) == 6100);
  CHECK(c.next_send_time(8000) == gpumux::kTimeNever);  // next on phase (11000) is past the end
  CHECK(c.next_send_time(9999) == gpumux::kTimeNever);
  CHECK(c.next_send_time(gpumux::kTimeNever) == gpumux::kTimeNever);

  gpumux::ClosedLoop always;  // on_ns == 0: always on, no end
  always.start_ns = 500;
  CHECK(always.next_send_time(0) == 500);
  CHECK(always.next_send_time(123456789) == 123456789);
  always.end_ns = 1000;
  CHECK(always.next_send_time(999) == 999);
  CHECK(always.next_send_time(1000) == gpumux::kTimeNever);
}
