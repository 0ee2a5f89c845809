// Writing an import's CSV and .SOURCE as a pair (import_output.hpp).
#include "import_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/trace_sidecar.hpp"

namespace gpumux::cli {
namespace {

namespace fs = std::filesystem;

// The sidecar's first line is how gpumux recognises an output it wrote (and may replace).
bool written_by_import(const fs::path& sidecar) {
  std::ifstream in(sidecar);
  std::string first;
  return std::getline(in, first) && first == kImportSidecarMarker;
}

fs::path folder_of(const fs::path& out) {
  return out.has_parent_path() ? out.parent_path() : fs::path(".");
}

}  // namespace

ImportTarget check_import_target(const fs::path& out, bool force) {
  const std::string name = out.filename().string();
  if (name.empty() || name == "." || name == "..") {
    throw UsageError("--out: " + out.string() + " names a folder; give a file name");
  }
  std::error_code ec;
  const fs::path side = import_sidecar_of(out);
  const ImportTarget t{fs::symlink_status(out, ec).type() != fs::file_type::not_found,
                       fs::symlink_status(side, ec).type() != fs::file_type::not_found};
  if (!t.out_exists && !t.source_exists) return t;
  for (const fs::path& p : {out, side}) {
    const auto type = fs::symlink_status(p, ec).type();
    if (type != fs::file_type::not_found && type != fs::file_type::regular) {
      throw UsageError("--out: " + p.string() + " exists and is not a regular file");
    }
  }
  if (!t.source_exists || !written_by_import(side)) {
    throw UsageError("--out: " + out.string() +
                     " exists and was not written by gpumux trace import (no " + side.string() +
                     " saying so); choose another file");
  }
  if (!force) {
    throw UsageError("--out: " + out.string() +
                     " holds an earlier import; pass --force to replace it");
  }
  return t;
}

ImportOutput::ImportOutput(fs::path out, bool force) : out_(std::move(out)), force_(force) {
  dir_fd_ = ::open(folder_of(out_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) fail("cannot open its folder", errno);
  data_.emplace(dir_fd_, out_.string(), out_.filename().string());
}

ImportOutput::~ImportOutput() {
  data_.reset();  // before the folder it is staged in closes
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void ImportOutput::write(const char* data, std::size_t n) {
  if (!data_->write(data, n)) fail("cannot write the imported trace; nothing was replaced", errno);
  hash_.update(std::string_view(data, n));
}

std::string ImportOutput::finish_data() {
  if (const int err = data_->finish(); err != 0) {
    fail("cannot write the imported trace; nothing was replaced", err);
  }
  return hash_.hex();
}

void ImportOutput::commit(const std::string& sidecar) {
  const fs::path side = import_sidecar_of(out_);
  StagedFile source(dir_fd_, side.string(), side.filename().string());
  if (!source.write(sidecar.data(), sidecar.size())) fail("cannot write " + side.string(), errno);
  if (const int err = source.finish(); err != 0) fail("cannot write " + side.string(), err);
  // One import at a time checks and names its pair in this folder, so that imports run at
  // once into one OUT leave one whole pair, never one's data beside another's .SOURCE. Some
  // network file systems refuse flock on a folder: the check still runs, unlocked.
  while (::flock(dir_fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
  const ImportTarget now = check_import_target(out_, force_);
  // The data first: a crash between the two leaves a .SOURCE whose data_sha256 does not
  // match, never a .SOURCE beside data it does not describe without a way to tell.
  if (const int err = data_->place(now.out_exists); err != 0) {
    fail(err == EEXIST ? "appeared while this import ran; nothing was replaced"
                       : "cannot give the imported trace its name; nothing was replaced",
         err);
  }
  if (const int err = source.place(now.source_exists); err != 0) {
    fail(
        "was replaced, but its .SOURCE could not be (the earlier one, if any, no longer "
        "matches it and replaying it is refused; import again)",
        err);
  }
  (void)::fsync(dir_fd_);  // the new names survive a power loss; no folder fsync is no error
  ::flock(dir_fd_, LOCK_UN);
}

void ImportOutput::fail(const std::string& what, int err) const {
  throw Error(out_.string() + ": " + what + " (" + std::strerror(err) + ")");
}

}  // namespace gpumux::cli
