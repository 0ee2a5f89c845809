// The figure pipeline end to end: `plots/make_figures.py --quick` runs every sweep the figures
// need (quick sections: smaller traces, same code) with the gpumux binary under test, and
// writes every figure named by a plots/fig_*.py script as PNG, PDF and CSV.
// Needs /usr/bin/python3 with matplotlib (CI installs python3-matplotlib).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The FIGURE = "..." names of plots/fig_*.py.
std::set<std::string> expected_figures() {
  const std::regex figure_line(R"(^FIGURE\s*=\s*["']([^"']+)["'])");
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(GPUMUX_SOURCE_DIR) / "plots")) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("fig_", 0) != 0 || entry.path().extension() != ".py") continue;
    std::istringstream lines(read_file(entry.path()));
    std::smatch m;
    bool found = false;
    for (std::string line; std::getline(lines, line);) {
      if (std::regex_search(line, m, figure_line)) {
        names.insert(m[1].str());
        found = true;
        break;
      }
    }
    INFO(file);
    CHECK(found);
  }
  return names;
}

/// Data lines of a CSV (non-empty lines after the header).
int csv_rows(const std::string& text) {
  std::istringstream in(text);
  int rows = -1;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) ++rows;
  }
  return rows;
}

}  // namespace

TEST_CASE("make_figures --quick writes every figure as PNG, PDF and CSV", "[figures]") {
  const std::set<std::string> figures = expected_figures();
  REQUIRE(figures.size() >= 10);

  std::random_device rd;
  const fs::path tmp = fs::temp_directory_path() / ("gpumux_figures_" + std::to_string(rd()));
  fs::create_directories(tmp);
  const fs::path out = tmp / "out";
  const fs::path log = tmp / "log.txt";
  const std::string cmd = "cd '" + std::string(GPUMUX_SOURCE_DIR) +
                          "' && /usr/bin/python3 plots/make_figures.py --quick --gpumux '" +
                          GPUMUX_BINARY + "' --out '" + out.string() + "' --results '" +
                          (tmp / "results").string() + "' -j 2 > '" + log.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  INFO("make_figures output:\n" << read_file(log));
  REQUIRE(exit_code == 0);

  for (const std::string& name : figures) {
    INFO("figure " << name);
    const fs::path png = out / (name + ".png");
    const fs::path pdf = out / (name + ".pdf");
    const fs::path csv = out / (name + ".csv");
    REQUIRE(fs::exists(png));
    REQUIRE(fs::exists(pdf));
    REQUIRE(fs::exists(csv));
    const std::string png_bytes = read_file(png);
    CHECK(png_bytes.size() > 10000);  // a rendered figure, not an empty canvas
    CHECK(png_bytes.rfind(std::string("\x89PNG\r\n\x1a\n", 8), 0) == 0);
    const std::string pdf_bytes = read_file(pdf);
    CHECK(pdf_bytes.size() > 1000);
    CHECK(pdf_bytes.rfind("%PDF", 0) == 0);
    CHECK(csv_rows(read_file(csv)) >= 1);
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);  // the quick results are a few hundred MB of events at most
}
