// A move-only callable stored inline in a fixed buffer: the simulator's hot path schedules
// millions of callbacks and must not allocate per event. A capture larger than the buffer is
// a compile error, not a silent heap allocation.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace gpumux {

template <class Signature, std::size_t Capacity>
class SmallFunction;

template <class R, class... Args, std::size_t Capacity>
class SmallFunction<R(Args...), Capacity> {
 public:
  SmallFunction() noexcept = default;

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, SmallFunction>>>
  SmallFunction(F&& f) {  // NOLINT(google-explicit-constructor): behaves like std::function
    using Fn = std::decay_t<F>;
    static_assert(sizeof(Fn) <= Capacity, "capture too large for SmallFunction's inline buffer");
    static_assert(alignof(Fn) <= alignof(std::max_align_t), "over-aligned callable");
    static_assert(std::is_nothrow_move_constructible_v<Fn>, "callable must be nothrow-movable");
    ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
    ops_ = &ops_for<Fn>;
  }

  SmallFunction(SmallFunction&& other) noexcept { take(std::move(other)); }
  SmallFunction& operator=(SmallFunction&& other) noexcept {
    if (this != &other) {
      reset();
      take(std::move(other));
    }
    return *this;
  }
  SmallFunction(const SmallFunction&) = delete;
  SmallFunction& operator=(const SmallFunction&) = delete;
  ~SmallFunction() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }

  R operator()(Args... args) { return ops_->invoke(storage_, std::forward<Args>(args)...); }

  void reset() noexcept {
    if (ops_ != nullptr) {
      ops_->destroy(storage_);
      ops_ = nullptr;
    }
  }

 private:
  struct Ops {
    R (*invoke)(void*, Args&&...);
    void (*move)(void* dst, void* src) noexcept;
    void (*destroy)(void*) noexcept;
  };

  template <class Fn>
  static constexpr Ops ops_for{[](void* p, Args&&... args) -> R {
                                 return (*static_cast<Fn*>(p))(std::forward<Args>(args)...);
                               },
                               [](void* dst, void* src) noexcept {
                                 ::new (dst) Fn(std::move(*static_cast<Fn*>(src)));
                                 static_cast<Fn*>(src)->~Fn();
                               },
                               [](void* p) noexcept { static_cast<Fn*>(p)->~Fn(); }};

  void take(SmallFunction&& other) noexcept {
    if (other.ops_ != nullptr) {
      other.ops_->move(storage_, other.storage_);
      ops_ = other.ops_;
      other.ops_ = nullptr;
    }
  }

  alignas(std::max_align_t) unsigned char storage_[Capacity];
  const Ops* ops_ = nullptr;
};

}  // namespace gpumux
