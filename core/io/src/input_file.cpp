// Bounded reading of input files, and the UTF-8 check (see input_file.hpp).
#include "gpumux/io/input_file.hpp"

#include <algorithm>
#include <fstream>
#include <system_error>

namespace gpumux {

namespace {

std::string limit_text(std::uint64_t max_bytes) {
  return std::to_string(max_bytes >> 20) + " MiB";
}

}  // namespace

InputStream::InputStream(const std::filesystem::path& path, std::string display_name,
                         std::uint64_t max_bytes, InputKind kind)
    : name_(std::move(display_name)), max_bytes_(max_bytes), kind_(kind) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // follows symbolic links
  if (ec || !std::filesystem::exists(status)) {
    // One wording for every input (config, job file, arrivals, model, profile).
    throw_input_error(kind, name_, "", "no such file (cannot open it)");
  }
  // /dev/zero, FIFOs and directories: reading them never ends, blocks, or means nothing.
  if (!std::filesystem::is_regular_file(status)) {
    throw_input_error(kind, name_, "", "not a regular file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw_input_error(kind, name_, "", "larger than " + limit_text(max_bytes));
  in_.open(path, std::ios::binary);
  if (!in_) throw_input_error(kind, name_, "", "cannot open file (no permission to read it?)");
}

std::size_t InputStream::read(char* buffer, std::size_t size) {
  if (!in_) return 0;
  in_.read(buffer, static_cast<std::streamsize>(size));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) throw_input_error(kind_, name_, "", "read error");
  // The cap holds while the file is read: it may have grown since its size was taken.
  if (position_ + got > max_bytes_)
    throw_input_error(kind_, name_, "", "larger than " + limit_text(max_bytes_));
  if (observe_ && position_ + got > seen_) {
    const std::size_t skip = static_cast<std::size_t>(seen_ - position_);
    observe_(std::string_view(buffer + skip, got - skip));
  }
  position_ += got;
  seen_ = std::max(seen_, position_);
  return got;
}

void InputStream::rewind() {
  in_.clear();
  in_.seekg(0);
  if (!in_) throw_input_error(kind_, name_, "", "read error (cannot read it again)");
  position_ = 0;
}

std::string read_input_file(const std::filesystem::path& path, const std::string& display_name,
                            std::uint64_t max_bytes, InputKind kind) {
  InputStream in(path, display_name, max_bytes, kind);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  std::string text;
  text.reserve(ec ? 0 : static_cast<std::size_t>(std::min<std::uintmax_t>(size, max_bytes)));
  char buffer[1 << 16];
  while (const std::size_t got = in.read(buffer, sizeof buffer)) text.append(buffer, got);
  return text;
}

bool is_valid_utf8(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte (RFC 3629, table 3-7)
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return false;
    }
    if (n - i < len) return false;
    if (s[i + 1] < lo || s[i + 1] > hi) return false;
    for (std::size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return false;
    }
    i += len;
  }
  return true;
}

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(ch);
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string read_data_document(const std::filesystem::path& file) {
  return read_input_file(file, file.string(), kMaxDocumentBytes, InputKind::Trace);
}

std::vector<std::string> json_file_stems(const std::filesystem::path& directory) {
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(directory, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const auto& p = it->path();
    if (p.extension() == ".json" && it->is_regular_file(ec)) out.push_back(p.stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpumux
