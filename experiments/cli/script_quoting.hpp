// Quoting values for the two parsers that read a generated Slurm script (sweep_slurm.hpp):
// bash reads its command lines, and sbatch reads its "#SBATCH" lines before the first command.
// Each value is quoted for the parser that reads it; what that parser cannot be told (a line
// break in an "#SBATCH" line) is refused with a UsageError naming where the value came from.
//
// sbatch's reading of a directive line (SchedMD/slurm, src/sbatch/opt.c, _get_argument and
// _opt_batch_script): a line ends at '\n'; arguments are split on whitespace (isspace); single
// or double quotes group characters; a backslash escapes the next character, inside quotes too;
// an unescaped '#' outside quotes starts a comment; a line that contains "hetjob" or "packjob"
// (any case) separates the components of a heterogeneous job. In a file name (--output) '%'
// starts a replacement symbol ("%%" is a literal '%') and a backslash turns every symbol off
// (sbatch(1), "filename pattern"). Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>

namespace gpumux::cli {

/// POSIX shell single-quoting: 'it'\''s'. Every byte but NUL survives it.
[[nodiscard]] std::string shell_quote(std::string_view text);

/// One argument of an "#SBATCH" line as sbatch's reader gives it back: bare when it holds only
/// letters, digits and "_-./:=,@%+", else in double quotes with '\' and '"' escaped. Call
/// check_sbatch_value first.
[[nodiscard]] std::string sbatch_quote(std::string_view text);

/// A file name as Slurm's --output pattern for it: '%' doubled. Call check_slurm_file_name
/// first (a backslash cannot be written).
[[nodiscard]] std::string slurm_file_pattern(std::string_view file_name);

/// Refuses (UsageError "<origin> '<value>': ...", control characters shown as \n, \xNN) a value for
/// an "#SBATCH" line that sbatch cannot read back as given: a control character (a line break ends
/// the directive), or "hetjob" / "packjob" in any case (sbatch splits the job there).
void check_sbatch_value(std::string_view value, const std::string& origin);

/// check_sbatch_value, and a backslash (it turns Slurm's %-symbols off in a file name).
void check_slurm_file_name(std::string_view value, const std::string& origin);

/// Refuses (UsageError) a value for a command line of the script that sbatch would refuse to
/// submit: a carriage return (sbatch rejects a script with DOS line breaks).
void check_script_shell_value(std::string_view value, const std::string& origin);

}  // namespace gpumux::cli
