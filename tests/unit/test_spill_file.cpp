// spill_file.hpp: the import's temporary file takes no name in its folder, not even for a
// moment (O_TMPFILE where the file system has it), and holds what was appended.
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <random>
#include <string>

#include "../../core/io/src/spill_file.hpp"

namespace fs = std::filesystem;

TEST_CASE("a spill file never takes a name in its folder", "[trace_import][spill]") {
  const fs::path dir =
      fs::temp_directory_path() / ("gpumux_spill_" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const int probe = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (probe < 0) {
    WARN("no O_TMPFILE on " << dir << ": the file is named for a moment there (the fallback)");
    fs::remove_all(dir);
    return;
  }
  ::close(probe);
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  REQUIRE(watch >= 0);
  REQUIRE(inotify_add_watch(watch, dir.c_str(), IN_CREATE | IN_DELETE | IN_MOVED_TO) >= 0);
  {
    gpumux::trace_import::SpillFile spill(dir, "a test", "trace.csv");
    const std::string text = "arrivals";
    spill.append(text.data(), text.size());
    char back[8] = {};
    CHECK(spill.read_at(0, back, sizeof back) == 8);
    CHECK(std::string(back, 8) == text);
    CHECK(spill.size() == 8);
  }
  // Before, mkstemp created a named .gpumux-import-XXXXXX and unlinked it: two events.
  char events[4096];
  const ssize_t n = ::read(watch, events, sizeof events);
  const int err = errno;
  CHECK(n < 0);
  CHECK(err == EAGAIN);
  ::close(watch);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}
