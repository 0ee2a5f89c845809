// Successive-halving brackets and Hyperband's bracket table (bracket.hpp).
#include "tuners/bracket.hpp"

#include <algorithm>
#include <cmath>

#include "gpumux/api/errors.hpp"

namespace gpumux::tuners {
namespace {

void check(bool ok, const char* what) {
  if (!ok) throw Error(std::string("bracket: ") + what);
}

}  // namespace

std::vector<Rung> bracket_rungs(int n0, int r0, int max_epochs, int eta) {
  check(n0 >= 1 && r0 >= 1 && max_epochs >= r0 && eta >= 2,
        "needs n0, r0 >= 1, max >= r0, eta >= 2");
  std::vector<Rung> out{{n0, r0}};
  while (out.back().epochs < max_epochs) {
    const Rung& prev = out.back();
    const int n = (prev.trials + eta - 1) / eta;  // ceil(n_{k-1} / eta)
    const int r = static_cast<int>(
        std::min<std::int64_t>(static_cast<std::int64_t>(prev.epochs) * eta, max_epochs));
    out.push_back(Rung{n, r});
  }
  return out;
}

std::vector<BracketShape> hyperband_brackets(int eta, int min_epochs, int max_epochs) {
  check(eta >= 2 && min_epochs >= 1 && max_epochs >= min_epochs, "needs eta >= 2, 1 <= min <= max");
  // s_max = floor(log_eta(R / r_min)), in integers to avoid log rounding (81/1 with eta 3 -> 4).
  int s_max = 0;
  for (std::int64_t p = eta; p * min_epochs <= max_epochs; p *= eta) ++s_max;
  const double big_r = max_epochs;
  const double budget = (s_max + 1) * big_r;  // B = (s_max + 1) R
  std::vector<BracketShape> out;
  for (int s = s_max; s >= 0; --s) {
    const double eta_s = std::pow(eta, s);
    const auto n = static_cast<int>(std::ceil(budget / big_r * eta_s / (s + 1) - 1e-9));
    const auto r = static_cast<int>(std::llround(big_r / eta_s));
    out.push_back(BracketShape{n, std::max(r, min_epochs)});
  }
  return out;
}

Bracket::Bracket(int n0, int r0, int max_epochs, int eta, MetricMode mode)
    : rungs_(bracket_rungs(n0, r0, max_epochs, eta)), mode_(mode), results_(rungs_.size()) {
  for (const Rung& r : rungs_) expected_.push_back(static_cast<std::size_t>(r.trials));
}

void Bracket::add(TrialId t) {
  check(rung_.size() < static_cast<std::size_t>(rungs_[0].trials), "rung 0 is full");
  rung_.emplace(t, 0);
}

Bracket::Outcome Bracket::rung_end(TrialId t, double metric) {
  return end_member(t, metric);
}

Bracket::Outcome Bracket::fail(TrialId t) {
  Outcome out = end_member(t, std::nullopt);
  out.decision = TrialDecision::Stop;
  return out;
}

Bracket::Outcome Bracket::end_member(TrialId t, std::optional<double> metric) {
  const std::size_t k = rung_.at(t);
  Outcome out;
  if (k + 1 == rungs_.size()) {
    out.decision = TrialDecision::Stop;
    if (++done_in_last_ == expected_[k]) finished_ = true;
    return out;
  }
  auto& res = results_[k];
  res.emplace_back(t, metric);
  if (res.size() < expected_[k]) return out;
  // Only members with a result are ranked: a failed one is never promoted.
  std::vector<std::pair<TrialId, double>> ranked;
  for (const auto& [id, m] : res) {
    if (m) ranked.emplace_back(id, *m);
  }
  const bool max = mode_ == MetricMode::Max;
  std::sort(ranked.begin(), ranked.end(), [max](const auto& a, const auto& b) {
    if (a.second != b.second) return max ? a.second > b.second : a.second < b.second;
    return a.first < b.first;
  });
  const std::size_t keep = std::min(static_cast<std::size_t>(rungs_[k + 1].trials), ranked.size());
  expected_[k + 1] = keep;
  if (keep == 0) {  // every member failed: nothing goes on
    finished_ = true;
    out.decision = TrialDecision::Stop;
    return out;
  }
  out.next_epochs = rungs_[k + 1].epochs;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const TrialId id = ranked[i].first;
    if (i < keep) {
      out.promoted.push_back(id);
      rung_[id] = k + 1;
    } else if (id == t) {
      out.decision = TrialDecision::Stop;
    } else {
      out.stopped.push_back(id);
    }
  }
  return out;
}

}  // namespace gpumux::tuners
