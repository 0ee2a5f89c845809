// Result folders (result_dir.hpp) and the SHA-256 behind run fingerprints: what gpumux accepts
// as its own, what it refuses, and that it deletes only files it wrote.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/result_dir.hpp"
#include "gpumux/io/result_writer.hpp"
#include "gpumux/io/sha256.hpp"

namespace fs = std::filesystem;
using namespace gpumux;

namespace {

fs::path fresh_dir(const std::string& tag) {
  std::random_device rd;
  fs::path d = fs::temp_directory_path() / ("gpumux_rd_" + tag + "_" + std::to_string(rd()));
  fs::create_directories(d);
  return d;
}

void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// A pid that no longer exists: a child that has exited and been reaped.
std::string dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return std::to_string(pid);
}

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string read(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("sha256 matches the FIPS 180-4 test vectors", "[unit][result_dir]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding spills into a second block.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("safe result names are one plain path component", "[unit][result_dir]") {
  for (const char* ok : {"default", "fig5_resnet152", "v100-pcie3x16", "0.5", "a.b"}) {
    CHECK(is_safe_result_name(ok));
  }
  for (const char* bad : {"", ".", "..", ".hidden", "a/b", "../x", "a b", "a\\b", "x\n"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(is_safe_result_name(bad));
  }
  CHECK(is_safe_result_name(std::string(128, 'a')));
  CHECK_FALSE(is_safe_result_name(std::string(129, 'a')));
}

TEST_CASE("a written folder is gpumux's, adding a file makes it foreign", "[unit][result_dir]") {
  const fs::path base = fresh_dir("own");
  const fs::path repo = fresh_dir("repo");
  const fs::path dir = base / "run";
  CHECK(inspect_result_dir(dir).state == ResultDirState::Absent);
  {
    ResultWriter w(dir, repo, "--out", false);
    CHECK(fs::exists(w.temporary_dir() / kPartialMarkerFile));
    CHECK_FALSE(fs::exists(dir));  // nothing under the final name until commit
    w.write("summary.json", "{}\n");
    w.write("events.jsonl", [](std::ostream& out) { out << "{\"t\":1}\n"; });
    w.commit({{"config_sha256", "abc"}});
  }
  ResultDirInfo info = inspect_result_dir(dir);
  REQUIRE(info.state == ResultDirState::GpumuxResult);
  CHECK((*info.marker)["config_sha256"] == "abc");
  CHECK((*info.marker)["files"] == nlohmann::json({"summary.json", "events.jsonl"}));
  CHECK_FALSE(fs::exists(dir / kPartialMarkerFile));

  // Without permission to replace: refused, naming the origin, the path and --force.
  try {
    ResultWriter again(dir, repo, "--out", false);
    FAIL("expected a refusal");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("--out: " + dir.string()) == 0);
    CHECK(std::string(e.what()).find("--force") != std::string::npos);
  }

  // Replaced with permission: the new content, and no set-aside folder left behind.
  {
    ResultWriter w(dir, repo, "--out", true);
    w.write("summary.json", "{\"new\":1}\n");
    w.commit({{"config_sha256", "def"}});
  }
  CHECK(read(dir / "summary.json") == "{\"new\":1}\n");
  CHECK_FALSE(fs::exists(dir / "events.jsonl"));  // the earlier result's own file went with it
  for (const auto& e : fs::directory_iterator(base)) CHECK(e.path() == dir);

  put(dir / "notes.txt", "mine");
  info = inspect_result_dir(dir);
  CHECK(info.state == ResultDirState::Foreign);
  CHECK(info.foreign == std::vector<std::string>{"notes.txt"});
  CHECK_THROWS_AS(ResultWriter(dir, repo, "--out", true), UsageError);
  CHECK(read(dir / "notes.txt") == "mine");
}

TEST_CASE("an abandoned writer leaves nothing, and never a folder under the final name",
          "[unit][result_dir]") {
  const fs::path base = fresh_dir("abandon");
  const fs::path repo = fresh_dir("repo");
  {
    ResultWriter w(base / "run", repo, "--out", false);
    w.write("summary.json", "{}");
    // destroyed without commit(), as when the run throws
  }
  CHECK(fs::is_empty(base));
}

TEST_CASE("result paths may not hold the repository or sit in its source folders",
          "[unit][result_dir]") {
  const fs::path repo = fresh_dir("repo");
  fs::create_directories(repo / "traces" / "models");
  auto refused = [&](const fs::path& p) {
    try {
      check_result_path(normal_result_path(p, repo), repo, "x.json: out_dir");
    } catch (const UsageError& e) {
      return std::string(e.what()).rfind("x.json: out_dir: ", 0) == 0;
    }
    return false;
  };
  CHECK(refused("."));
  CHECK(refused(".."));
  CHECK(refused("/"));
  CHECK(refused("traces"));
  CHECK(refused("traces/models/x"));
  CHECK(refused("results/../traces"));
  CHECK(refused(".git/x"));
  CHECK_FALSE(refused("results/x"));
  CHECK_FALSE(refused("results/traces"));  // a folder named traces under results/ is fine
  CHECK(normal_result_path("results/x/", repo) == repo / "results" / "x");
}

TEST_CASE("stale temporaries are removed only when their process is gone and only gpumux's files",
          "[unit][result_dir]") {
  const fs::path base = fresh_dir("stale");
  const std::string stem = ".run.gpumux-tmp." + dead_pid();
  const fs::path dead = base / (stem + ".0." + host());
  put(dead / kPartialMarkerFile, "summary.json\n");
  put(dead / "summary.json", "{}");
  const fs::path dead_with_user_file = base / (stem + ".1." + host());
  put(dead_with_user_file / kPartialMarkerFile, "summary.json\n");
  put(dead_with_user_file / "summary.json", "{}");
  put(dead_with_user_file / "added-later.txt", "keep");
  const fs::path alive = base / (".run.gpumux-tmp." + std::to_string(getpid()) + ".9." + host());
  put(alive / kPartialMarkerFile, "");
  const fs::path other_host = base / (stem + ".2.some-other-host");
  put(other_host / kPartialMarkerFile, "");

  CHECK(remove_stale_temporaries(base / "run") == 1);
  CHECK_FALSE(fs::exists(dead));
  CHECK(read(dead_with_user_file / "added-later.txt") == "keep");
  CHECK_FALSE(fs::exists(dead_with_user_file / "summary.json"));
  CHECK(fs::exists(alive));
  CHECK(fs::exists(other_host));
}

TEST_CASE("cleanup skips folders a live writer holds, odd pids, and puts a set-aside result back",
          "[unit][result_dir]") {
  const fs::path base = fresh_dir("lock");
  const fs::path repo = fresh_dir("repo");
  const std::string dead = dead_pid();

  // A live writer whose folder carries a dead pid's name (as in another PID namespace): its
  // lock protects it.
  ResultWriter live(base / "run", repo, "--out", false);
  const fs::path renamed = base / (".run.gpumux-tmp." + dead + ".0." + host());
  fs::rename(live.temporary_dir(), renamed);
  CHECK(remove_stale_temporaries(base / "run") == 0);
  CHECK(fs::exists(renamed / kPartialMarkerFile));

  // Names whose pid is not a plain positive number are not gpumux's.
  for (const char* odd : {"-1", "0", "+5", "5x", ""}) {
    const fs::path d = base / (".run.gpumux-tmp." + std::string(odd) + ".0." + host());
    put(d / kPartialMarkerFile, "");
  }
  CHECK(remove_stale_temporaries(base / "run") == 0);

  // An earlier result set aside by a replace that died half-way is put back.
  const fs::path old = base / (".other.gpumux-old." + dead + ".0." + host());
  put(old / "summary.json", "{}");
  put(old / kResultMarkerFile, R"({"gpumux_result": 1, "files": ["summary.json"]})");
  remove_stale_temporaries(base / "other");
  CHECK(inspect_result_dir(base / "other").state == ResultDirState::GpumuxResult);
  CHECK_FALSE(fs::exists(old));
  fs::remove_all(renamed);
}
