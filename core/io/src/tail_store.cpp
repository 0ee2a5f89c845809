// Kept columns waiting for the sort, in memory or spilled (tail_store.hpp).
#include "tail_store.hpp"

#include <cstring>
#include <new>

#include "gpumux/api/errors.hpp"

namespace gpumux::trace_import {
namespace {

using Length = std::uint32_t;  // a tail is at most 2 x 16 MiB (a record, every byte quoted)
constexpr std::size_t kCacheSlots = std::size_t{1} << 15;
constexpr std::size_t kCacheableBytes = 512;
// Most tails are shorter: one read gets the length and the text.
constexpr std::size_t kFirstRead = 256;

}  // namespace

TailStore::TailStore(const SortSpace& space, std::string file)
    : space_(space), file_(std::move(file)) {}

std::uint64_t TailStore::add(std::string_view tail) {
  const auto length = static_cast<Length>(tail.size());
  char prefix[sizeof(Length)];
  std::memcpy(prefix, &length, sizeof prefix);
  if (!spilled_ && memory_.size() + sizeof prefix + tail.size() <= space_.tail_memory_bytes) {
    const std::uint64_t ref = memory_.size();
    try {
      memory_.append(prefix, sizeof prefix);
      memory_.append(tail);
    } catch (const std::bad_alloc&) {
      throw Error(file_ + ": out of memory holding the kept columns of rows to sort (" +
                  std::to_string(memory_.size()) + " bytes)");
    }
    return ref;
  }
  if (!spilled_) {
    spilled_ = std::make_unique<SpillFile>(space_.dir, "the kept columns of rows to sort", file_);
    spilled_->append(memory_.data(), memory_.size());
    std::string().swap(memory_);
  }
  const std::uint64_t ref = spilled_->size();
  spilled_->append(prefix, sizeof prefix);
  spilled_->append(tail.data(), tail.size());
  return ref;
}

std::string_view TailStore::get(std::uint64_t ref) {
  if (!spilled_) {
    Length length = 0;
    std::memcpy(&length, memory_.data() + ref, sizeof length);
    return std::string_view(memory_).substr(ref + sizeof length, length);
  }
  if (cache_.empty()) cache_.resize(kCacheSlots);
  Cached& slot = cache_[(ref * 0x9E3779B97F4A7C15ULL >> 40) % kCacheSlots];
  if (slot.ref == ref) return slot.text;
  scratch_.resize(kFirstRead);
  const std::size_t got = spilled_->read_at(ref, scratch_.data(), kFirstRead);
  Length length = 0;
  std::memcpy(&length, scratch_.data(), sizeof length);
  const std::size_t whole = sizeof length + length;
  scratch_.resize(std::max(whole, got));
  if (whole > got) spilled_->read_at(ref + got, scratch_.data() + got, whole - got);
  const std::string_view text = std::string_view(scratch_).substr(sizeof length, length);
  if (length <= kCacheableBytes && cached_bytes_ - slot.text.size() + length <= kTailCacheBytes) {
    cached_bytes_ = cached_bytes_ - slot.text.size() + length;
    slot.ref = ref;
    slot.text.assign(text);
    return slot.text;
  }
  return text;
}

}  // namespace gpumux::trace_import
