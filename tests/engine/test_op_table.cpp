// The Engine's op table (core/engine/src/op_table.hpp): finished ops leave from the front, and what
// is still asked about a released op (complete or not, the job's chain fallback) is answered
// as if every op were kept.
#include <catch2/catch.hpp>

#include <random>

#include "../../core/engine/src/op_table.hpp"

using namespace gpumux;

namespace {

struct Info {
  JobId job{};
  OpKind kind = OpKind::Compute;
  OpPurpose purpose = OpPurpose::Forward;
  bool finished = false;
  bool complete = false;
};

/// The scan the engine did over a vector of every op, for comparison.
std::optional<std::size_t> reference_before(const std::vector<Info>& all, std::size_t id,
                                            JobId job) {
  for (std::size_t i = std::min(id, all.size()); i-- > 0;) {
    const Info& o = all[i];
    if (o.job == job && (o.kind == OpKind::Compute || o.purpose == OpPurpose::MigrateState) &&
        !(o.finished && !o.complete)) {
      return i;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("the op table answers for released ops as a full vector would", "[unit][op_table]") {
  std::mt19937_64 rng(11);
  OpTable<Info> table;
  std::vector<Info> all;
  std::vector<std::size_t> live;
  std::size_t max_window = 0, fallbacks = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || (live.size() < 16 && rng() % 2 == 0)) {
      Info info;
      info.job = JobId{static_cast<std::uint32_t>(rng() % 3)};
      info.kind = rng() % 4 == 0 ? OpKind::CopyH2D : OpKind::Compute;
      live.push_back(table.size());
      table.push_back(info);
      all.push_back(info);
    } else {
      // Finish a random live op: mostly completed, sometimes dropped.
      const std::size_t k = rng() % live.size();
      const std::size_t id = live[k];
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      const bool ok = rng() % 4 != 0;
      all[id].finished = true;
      all[id].complete = ok;
      table[id].finished = true;
      table[id].complete = ok;
    }
    max_window = std::max(max_window, table.size() - table.base());
    const std::size_t probe = rng() % table.size();
    REQUIRE(table.complete(probe) == all[probe].complete);
    REQUIRE(table.finished(probe) == all[probe].finished);
    // As the engine asks: from the job's latest op (none of its ops come after it).
    const JobId job{static_cast<std::uint32_t>(rng() % 3)};
    std::size_t latest = all.size();
    while (latest-- > 0 && all[latest].job != job) {
    }
    // ... and only when that op was dropped or aborted (else the chain goes on from it).
    if (latest < all.size() && all[latest].finished && !all[latest].complete) {
      REQUIRE(table.last_chain_op_before(latest, job) == reference_before(all, latest, job));
      ++fallbacks;
    }
  }
  CHECK(fallbacks > 100);
  CHECK(table.base() > table.size() / 2);  // most ops were released
  CHECK(max_window < 1000);  // the window holds ops since the oldest one in flight (<= 16)
  CHECK_FALSE(table.complete(table.size()));  // an id not given yet
}
