// workload.tuning: parsing a tuning job and expanding it into its trial slots
// (gpumux/engine/tuning_spec.hpp).
#include <limits>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/engine/tuning_spec.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/tuning_config.hpp"

namespace gpumux {

namespace {

/// The largest trial-slot count a tuning job may ask for (our choice: a bound on config
/// mistakes; Fluid's largest workload runs 81 x 5 Hyperband trials, far below it).
constexpr std::int64_t kMaxTrials = 100000;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// The bounds of the learning curve's parameters (our choice): within them every metric the curve
/// gives is a finite number (a metric of y_start = -1e308 and y_best = 1e308 was NaN: their
/// difference overflows; a width of 1e-200 squares to 0, and 0 / 0 is NaN). Real metrics (accuracy,
/// loss, perplexity) sit far inside 1e9; widths are in unit coordinates.
constexpr double kMaxCurveMetric = 1e9;
constexpr double kMinCurveWidth = 1e-6;
constexpr double kMaxCurveWidth = 1e6;

/// `key` of the curve object, or `fallback`, in [lo, hi].
double curve_number(JsonReader& c, const std::string& key, double fallback, double lo, double hi,
                    const char* range) {
  const double v = c.number_or(key, fallback);
  if (!(v >= lo && v <= hi)) {
    c.fail(key, std::string("must be in ") + range + ", got " + nlohmann::json(v).dump());
  }
  return v;
}

LearningCurveParams read_curve(JsonReader& r) {
  LearningCurveParams p;
  if (!r.has("curve")) return p;
  JsonReader c = r.object("curve");
  constexpr double kM = kMaxCurveMetric;
  p.y_start = curve_number(c, "y_start", p.y_start, -kM, kM, "[-1e9, 1e9]");
  p.y_best = curve_number(c, "y_best", p.y_best, -kM, kM, "[-1e9, 1e9]");
  p.width = curve_number(c, "width", p.width, kMinCurveWidth, kMaxCurveWidth, "[1e-6, 1e6]");
  p.alpha_lo = c.positive("alpha_lo", c.number_or("alpha_lo", p.alpha_lo));
  p.alpha_hi = c.positive("alpha_hi", c.number_or("alpha_hi", p.alpha_hi));
  p.noise = curve_number(c, "noise", p.noise, 0.0, kM, "[0, 1e9]");
  if (p.alpha_hi < p.alpha_lo) c.fail("alpha_hi", "must be >= alpha_lo");
  c.finish();
  return p;
}

}  // namespace

std::shared_ptr<const TuningSpec> parse_tuning(const nlohmann::json& j, const std::string& file,
                                               const std::string& path, std::size_t index) {
  JsonReader r(j, file, path);
  auto t = std::make_shared<TuningSpec>();
  t->index = index;
  t->file = file;
  t->path = path;
  t->name = r.required_string("name");
  if (t->name.empty()) r.fail("name", "must not be empty");
  t->tuner = r.required_string("tuner");
  const auto& registry = TunerRegistry::instance();
  if (!registry.contains(t->tuner)) {
    r.fail("tuner", "unknown tuner '" + t->tuner + "'; valid names: " + join(registry.names()));
  }
  if (const auto* params = r.optional("params")) {
    if (!params->is_object()) r.fail("params", "must be an object");
    t->params = *params;
  }
  t->search_space = r.required("search_space");
  t->space = SearchSpace::from_json(t->search_space, file, r.path_of("search_space"));
  t->mode = r.choice_or("mode", kMetricModeNames, MetricMode::Max);
  if (r.has("target")) t->target = r.required_number("target");
  t->curve = read_curve(r);
  t->model = r.required_string("model");
  if (t->model.empty()) r.fail("model", "must not be empty");
  t->batch = r.integer_in_or<std::uint32_t>("batch", 1, 1, 1 << 20);
  t->optimizer = r.choice_or("optimizer", kOptimizerNames, Optimizer::Momentum);
  const std::int64_t samples = r.required_int("samples_per_epoch");
  if (samples < 1) r.fail("samples_per_epoch", "must be >= 1");
  t->samples_per_epoch = static_cast<std::uint64_t>(samples);
  t->max_trials = r.integer_in<std::uint32_t>("max_trials", 1, kMaxTrials);
  t->arrival_ns = r.duration_or("arrival_s", TimeUnit::Seconds, 0);
  t->tenant = r.string_or("tenant", t->name);
  if (t->tenant.empty()) r.fail("tenant", "must not be empty");
  r.finish();

  // Build the tuner once: its params are checked now (ConfigError naming path.params.<key>),
  // not when the run reaches the tuning's arrival.
  TunerArgs args;
  args.params = t->params;
  args.file = file;
  args.path = r.path_of("params");
  args.space = t->space;
  args.mode = t->mode;
  args.target = t->target;
  (void)registry.create(t->tuner, args);
  return t;
}

std::vector<JobSpec> trial_slots(const std::shared_ptr<const TuningSpec>& t) {
  std::vector<JobSpec> out;
  out.reserve(t->max_trials);
  for (std::uint32_t k = 0; k < t->max_trials; ++k) {
    JobSpec job;
    job.name = t->name + "/trial-" + std::to_string(k);
    job.kind = JobKind::Training;
    job.model = t->model;
    job.batch = t->batch;
    job.arrival_ns = t->arrival_ns;
    job.iterations = 0;  // set per activation (JobState::iterations_target)
    job.optimizer = t->optimizer;
    job.tenant = t->tenant;
    job.trial = std::make_shared<const TrialSlot>(TrialSlot{t, k});
    out.push_back(std::move(job));
  }
  return out;
}

}  // namespace gpumux
