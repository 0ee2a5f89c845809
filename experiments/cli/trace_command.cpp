// `gpumux trace import`: a request trace (CSV, TSV, JSONL) to an arrival CSV plus a
// <out>.SOURCE sidecar (traces/importing.md), streamed (trace_import.hpp) and written as a
// pair (import_output.hpp). Never replaces a file it did not write.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <new>
#include <sstream>

#include "commands.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/output.hpp"
#include "gpumux/io/sha256.hpp"
#include "gpumux/io/trace_import.hpp"
#include "gpumux/io/trace_sidecar.hpp"
#include "import_output.hpp"

namespace gpumux::cli {
namespace {

namespace fs = std::filesystem;
namespace ti = gpumux::trace_import;

// Refuses (UsageError) the input as the output, and what the --force rule forbids
// (check_import_target): anything trace import did not write, and anything at all without
// --force.
void check_target(const fs::path& in, const fs::path& out, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec) && fs::equivalent(in, out, ec)) {
    throw UsageError("--out: " + out.string() + " is the input file");
  }
  (void)check_import_target(out, force);
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::pair<std::string, std::string> split_assignment(const std::string& s, const char* flag) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(std::string(flag) + " " + s + ": expected COLUMN=VALUE");
  }
  return {s.substr(0, eq), s.substr(eq + 1)};
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string seconds(std::int64_t ns) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << static_cast<double>(ns) / 1e9;
  return o.str();
}

}  // namespace

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                         "OPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
    std::string q = plain ? a : "'";
    if (!plain) {
      for (const char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      q += '\'';
    }
    out += (out.empty() ? "" : " ") + q;
  }
  return out;
}

namespace {

struct Provenance {
  std::string origin_bytes;
  std::string origin_sha256;
  std::string data_sha256;
};

std::string sidecar_text(const TraceImportArgs& a, const ti::Preset* preset, const ti::Options& o,
                         const ti::Result& r, const Provenance& p) {
  std::error_code ec;
  const nlohmann::json build = build_info();
  std::ostringstream time;
  time << "column " << o.time_column << ", first value " << r.first_ns << " ns as read, span "
       << seconds(r.span_ns) << " s, origin "
       << (o.origin == ti::Origin::First ? "first row (starts at 0)" : "kept") << ", " << o.decimals
       << " decimals";
  const std::string rows =
      std::to_string(r.rows_read) + " read, " + std::to_string(r.rows_written) + " written" +
      (r.out_of_order > 0 ? ", " + std::to_string(r.out_of_order) + " out of order, sorted"
                          : std::string());
  // In kImportSidecarKeys' order, after the marker; every value escaped to one line.
  const std::pair<std::string_view, std::string> lines[] = {
      {"origin", a.input + " (" + fs::absolute(fs::path(a.input), ec).string() + ")"},
      {"origin_bytes", p.origin_bytes},
      {"origin_sha256", p.origin_sha256},
      {"data_sha256", p.data_sha256},
      {"licence", !a.licence.empty() ? a.licence
                  : preset           ? preset->licence
                                     : "unknown"},
      {"preset", preset ? preset->name : "none"},
      {"command", a.command},
      {"date", utc_now()},
      {"gpumux", build.value("version", "") + " (git " + build.value("git_revision", "") + ")"},
      {"rows", rows},
      {"time", time.str()},
  };
  std::string side(kImportSidecarMarker);
  side += '\n';
  for (const auto& [key, value] : lines) {
    side.append(key);
    side += ": ";
    side += escape_sidecar_value(value);
    side += '\n';
  }
  return side;
}

int trace_import(const TraceImportArgs& a) {
  const ti::Preset* preset = nullptr;
  if (!a.preset.empty()) {
    preset = ti::find_preset(a.preset);
    if (!preset) {
      std::string names;
      for (const auto& p : ti::presets()) names += (names.empty() ? "" : ", ") + p.name;
      throw UsageError("--preset: unknown preset '" + a.preset + "'; valid names: " + names);
    }
  }
  ti::Options o = preset ? preset->options : ti::Options{};
  ti::Format format = preset ? preset->format : ti::Format::Auto;
  if (a.format) format = *a.format;
  if (!a.time_column.empty()) o.time_column = a.time_column;
  if (a.unit) o.unit = *a.unit;
  if (a.origin) o.origin = *a.origin;
  if (a.sort) o.sort = true;
  if (a.gaps) o.gaps = true;
  if (a.decimals) o.decimals = *a.decimals;
  if (a.no_extra) o.keep = std::vector<std::string>{};
  if (!a.keep.empty()) o.keep = split_commas(a.keep);
  for (const auto& r : a.rename) o.rename.push_back(split_assignment(r, "--rename"));
  // Applied to the source's rows, before any expansion of per-minute counts.
  for (const auto& w : a.where) o.where.push_back(split_assignment(w, "--where"));

  const fs::path in(a.input);
  const fs::path out(a.out);
  if (a.out.empty()) throw UsageError("--out: must not be empty");
  check_target(in, out, a.force);
  ti::FileImport spec{format, o, std::nullopt};
  if (preset && preset->minute_counts) spec.minute_counts = ti::MinuteCounts{a.seed, a.spread};
  InputStream input(in, a.input, kMaxTraceBytes, InputKind::Trace);
  Sha256 origin_hash;
  input.observe([&](std::string_view bytes) { origin_hash.update(bytes); });

  std::error_code ec;
  if (!out.parent_path().empty()) fs::create_directories(out.parent_path(), ec);
  ImportOutput pair(out, a.force);
  ti::SortSpace space;
  space.dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  const ti::Result r = ti::import_file(input, in, spec, pair, space);
  Provenance p{std::to_string(input.bytes_seen()), origin_hash.hex(), pair.finish_data()};
  pair.commit(sidecar_text(a, preset, o, r, p));
  if (!a.quiet) {
    const double span_s = static_cast<double>(r.span_ns) / 1e9;
    std::cout << "imported " << r.rows_written << " requests (" << r.rows_read
              << " rows read) over " << seconds(r.span_ns) << " s";
    if (span_s > 0) {
      std::cout << " (" << std::setprecision(4) << static_cast<double>(r.rows_written) / span_s
                << " req/s)";
    }
    std::cout << " -> " << out.string() << " (+ .SOURCE)\n";
  }
  return 0;
}

}  // namespace

int trace_import_command(const TraceImportArgs& a) {
  try {
    return trace_import(a);
  } catch (const std::bad_alloc&) {
    // Reading, sorting and writing name what they held; this is what is left (exit 1).
    throw Error(a.input + ": out of memory importing it");
  }
}

}  // namespace gpumux::cli
