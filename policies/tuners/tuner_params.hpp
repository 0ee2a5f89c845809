// Reading a tuner's declared parameters, and the readers of the parameters several tuners
// share: eta (successive_halving, the Hyperband family, asha), the epoch range min_epochs to
// max_epochs (the same tuners) and a single max_epochs (grid_search, random_search, pbt).
// Each tuner still declares these in its own param_specs(), with its own default and help,
// whose sources its file states.
//
// Thread rules: a ParamReader belongs to one thread (gpumux/io/params.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "gpumux/engine/tuner.hpp"
#include "gpumux/io/params.hpp"

namespace gpumux::tuners {

/// Reads a tuner's params (args.params, at args.path) through `specs` with
/// `read(ParamReader&)`, then refuses the keys `specs` does not declare (as policies'
/// read_policy_params). Returns what `read` returns.
template <class Read>
auto read_tuner_params(const TunerArgs& args, const ParamSpecs& specs, Read&& read) {
  ParamReader p(args.params, args.file, args.path, specs);
  if constexpr (std::is_void_v<std::invoke_result_t<Read&, ParamReader&>>) {
    read(p);
    p.finish();
  } else {
    auto out = read(p);
    p.finish();
    return out;
  }
}

/// The bounds of a tuner's integer parameters, so that each is checked as written before it
/// becomes an int and the tuners' sums and products stay far from overflowing (our choice):
/// - counts of trials (num_samples, population, max_concurrent, points_per_dim, rounds) are at
///   most 100000, the bound of a tuning job's max_trials (tuning_config.cpp): a tuner cannot
///   run more trials than the job has slots;
/// - epochs (min_epochs, max_epochs, perturbation_interval) and eta are at most 10^6 (Fluid's
///   scripts use max_t 1000 and eta 3, SymbioticLab/Fluid workloads/tune_*.py).
inline constexpr std::int64_t kMaxTunerCount = 100000;
inline constexpr std::int64_t kMaxTunerEpochs = 1000000;

/// A trial count in [min, kMaxTunerCount].
inline int read_count(ParamReader& p, const std::string& name, std::int64_t min) {
  return p.integer_in<int>(name, min, kMaxTunerCount);
}

/// The declaration of eta, read by read_eta: 3, the value of every Fluid experiment
/// (SymbioticLab/Fluid workloads/tune_*.py).
inline ParamSpec eta_param(std::string help) {
  return param::integer("eta", 3, std::move(help));
}

/// The declarations of min_epochs (1: Li et al.'s r_min of one epoch, our choice; Ray's
/// grace_period default) and max_epochs (each tuner's own default), read by read_epoch_range;
/// max_epochs alone is read by read_max_epochs.
inline ParamSpec min_epochs_param(std::string help) {
  return param::integer("min_epochs", 1, std::move(help));
}
inline ParamSpec max_epochs_param(std::int64_t fallback, std::string help) {
  return param::integer("max_epochs", fallback, std::move(help));
}

/// eta, the reduction factor of successive halving: in [2, kMaxTunerEpochs].
inline int read_eta(ParamReader& p) {
  return p.integer_in<int>("eta", 2, kMaxTunerEpochs);
}

/// The budgets of a rung-based tuner, epochs: r_min (rung 0) and R (the top rung).
struct EpochRange {
  int min_epochs = 1;
  int max_epochs = 1;
};

/// min_epochs and max_epochs, with 1 <= min_epochs <= max_epochs <= kMaxTunerEpochs.
inline EpochRange read_epoch_range(ParamReader& p) {
  const EpochRange e{p.integer_in<int>("min_epochs", 1, kMaxTunerEpochs),
                     p.integer_in<int>("max_epochs", 1, kMaxTunerEpochs)};
  if (e.max_epochs < e.min_epochs) {
    p.fail("max_epochs", "needs 1 <= min_epochs <= max_epochs");
  }
  return e;
}

/// max_epochs of a tuner whose trials all run one budget: in [1, kMaxTunerEpochs].
inline int read_max_epochs(ParamReader& p) {
  return p.integer_in<int>("max_epochs", 1, kMaxTunerEpochs);
}

}  // namespace gpumux::tuners
