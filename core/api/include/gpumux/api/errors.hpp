// Typed errors. The CLI maps them to exit codes: bad input (ConfigError, TraceError,
// UsageError) exits 2; failures at run time (PolicyError, OutOfMemory, CudaError, NotCompiled,
// DeviceUnavailable) exit 1.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpumux {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input: `what()` is "<file>: <key path or line>: <problem>", or "<file>: <problem>" for
/// a problem with the file as a whole (missing, unreadable, too large).
class InputError : public Error {
 public:
  using Error::Error;
  InputError(const std::string& file, const std::string& where, const std::string& problem)
      : Error(file + ": " + (where.empty() ? std::string() : where + ": ") + problem),
        file_(file),
        where_(where),
        problem_(problem) {}
  /// The parts of a three-part error (empty for one built from a whole message): `where`
  /// is empty when the problem is the file as a whole.
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

 private:
  std::string file_;
  std::string where_;
  std::string problem_;
};

/// A config file (or a --set override) is malformed: names the file and the key path.
class ConfigError final : public InputError {
 public:
  ConfigError(const std::string& file, const std::string& key_path, const std::string& problem)
      : InputError(file, key_path, problem) {}
};

/// A trace, workload, model or profile file is malformed: names the file and line or key.
class TraceError final : public InputError {
 public:
  TraceError(const std::string& file, const std::string& where, const std::string& problem)
      : InputError(file, where, problem) {}
};

/// Which InputError a reader throws: a config (and its --set overrides) gives ConfigError,
/// every data file (workload, arrivals, model, device profile, events) TraceError.
enum class InputKind : std::uint8_t { Config, Trace };

/// Throws the InputError of `kind`; an empty `where` names the file alone, in both.
[[noreturn]] inline void throw_input_error(InputKind kind, const std::string& file,
                                           const std::string& where, const std::string& problem) {
  if (kind == InputKind::Config) throw ConfigError(file, where, problem);
  throw TraceError(file, where, problem);
}

/// A bad command-line argument.
class UsageError final : public InputError {
 public:
  using InputError::InputError;
};

/// A policy issued an invalid command; names the policy and the command.
class PolicyError final : public Error {
 public:
  PolicyError(const std::string& policy, const std::string& command, const std::string& problem)
      : Error("policy '" + policy + "': " + command + ": " + problem) {}
};

/// A memory resource could not satisfy an allocation.
class OutOfMemory final : public Error {
 public:
  OutOfMemory(std::uint64_t requested_bytes, std::uint64_t free_bytes, const std::string& where)
      : Error(where + ": out of memory: requested " + std::to_string(requested_bytes) +
              " B, largest free block " + std::to_string(free_bytes) + " B"),
        requested_bytes_(requested_bytes) {}
  [[nodiscard]] std::uint64_t requested_bytes() const noexcept { return requested_bytes_; }

 private:
  std::uint64_t requested_bytes_;
};

/// A CUDA or cuBLAS call failed; the message names the call and file:line.
class CudaError final : public Error {
 public:
  using Error::Error;
};

/// The requested backend was not compiled into this build.
class NotCompiled final : public Error {
 public:
  using Error::Error;
};

/// The backend was compiled but no usable device exists at run time (e.g. no GPU).
class DeviceUnavailable final : public Error {
 public:
  using Error::Error;
};

}  // namespace gpumux
