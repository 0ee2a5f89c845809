// Quoting for generated Slurm scripts (see script_quoting.hpp).
#include "script_quoting.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "gpumux/api/errors.hpp"

namespace gpumux::cli {

namespace {

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// The character as a person can read it in a message: "\n", "\x01".
std::string printable(char c) {
  if (c == '\n') return "a line break (\\n)";
  if (c == '\r') return "a carriage return (\\r)";
  if (c == '\t') return "a tab (\\t)";
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
  return std::string("the control character ") + buf;
}

// The value in a message: control characters as \n, \xNN.
std::string shown(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (is_control(c)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool contains_word(std::string_view text, std::string_view word) {
  const auto it =
      std::search(text.begin(), text.end(), word.begin(), word.end(),
                  [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != text.end();
}

}  // namespace

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string sbatch_quote(std::string_view text) {
  const bool bare = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_-./:=,@%+").find(c) != std::string_view::npos;
  });
  if (bare) return std::string(text);
  // Inside double quotes sbatch's reader keeps whitespace, '#' and '\'' as they are; a
  // backslash escapes the next character there too.
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string slurm_file_pattern(std::string_view file_name) {
  std::string out;
  for (char c : file_name) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

void check_sbatch_value(std::string_view value, const std::string& origin) {
  const auto bad = std::find_if(value.begin(), value.end(), is_control);
  if (bad != value.end()) {
    throw UsageError(origin + " " + shown(value) + ": holds " + printable(*bad) +
                     ", which cannot be written into an #SBATCH line (sbatch reads one line per "
                     "directive)");
  }
  for (const std::string_view word : {"hetjob", "packjob"}) {
    if (contains_word(value, word)) {
      throw UsageError(origin + " " + shown(value) + ": holds '" + std::string(word) +
                       "', which sbatch takes as the start of another component of a "
                       "heterogeneous job wherever it appears in an #SBATCH line");
    }
  }
}

void check_slurm_file_name(std::string_view value, const std::string& origin) {
  check_sbatch_value(value, origin);
  if (value.find('\\') != std::string_view::npos) {
    throw UsageError(origin + " " + shown(value) +
                     ": holds a backslash, which turns off Slurm's %a in the tasks' log file "
                     "names (sbatch --output); choose a folder without one");
  }
}

void check_script_shell_value(std::string_view value, const std::string& origin) {
  if (value.find('\r') != std::string_view::npos) {
    throw UsageError(origin + " " + shown(value) + ": holds " + printable('\r') +
                     "; sbatch refuses a script with DOS line breaks");
  }
}

}  // namespace gpumux::cli
