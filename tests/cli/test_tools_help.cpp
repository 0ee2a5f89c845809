// Every script in traces/tools answers --help: exit 0, some text, and no file under traces/
// written (several scripts regenerate committed files when run without arguments).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "cli_harness.hpp"

namespace fs = std::filesystem;

namespace {

// Every regular file under traces/ with its last write time.
std::map<fs::path, fs::file_time_type> stamps(const fs::path& dir) {
  std::map<fs::path, fs::file_time_type> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().string().find("__pycache__") == std::string::npos) {
      out[e.path()] = e.last_write_time();
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every traces/tools script answers --help without side effects", "[cli][tools]") {
  const fs::path traces = fs::path(GPUMUX_SOURCE_DIR) / "traces";
  const auto before = stamps(traces);
  int scripts = 0;
  for (const auto& e : fs::directory_iterator(traces / "tools")) {
    if (e.path().extension() != ".py") continue;
    ++scripts;
    DYNAMIC_SECTION(e.path().filename().string()) {
      const auto o = cli_test::gpumux_shell("PYTHONDONTWRITEBYTECODE=1 python3 '" +
                                            e.path().string() + "' --help");
      INFO(o.output);
      CHECK(o.exit_code == 0);
      CHECK(o.output.size() > 40);
      CHECK(o.output.find("Traceback") == std::string::npos);
    }
  }
  CHECK(scripts >= 13);
  CHECK(stamps(traces) == before);
}
