// The labels of device notes, as the engine's label pool interns them, remembered for the next
// note: a device repeats a couple of labels ("timeslice", "context_switch") on every
// time-slice event, and matching them here by content, word-wise, costs less than the pool's
// look-up (its loop over recent labels and a memcmp call). The views returned are the pool's,
// so events carry exactly the labels they carried without this cache.
//
// Thread rules: the engine's runtime thread only.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpumux {

class NoteLabels {
 public:
  /// The interned view of `what`: a remembered one with the same bytes, else intern(what)
  /// (which must return the pool's stable view), then remembered.
  template <class Intern>
  std::string_view get(std::string_view what, Intern&& intern) {
    for (const std::string_view v : cache_) {
      if (same(v, what)) return v;
    }
    const std::string_view v = intern(what);
    cache_[next_] = v;
    next_ = (next_ + 1) % cache_.size();
    return v;
  }

 private:
  /// Byte equality; an unused entry (null data) matches nothing.
  static bool same(std::string_view a, std::string_view b) noexcept {
    const std::size_t n = a.size();
    if (n != b.size() || a.data() == nullptr) return false;
    if (n >= 8 && n <= 16) {  // two (possibly overlapping) 8-byte words cover every byte
      std::uint64_t a0, a1, b0, b1;
      std::memcpy(&a0, a.data(), 8);
      std::memcpy(&a1, a.data() + n - 8, 8);
      std::memcpy(&b0, b.data(), 8);
      std::memcpy(&b1, b.data() + n - 8, 8);
      return a0 == b0 && a1 == b1;
    }
    return a == b;
  }

  std::array<std::string_view, 2> cache_{};
  std::size_t next_ = 0;
};

}  // namespace gpumux
