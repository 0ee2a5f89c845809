// `gpumux trace import` against hostile conditions, through the real binary: a kept cell with a
// line break replays as the rows it came from; a full disk leaves the earlier import (data and
// .SOURCE) as it was and no orphan .SOURCE; a .SOURCE that describes other data is refused
// when the CSV is replayed; memory does not grow with the input; running out of memory is a
// named error, never a bare std::bad_alloc.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <optional>

#include "cli_harness.hpp"

using namespace cli_test;

namespace {

/// Runs `script` in a private mount namespace (unshare -rm), as test_output_safety.cpp does;
/// nullopt where the kernel forbids it.
std::optional<Outcome> in_mount_namespace(const std::string& name, const std::string& script) {
  if (std::system("unshare -rm true > /dev/null 2>&1") != 0) return std::nullopt;
  const fs::path file = write(name, script);
  return gpumux_shell("unshare -rm sh " + quoted(file));
}

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

/// Peak resident memory (KiB) of one `gpumux trace import --sort` child (wait4's ru_maxrss),
/// which must exit 0; `no_extra` keeps no column but arrival_s.
long import_peak_kib(const fs::path& in, const fs::path& out, bool no_extra) {
  fs::remove(out);
  fs::remove(fs::path(out.string() + ".SOURCE"));
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::string in_s = in.string(), out_s = out.string();
    std::vector<const char*> argv = {GPUMUX_BINARY, "trace",       "import",        in_s.c_str(),
                                     "--out",       out_s.c_str(), "--time-column", "ts",
                                     "--sort",      "-q"};
    if (no_extra) argv.push_back("--no-extra");
    argv.push_back(nullptr);
    execv(GPUMUX_BINARY, const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  REQUIRE(wait4(child, &status, 0, &usage) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return usage.ru_maxrss;
}

/// A CSV of `rows` requests, in reverse time order (so --sort has all of them to sort), with a
/// 40-byte note per row.
std::string reversed_csv(int rows) {
  std::string out = "ts,app,note\n";
  out.reserve(static_cast<std::size_t>(rows) * 64);
  for (int k = rows; k > 0; --k) {
    out += std::to_string(k) + ".25,app" + std::to_string(k % 97) +
           ",\"a note, with a comma and a \"\"quote\"\"\"\n";
  }
  return out;
}

}  // namespace

TEST_CASE("trace import: a kept cell with a line break replays as its own row",
          "[cli][trace_import]") {
  // Two requests; the first row's note holds a line break followed by "1,", which a reader
  // that splits on lines takes for a third request at 1 s.
  const fs::path src = write("rt/two.csv", "t,note\n0,\"first\n1,\"\n1,second\n");
  const fs::path out = scratch() / "rt/two-out.csv";
  Outcome o =
      gpumux("trace import " + quoted(src) + " -o " + quoted(out) + " --time-column t --force");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  CHECK(slurp(out) == "arrival_s,note\n0.000000,\"first\n1,\"\n1.000000,second\n");
  o = gpumux("validate " + quoted(write("rt/replay.json", replay_config(out))));
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("service 'svc': 2 requests, 0.000-1.000 s") != std::string::npos);
}

TEST_CASE("trace import on a full disk keeps the earlier import and leaves no orphan",
          "[cli][trace_import][safety]") {
  // 3,000 rows (~150 KB of output) do not fit in a 64 KiB tmpfs; 3 rows do.
  const fs::path big = write("full/big.csv", reversed_csv(3000));
  const fs::path small = write("full/small.csv", "ts,note\n1,a\n2,b\n3,c\n");
  const fs::path mnt = scratch() / "full-mnt";
  fs::create_directories(mnt);
  const std::string bin = quoted(GPUMUX_BINARY);
  const std::string import = bin + " trace import ";
  const std::string tail = " --time-column ts --sort -q";
  const std::string script =
      "mount -t tmpfs -o size=64k tmpfs " + quoted(mnt) + " || exit 99\n" +
      // A first import that does not fit: nothing at all may be left.
      import + quoted(big) + " -o " + quoted(mnt / "first.csv") + tail +
      "\necho \"first rc=$?\"\nls -A " + quoted(mnt) + "\necho '--'\n" +
      // An earlier import that fits, then a --force import that does not.
      import + quoted(small) + " -o " + quoted(mnt / "kept.csv") + tail + " || exit 98\n" + "cp " +
      quoted(mnt / "kept.csv.SOURCE") + " " + quoted(scratch() / "full/kept.SOURCE.before") + "\n" +
      import + quoted(big) + " -o " + quoted(mnt / "kept.csv") + tail +
      " --force\necho \"force rc=$?\"\n" + "cat " + quoted(mnt / "kept.csv") + "\necho '--'\ncmp " +
      quoted(mnt / "kept.csv.SOURCE") + " " + quoted(scratch() / "full/kept.SOURCE.before") +
      " && echo 'source unchanged'\nls -A " + quoted(mnt) + "\n";
  const auto o = in_mount_namespace("full/script.sh", script);
  if (!o) {
    WARN("user namespaces are not available here: the ulimit -f case below covers the path");
  } else {
    INFO(o->output);
    REQUIRE(o->output.find("rc=99") == std::string::npos);
    REQUIRE(o->output.find("rc=98") == std::string::npos);
    // Exit 1 (a runtime failure), the disk named; the listing after it is empty.
    CHECK(o->output.find("first rc=1\n--\n") != std::string::npos);
    CHECK(o->output.find("No space left on device") != std::string::npos);
    // The earlier pair is untouched: the old rows, the old .SOURCE, nothing else.
    CHECK(o->output.find("force rc=1\narrival_s,note\n0.000000,a\n1.000000,b\n2.000000,c\n--\n"
                         "source unchanged\nkept.csv\nkept.csv.SOURCE\n") != std::string::npos);
  }
  // Everywhere: a file-size limit fails the data's write (EFBIG) the same way.
  const fs::path out = scratch() / "full/limited.csv";
  fs::remove(out);
  fs::remove(fs::path(out.string() + ".SOURCE"));
  Outcome r = gpumux("trace import " + quoted(small) + " -o " + quoted(out) + tail);
  REQUIRE(r.exit_code == 0);
  const std::string before_data = slurp(out), before_source = slurp(out.string() + ".SOURCE");
  r = gpumux("trace import " + quoted(big) + " -o " + quoted(out) + tail + " --force",
             "ulimit -f 64;");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find(out.string()) != std::string::npos);
  CHECK(slurp(out) == before_data);
  CHECK(slurp(out.string() + ".SOURCE") == before_source);
  for (const auto& e : fs::directory_iterator(out.parent_path())) {
    CHECK(e.path().filename().string().find("tmp") == std::string::npos);
  }
}

TEST_CASE("a .SOURCE that describes other data is refused when the CSV is replayed",
          "[cli][trace_import][safety]") {
  // What a crash between the data's rename and the .SOURCE's would leave: the new data beside
  // the earlier import's .SOURCE.
  const fs::path a = write("pair/a.csv", "t\n1\n2\n");
  const fs::path b = write("pair/b.csv", "t\n5\n6\n7\n");
  const fs::path out = scratch() / "pair/out.csv";
  const fs::path other = scratch() / "pair/other.csv";
  for (const auto& [src, dst] : {std::pair{a, out}, std::pair{b, other}}) {
    REQUIRE(
        gpumux("trace import " + quoted(src) + " -o " + quoted(dst) + " --time-column t --force")
            .exit_code == 0);
  }
  const fs::path cfg = write("pair/replay.json", replay_config(out));
  Outcome o = gpumux("validate " + quoted(cfg));
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  fs::copy_file(other, out, fs::copy_options::overwrite_existing);
  o = gpumux("validate " + quoted(cfg));
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find(out.string() + ": does not match " + out.string() + ".SOURCE") !=
        std::string::npos);
}

TEST_CASE("trace import: peak memory does not grow with the input", "[cli][trace_import]") {
  if (sanitized()) {
    WARN("address sanitizer: its quarantine holds freed memory, so peaks are not comparable");
    return;
  }
  // 2,000 and 200,000 rows (12 MB), all out of order: before streaming, the whole text, a
  // table of every cell and the output text were held at once (+80 MiB here).
  const fs::path small = write("mem/small.csv", reversed_csv(2000));
  const fs::path large = write("mem/large.csv", reversed_csv(200000));
  const fs::path out = scratch() / "mem/out.csv";
  for (const bool no_extra : {true, false}) {
    const long small_kib = import_peak_kib(small, out, no_extra);
    const long large_kib = import_peak_kib(large, out, no_extra);
    INFO("no_extra " << no_extra << ": small " << small_kib << " KiB, large " << large_kib
                     << " KiB");
    // What it must sort, 16 bytes per arrival (3.2 MB; the vector doubles to 4 MiB, 6 MiB
    // while it moves), within 8 MiB; the kept columns add at most the 16 MiB they may hold
    // in memory before they go to a temporary file.
    CHECK(large_kib < small_kib + (no_extra ? 8 : 24) * 1024);
  }
  CHECK(slurp(out).rfind("arrival_s,app,note\n0.000000,app1,\"a note, with a comma", 0) == 0);
}

TEST_CASE("trace import out of memory: exit 1 naming the file, not a bare std::bad_alloc",
          "[cli][trace_import]") {
  if (sanitized()) {
    WARN("address sanitizer: an address-space limit stops the sanitizer itself");
    return;
  }
  // The smallest address-space limit (4 MiB steps) under which a tiny import succeeds, then a
  // record of 12 MiB under that limit plus 6 MiB.
  const fs::path tiny = write("oom/tiny.csv", "ts\n1\n");
  const fs::path out = scratch() / "oom/out.csv";
  auto import_under = [&](const fs::path& in, long limit_kib) {
    return gpumux(
        "trace import " + quoted(in) + " -o " + quoted(out) + " --time-column ts --force -q",
        "ulimit -v " + std::to_string(limit_kib) + ";");
  };
  long lo = 4096, hi = 1 << 22;  // KiB: 4 MiB .. 4 GiB
  REQUIRE(import_under(tiny, hi).exit_code == 0);
  while (hi - lo > 4096) {
    const long mid = (lo + hi) / 2;
    (import_under(tiny, mid).exit_code == 0 ? hi : lo) = mid;
  }
  const fs::path huge = write("oom/huge.csv", "ts,note\n1," + std::string(12 << 20, 'x') + "\n");
  const Outcome o = import_under(huge, hi + 6 * 1024);
  INFO("limit " << hi << " KiB: " << o.output);
  CHECK(o.exit_code == 1);
  CHECK(o.output.find("error: " + huge.string() + ": out of memory") != std::string::npos);
  CHECK(o.output.find("std::bad_alloc") == std::string::npos);
}
