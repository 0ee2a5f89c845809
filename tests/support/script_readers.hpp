// Independent readers of a generated Slurm script, for tests and fuzzers that check gpumux's
// quoting (experiments/cli/script_quoting.hpp) against how the script's two parsers read it:
//  - read_sbatch_directives: sbatch's reading of the "#SBATCH" lines, re-implemented from
//    SchedMD/slurm src/sbatch/opt.c (_opt_batch_script, _next_line, _get_argument);
//  - read_shell_commands: a strict POSIX shell word splitter for the command lines, which
//    accepts only what cannot expand or run anything (single quotes, plain words, a
//    double-quoted "$NAME") and reports anything else as an error.
// Header-only, no gpumux code, pure functions.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace script_readers {

struct SbatchReading {
  std::vector<std::string> args;  ///< every argument of every directive, in order
  std::string error;              ///< what sbatch would stop or fail on ("" when none)
};

// isspace in the C locale, as sbatch's reader calls it.
inline bool c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline bool contains_nocase(std::string_view text, std::string_view word) {
  for (std::size_t i = 0; i + word.size() <= text.size(); ++i) {
    bool same = true;
    for (std::size_t j = 0; j < word.size() && same; ++j) {
      char c = text[i + j];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      same = c == word[j];
    }
    if (same) return true;
  }
  return false;
}

/// The directives sbatch reads from `script`: lines starting with "#SBATCH" (or "#SLURM")
/// until the first line whose first non-space character is not '#'.
inline SbatchReading read_sbatch_directives(std::string_view script) {
  SbatchReading out;
  std::size_t pos = 0;
  int lineno = 0;
  while (pos < script.size()) {
    const std::size_t end = std::min(script.find('\n', pos), script.size());
    // _next_line copies with xstrndup: the line ends at a NUL too.
    std::string_view line = script.substr(pos, end - pos);
    line = line.substr(0, std::min(line.find('\0'), line.size()));
    pos = end + 1;
    ++lineno;
    std::string_view rest;
    if (line.substr(0, 7) == "#SBATCH") {
      rest = line.substr(7);
    } else if (line.substr(0, 6) == "#SLURM") {
      rest = line.substr(6);
    } else {
      const auto first = std::find_if_not(line.begin(), line.end(), c_space);
      if (first != line.end() && *first != '#') break;  // the first command
      continue;
    }
    if (contains_nocase(line, "hetjob") || contains_nocase(line, "packjob")) {
      out.error = "line " + std::to_string(lineno) + ": a heterogeneous-job separator";
      return out;
    }
    // _get_argument, once per argument, until it returns none.
    std::size_t p = 0;
    for (;;) {
      while (p < rest.size() && c_space(rest[p])) ++p;
      if (p < rest.size() && rest[p] == ':') {
        out.error = "line " + std::to_string(lineno) + ": unexpected ':'";
        return out;
      }
      if (p >= rest.size()) break;
      std::string arg;
      bool any = false, escape = false, quoted = false;
      char q = '\0';
      while (p < rest.size() && (quoted || !c_space(rest[p])) && rest[p] != '\n') {
        const char c = rest[p];
        if (escape) {
          escape = false;
        } else if (c == '\\') {
          escape = true;
          ++p;
          continue;
        } else if (quoted) {
          if (c == q) {
            quoted = false;
            ++p;
            continue;
          }
        } else if (c == '"' || c == '\'') {
          quoted = true;
          q = c;
          ++p;
          continue;
        } else if (c == '#') {
          break;  // a comment: the rest of the line
        }
        arg += c;
        any = true;
        ++p;
      }
      if (quoted) {
        out.error = "line " + std::to_string(lineno) + ": unmatched quote";
        return out;
      }
      if (!any) break;  // no argument: sbatch reads no further on this line
      out.args.push_back(arg);
    }
  }
  return out;
}

struct ShellReading {
  std::vector<std::vector<std::string>> commands;  ///< the words of each command line
  std::string error;  ///< the first construct that could expand or run something
};

/// The command lines of `script` as bash splits them into words, for scripts made only of
/// comments and simple commands. A double-quoted "$NAME" becomes the word text "${NAME}";
/// any other expansion, redirection, operator, glob or unquoted character outside
/// [A-Za-z0-9_./=:,@%+-] is an error.
inline ShellReading read_shell_commands(std::string_view script) {
  ShellReading out;
  std::vector<std::string> command;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) command.push_back(word);
    word.clear();
    in_word = false;
  };
  auto end_command = [&] {
    end_word();
    if (!command.empty()) out.commands.push_back(command);
    command.clear();
  };
  auto fail = [&](std::size_t at, const std::string& what) {
    out.error = "offset " + std::to_string(at) + ": " + what;
    return out;
  };
  for (std::size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '\n') {
      end_command();
    } else if (c == '#' && !in_word) {
      while (i + 1 < script.size() && script[i + 1] != '\n') ++i;
    } else if (c == '\'') {
      const std::size_t close = script.find('\'', i + 1);
      if (close == std::string_view::npos) return fail(i, "unmatched single quote");
      word.append(script.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '"') {
      // Only "$NAME" is accepted inside double quotes.
      std::size_t j = i + 1;
      if (j >= script.size() || script[j] != '$') return fail(i, "a double-quoted string");
      std::string name;
      for (++j; j < script.size() &&
                (std::isalnum(static_cast<unsigned char>(script[j])) || script[j] == '_');
           ++j) {
        name += script[j];
      }
      if (name.empty() || j >= script.size() || script[j] != '"') {
        return fail(i, "a double-quoted string other than \"$NAME\"");
      }
      word += "${" + name + "}";
      in_word = true;
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= script.size() || script[i + 1] == '\n') return fail(i, "a line continuation");
      word += script[++i];
      in_word = true;
    } else if (std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("_./=:,@%+-").find(c) != std::string_view::npos) {
      word += c;
      in_word = true;
    } else {
      return fail(i, std::string("an unquoted '") + c + "'");
    }
  }
  end_command();
  return out;
}

}  // namespace script_readers
