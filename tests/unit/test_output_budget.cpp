// The output budget (output_budget.hpp): its default from the free space, the bytes it counts
// (what reaches the disk: compressed bytes when compression is on), and a write past it.
#include <catch2/catch.hpp>

#include <sys/statvfs.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/output_budget.hpp"
#include "gpumux/io/result_writer.hpp"
#include "gpumux/io/run_fingerprint.hpp"
#include "unit_fixtures.hpp"

namespace fs = std::filesystem;
using namespace gpumux;

namespace {

fs::path fresh_dir(const std::string& tag) {
  std::random_device rd;
  fs::path d = fs::temp_directory_path() / ("gpumux_ob_" + tag + "_" + std::to_string(rd()));
  fs::create_directories(d);
  return d;
}

std::uint64_t bytes_in(const fs::path& dir) {
  std::uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += fs::file_size(e.path());
  return n;
}

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

}  // namespace

TEST_CASE("the default budget is the free space less 5% of it", "[unit][budget]") {
  CHECK(OutputBudget::default_limit(100 * kGiB) == 95 * kGiB);
  CHECK(OutputBudget::default_limit(20) == 19);  // 5% of 20 bytes is 1 byte
  CHECK(OutputBudget::default_limit(19) == 19);  // 0.95 bytes of margin rounds down to 0
  CHECK(OutputBudget::default_limit(0) == 0);
  const std::uint64_t all = ~std::uint64_t{0};
  CHECK(OutputBudget::default_limit(all) < all);
  CHECK(OutputBudget::default_limit(all) > all / 100 * 94);
}

TEST_CASE("free space is measured on the nearest existing folder", "[unit][budget]") {
  const fs::path dir = fresh_dir("free");
  struct statvfs st {};
  REQUIRE(statvfs(dir.c_str(), &st) == 0);
  const auto free = OutputBudget::free_bytes(dir / "not" / "yet" / "there");
  REQUIRE(free.has_value());
  // Measured twice a moment apart: other processes may write in between; same order.
  const double expected = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
  CHECK(static_cast<double>(*free) == Approx(expected).epsilon(0.05).margin(64 << 20));
  const OutputBudget b = OutputBudget::for_results(dir / "run", std::nullopt);
  CHECK(b.limit() <= *free);
  CHECK(b.source().find("the default max_output_gib") == 0);
  CHECK(b.source().find("95% of the") != std::string::npos);
}

TEST_CASE("max_output_gib converts to bytes rounded up", "[unit][budget]") {
  CHECK(OutputBudget::gib_to_bytes(1) == kGiB);
  CHECK(OutputBudget::gib_to_bytes(0.0001) == 107375);  // 107,374.18 bytes
  CHECK(OutputBudget::gib_to_bytes(1e-12) == 1);
  CHECK(OutputBudget::gib_to_bytes(OutputBudget::kMaxGib) == kGiB * 1024 * 1024);
  const OutputBudget b = OutputBudget::for_results("/nonexistent", 107375);
  CHECK(b.limit() == 107375);
  CHECK(b.source() == "max_output_gib 0.0001 GiB");
}

TEST_CASE("a budget takes what fits and refuses the rest whole", "[unit][budget]") {
  OutputBudget b(100, "max_output_gib test");
  CHECK(b.take(60));
  CHECK_FALSE(b.take(41));
  CHECK(b.used() == 60);
  CHECK(b.take(40));
  CHECK_FALSE(b.take(1));
  CHECK_THROWS_AS(b.charge(1, "events.jsonl", "/r/x"), OutputBudgetExceeded);
  try {
    b.charge(1, "events.jsonl", "/r/x");
  } catch (const OutputBudgetExceeded& e) {
    CHECK(std::string(e.what()).find("writing events.jsonl of /r/x would pass max_output_gib "
                                     "test (100 of 100 bytes written)") != std::string::npos);
  }
}

TEST_CASE("the writer charges every byte on disk, compressed bytes when compressed",
          "[unit][budget]") {
  const fs::path base = fresh_dir("charge");
  const fs::path repo = fresh_dir("repo");
  const std::string megabyte(std::size_t{1} << 20, 'e');
  SECTION("gzip: 1 MiB of one byte compresses to about 1 KiB, within a 16 KiB budget") {
    ResultWriter w(base / "run", repo, "--out", false, 16384);
    ByteSink& file = w.open_stream("events.jsonl.gz");
    auto gz = make_compressor(Compression::Gzip, file);
    gz->write(megabyte.data(), megabyte.size());
    gz->finish();
    w.write("summary.json", "{}\n");
    w.commit(nlohmann::json::object());
    const std::uint64_t on_disk = bytes_in(base / "run");
    CHECK(fs::file_size(base / "run" / "events.jsonl.gz") < 16384);
    // Every file (the marker too) and the partial marker's list of names (removed at commit).
    const std::uint64_t listed = std::string("events.jsonl.gz\nsummary.json\n").size();
    CHECK(w.budget().used() == on_disk + listed);
  }
  SECTION("zstd: the same") {
    ResultWriter w(base / "run-zst", repo, "--out", false, 16384);
    ByteSink& file = w.open_stream("events.jsonl.zst");
    auto zst = make_compressor(Compression::Zstd, file);
    zst->write(megabyte.data(), megabyte.size());
    zst->finish();
    w.commit(nlohmann::json::object());
    CHECK(w.budget().used() ==
          bytes_in(base / "run-zst") + std::string("events.jsonl.zst\n").size());
  }
  SECTION("uncompressed, the same megabyte is refused before it is written") {
    {
      ResultWriter w(base / "run-raw", repo, "--out", false, 16384);
      ByteSink& file = w.open_stream("events.jsonl");
      CHECK_THROWS_WITH(file.write(megabyte.data(), megabyte.size()),
                        Catch::Contains("writing events.jsonl of " + (base / "run-raw").string()) &&
                            Catch::Contains("max_output_gib"));
      CHECK(fs::file_size(w.temporary_dir() / "events.jsonl") == 0);
    }
    CHECK_FALSE(fs::exists(base / "run-raw"));
    CHECK(fs::is_empty(base));
  }
  SECTION("a file written whole is refused when it does not fit, and so is the marker") {
    ResultWriter w(base / "run-file", repo, "--out", false, 100);
    CHECK_THROWS_WITH(w.write("summary.json", std::string(200, 'x')),
                      Catch::Contains("writing summary.json of"));
    ResultWriter small(base / "run-marker", repo, "--out", false, 40);
    small.write("a.txt", "x");  // 6 bytes of name list, 1 byte of file
    CHECK_THROWS_WITH(small.commit(nlohmann::json::object()),
                      Catch::Contains("writing .gpumux-result.json of"));
  }
  fs::remove_all(base);
  fs::remove_all(repo);
}

TEST_CASE("max_output_gib is read from the config and is not part of the fingerprint",
          "[unit][budget][config]") {
  const fs::path root = fixtures::make_repo("budget_cfg");
  const std::string base = R"({"name": "b", "devices": [{"profile": "gpu-a"}],
    "policy": {"name": "exclusive"}, "workload": {"jobs": [{"name": "t", "kind": "training",
    "model": "small", "batch": 1, "arrival_s": 0, "iterations": 1}]}})";
  const ExperimentConfig plain = parse_experiment_text(base, "cfg.json", {}, root);
  CHECK_FALSE(plain.max_output_bytes.has_value());
  const ExperimentConfig limited =
      parse_experiment_text(base, "cfg.json", {"max_output_gib=0.5"}, root);
  REQUIRE(limited.max_output_bytes.has_value());
  CHECK(*limited.max_output_bytes == kGiB / 2);
  // A resumed sweep with a larger budget keeps its complete points.
  CHECK(run_fingerprint(limited, root) == run_fingerprint(plain, root));
  CHECK_THROWS_WITH(parse_experiment_text(base, "cfg.json", {"max_output_gib=0"}, root),
                    Catch::Contains("cfg.json: max_output_gib: "));
}

TEST_CASE("the default budget re-measures the disk and keeps its margin free", "[unit][budget]") {
  // A disk shared with other writers: its free space is whatever `free` says when measured.
  std::optional<std::uint64_t> free = 1000;
  int measured = 0;
  FreeSpaceWatch watch{[&] {
                         ++measured;
                         return free;
                       },
                       100, 10, "/disk"};
  OutputBudget b(10'000, "the default", watch);
  CHECK(b.take(50));  // 50 >= 10: measured; 1000 - 50 >= 100
  CHECK(measured == 1);
  CHECK(b.take(5));  // 55 < 50 + 10: not measured
  CHECK(measured == 1);
  free = 140;         // another writer filled the disk
  CHECK(b.take(30));  // measured: 140 - 30 = 110 >= 100
  CHECK(measured == 2);
  CHECK_FALSE(b.take(50));  // measured: 140 - 50 = 90 < 100; nothing taken
  CHECK(measured == 3);
  CHECK(b.used() == 85);
  try {
    b.charge(50, "events.jsonl", "/disk/res");
    FAIL("no throw");
  } catch (const OutputBudgetExceeded& e) {
    const std::string what = e.what();
    CHECK(what.find("writing events.jsonl of /disk/res would leave less than the") !=
          std::string::npos);
    CHECK(what.find("kept free under /disk") != std::string::npos);
  }
  free = std::nullopt;  // unknown: not refused on the disk's account
  CHECK(b.take(50));
  CHECK(b.used() == 135);
}

TEST_CASE("a watched budget measures every eighth of its margin, within 64 KiB and 64 MiB",
          "[unit][budget]") {
  CHECK(OutputBudget::watch_interval(0) == 64 << 10);
  CHECK(OutputBudget::watch_interval(8 << 20) == 1 << 20);
  CHECK(OutputBudget::watch_interval(100 * kGiB) == 64 << 20);
}
