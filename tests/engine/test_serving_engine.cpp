// The engine's serving of dynamic DNNs (D38), through a small batching policy
// (serving_batcher.hpp) on the simulated V100: a batch of n requests is one op at n x the
// service's batch, costed by the cost model; an early-exit batch runs lock-step to its deepest
// member's exit (or, compacting, as chained ops at a shrinking batch); an input-length batch
// runs the model at its longest member's padded length; draws are seeded; the online
// execution-time windows hold what completed. Expected values are worked by hand below.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"
#include "serving_batcher.hpp"
#include "test_support.hpp"

using namespace gpumux;
using namespace gpumux::test;

namespace {

// `pairs` groups of `n` requests, a group every 50 ms from 0.1 s (each batch ends well within
// 50 ms on a V100, so batches never queue behind each other).
std::vector<double> groups(std::size_t count, std::size_t n) {
  std::vector<double> out;
  for (std::size_t k = 0; k < count; ++k) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(0.1 + 0.05 * static_cast<double>(k));
  }
  return out;
}

// Exit after resnet50's stem (maxpool) with weight p, else run to fc.
nlohmann::json two_exits(double p, bool compacts) {
  return {{"kind", "early_exit"},
          {"source", "hand-written test distribution"},
          {"exits", {{{"after", "maxpool"}, {"weight", p}}, {{"after", "fc"}, {"weight", 1 - p}}}},
          {"compacts", compacts}};
}

const Model& zoo_model(const std::string& name) {
  static const ModelCatalog zoo(source_dir() / "traces/models");
  return zoo.at(name);
}

std::uint32_t layer_end_of(const Model& m, const std::string& name) {
  for (std::uint32_t l = 0; l < m.layer_count(); ++l) {
    if (m.layer(l).name == name) return l + 1;
  }
  return 0;
}

std::string key(std::uint32_t first, std::uint32_t last, std::uint32_t batch) {
  return std::to_string(first) + "-" + std::to_string(last) + "@" + std::to_string(batch);
}

// Records the cost model's solo time of forward [first, last) at `batch` samples.
void cost_of(Context& ctx, JobId job, LayerRange r, std::uint32_t batch) {
  const DeviceId gpu = ctx.gpus().front();
  g_seen.costs[key(r.first, r.last, batch)] =
      ctx.cost(gpu).op_ns(ctx.job(job).model(), r, batch, Pass::Forward, true);
}

}  // namespace

TEST_CASE("A batch of n requests is one op at n x the service's batch", "[serving]") {
  // resnet50 at 4 samples per request; batches of 3 requests: ops at 12 samples.
  g_plan = ServingPlan{};
  g_plan.batch = 3;
  DurationNs estimate = 0;
  g_plan.at_arrival = [&estimate](Context& ctx, JobId job) {
    const std::uint32_t n = ctx.job(job).model().layer_count();
    cost_of(ctx, job, {0, n}, 12);
    cost_of(ctx, job, {0, n}, 4);
    estimate = ctx.serving().estimate_batch_ns(job, ctx.gpus().front(), 3);
  };
  const auto result = run_batcher(serving_service("resnet50", 4, groups(5, 3)));
  const std::uint32_t n = zoo_model("resnet50").layer_count();
  const DurationNs at12 = g_seen.costs.at(key(0, n, 12));
  CHECK(at12 > g_seen.costs.at(key(0, n, 4)));  // the batch size matters
  CHECK(estimate == at12);

  const auto ops = forward_ops(result);
  REQUIRE(ops.size() == 5);
  const auto ends = request_ends(result);
  REQUIRE(ends.size() == 15);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    INFO("batch " << k);
    CHECK(ops[k].layers == LayerRange{0, n});
    CHECK(ops[k].duration_ns() == at12);
    for (std::uint64_t r = 3 * k; r < 3 * k + 3; ++r) CHECK(ends.at(r) == ops[k].end_ns);
  }
  // The window of 3-request batches holds each batch's device time; a request's
  // solo-equivalent time is the whole model at the service's own batch.
  CHECK(g_seen.batch_window_added == 5);
  CHECK(g_seen.batch_window == std::vector<DurationNs>(5, at12));
  CHECK(g_seen.request_window == std::vector<DurationNs>(15, g_seen.costs.at(key(0, n, 4))));
}

TEST_CASE("Batches of different sizes in flight at once complete their own members", "[serving]") {
  // Four requests at 0.1 s: a batch of 3 is dispatched at the third, a batch of 1 at the
  // fourth, while the first is in flight; the second runs after it (a job's ops run in order).
  g_plan = ServingPlan{};
  g_plan.sizes = {3, 1};
  g_plan.at_arrival = [](Context& ctx, JobId job) {
    const std::uint32_t n = ctx.job(job).model().layer_count();
    cost_of(ctx, job, {0, n}, 3);
    cost_of(ctx, job, {0, n}, 1);
  };
  const auto result = run_batcher(serving_service("resnet50", 1, {0.1, 0.1, 0.1, 0.1}));
  const std::uint32_t n = zoo_model("resnet50").layer_count();
  const auto ops = forward_ops(result);
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].duration_ns() == g_seen.costs.at(key(0, n, 3)));
  CHECK(ops[1].duration_ns() == g_seen.costs.at(key(0, n, 1)));
  CHECK(ops[1].start_ns >= ops[0].end_ns);
  const auto ends = request_ends(result);
  REQUIRE(ends.size() == 4);
  for (std::uint64_t r = 0; r < 3; ++r) CHECK(ends.at(r) == ops[0].end_ns);
  CHECK(ends.at(3) == ops[1].end_ns);
  CHECK(g_seen.size_windows.at(3) == std::vector<DurationNs>{ops[0].duration_ns()});
  CHECK(g_seen.size_windows.at(1) == std::vector<DurationNs>{ops[1].duration_ns()});
  CHECK(g_seen.request_window == std::vector<DurationNs>(4, g_seen.costs.at(key(0, n, 1))));
}

TEST_CASE("Lock-step early exit: a batch of two runs to the deeper exit, 1 - p^2 of the time",
          "[serving]") {
  // Each request exits at the stem with p = 0.4, else runs the whole network. A batch of two
  // runs shallow only when both members exit early: P(deep) = 1 - 0.4^2 = 0.84.
  const double p = 0.4;
  const std::size_t batches = 400;
  const Model& m = zoo_model("resnet50");
  const std::uint32_t shallow = layer_end_of(m, "maxpool");
  const std::uint32_t deep = m.layer_count();
  REQUIRE(shallow > 0);
  g_plan = ServingPlan{};
  g_plan.batch = 2;
  g_plan.at_arrival = [&](Context& ctx, JobId job) {
    for (std::uint32_t end : {shallow, deep}) {
      cost_of(ctx, job, {0, end}, 2);
      cost_of(ctx, job, {0, end}, 1);
    }
  };
  auto svc = serving_service("resnet50", 1, groups(batches, 2));
  svc["dynamic"] = two_exits(p, false);
  const auto result = run_batcher(svc);
  const auto work = drawn_work(svc["dynamic"], m, 7, 0, 2 * batches);

  const auto ops = forward_ops(result);
  REQUIRE(ops.size() == batches);
  std::size_t deep_batches = 0;
  std::vector<DurationNs> request_times;
  for (std::size_t k = 0; k < batches; ++k) {
    INFO("batch " << k << ": exits " << work[2 * k] << ", " << work[2 * k + 1]);
    const std::uint32_t end = std::max(work[2 * k], work[2 * k + 1]);
    CHECK(ops[k].layers == LayerRange{0, end});
    CHECK(ops[k].duration_ns() == g_seen.costs.at(key(0, end, 2)));
    if (ops[k].layers.last == deep) ++deep_batches;
    for (std::size_t i = 2 * k; i < 2 * k + 2; ++i) {
      request_times.push_back(g_seen.costs.at(key(0, work[i], 1)));
    }
  }
  const double q = 1 - p * p;
  const double sd = std::sqrt(static_cast<double>(batches) * q * (1 - q));
  INFO(deep_batches << " deep batches of " << batches);
  CHECK(std::fabs(static_cast<double>(deep_batches) - static_cast<double>(batches) * q) <= 5 * sd);
  CHECK(deep_batches < batches);  // some batches did exit early
  CHECK(request_ends(result).size() == 2 * batches);

  // The windows: one sample per batch (its op's time), one per request (its own exit alone).
  REQUIRE(g_seen.batch_window.size() == batches);
  for (std::size_t k = 0; k < batches; ++k) CHECK(g_seen.batch_window[k] == ops[k].duration_ns());
  CHECK(g_seen.request_window == request_times);
}

TEST_CASE("Compacting early exit: members that exit leave, the rest run on at batch 1",
          "[serving]") {
  const std::size_t batches = 100;
  const Model& m = zoo_model("resnet50");
  const std::uint32_t shallow = layer_end_of(m, "maxpool");
  const std::uint32_t deep = m.layer_count();
  g_plan = ServingPlan{};
  g_plan.batch = 2;
  g_plan.at_arrival = [&](Context& ctx, JobId job) {
    cost_of(ctx, job, {0, shallow}, 2);
    cost_of(ctx, job, {0, deep}, 2);
    cost_of(ctx, job, {shallow, deep}, 1);
  };
  auto svc = serving_service("resnet50", 1, groups(batches, 2));
  svc["dynamic"] = two_exits(0.5, true);
  const auto result = run_batcher(svc);
  const auto work = drawn_work(svc["dynamic"], m, 7, 0, 2 * batches);

  const auto ops = forward_ops(result);
  std::size_t next = 0;
  std::size_t split = 0;
  for (std::size_t k = 0; k < batches; ++k) {
    const std::uint32_t lo = std::min(work[2 * k], work[2 * k + 1]);
    const std::uint32_t hi = std::max(work[2 * k], work[2 * k + 1]);
    INFO("batch " << k << ": exits " << lo << ", " << hi);
    REQUIRE(next < ops.size());
    CHECK(ops[next].layers == LayerRange{0, lo});
    CHECK(ops[next].duration_ns() == g_seen.costs.at(key(0, lo, 2)));
    DurationNs batch_ns = ops[next].duration_ns();
    ++next;
    if (lo != hi) {
      // The member still in the batch runs [lo, hi) alone, after the first op.
      ++split;
      REQUIRE(next < ops.size());
      CHECK(ops[next].layers == LayerRange{lo, hi});
      CHECK(ops[next].duration_ns() == g_seen.costs.at(key(lo, hi, 1)));
      CHECK(ops[next].start_ns >= ops[next - 1].end_ns);
      batch_ns += ops[next].duration_ns();
      ++next;
    }
    REQUIRE(k < g_seen.batch_window.size());
    CHECK(g_seen.batch_window[k] == batch_ns);  // a batch's sample sums its ops
  }
  CHECK(next == ops.size());
  CHECK(split > 0);
  CHECK(split < batches);
}

TEST_CASE("Input length: a batch runs the model at its longest member's padded length",
          "[serving]") {
  // Lengths 20, 60, 200 tokens, padded to multiples of 16: 32, 64, 208.
  const nlohmann::json dynamic = {{"kind", "input_length"},
                                  {"source", "hand-written test distribution"},
                                  {"bucket", 16},
                                  {"max_tokens", 256},
                                  {"lengths",
                                   {{{"tokens", 20}, {"weight", 1}},
                                    {{"tokens", 60}, {"weight", 1}},
                                    {{"tokens", 200}, {"weight", 1}}}}};
  const std::size_t batches = 60;
  const Model& base = zoo_model("bert_base");
  std::map<std::uint32_t, DurationNs> at_length;
  g_plan = ServingPlan{};
  g_plan.batch = 2;
  g_plan.at_arrival = [&](Context& ctx, JobId) {
    for (std::uint32_t t : {32U, 64U, 208U}) {
      const Model variant = at_sequence_length(base, t);
      at_length[t] = ctx.cost(ctx.gpus().front())
                         .op_ns(variant, {0, variant.layer_count()}, 2, Pass::Forward, true);
    }
  };
  auto svc = serving_service("bert_base", 1, groups(batches, 2));
  svc["dynamic"] = dynamic;
  const auto result = run_batcher(svc);
  const auto work = drawn_work(dynamic, base, 7, 0, 2 * batches);
  CHECK(at_length.at(32) < at_length.at(64));
  CHECK(at_length.at(64) < at_length.at(208));

  const auto ops = forward_ops(result);
  REQUIRE(ops.size() == batches);
  std::map<std::uint32_t, int> seen;
  for (std::size_t k = 0; k < batches; ++k) {
    const std::uint32_t longest = std::max(work[2 * k], work[2 * k + 1]);
    INFO("batch " << k << ": lengths " << work[2 * k] << ", " << work[2 * k + 1]);
    CHECK(ops[k].layers == LayerRange{0, base.layer_count()});
    CHECK(ops[k].duration_ns() == at_length.at(longest));
    ++seen[longest];
  }
  CHECK(seen.size() == 3);  // every padded length was the longest of some batch
}

TEST_CASE("The same seed gives byte-identical logs, another seed other draws", "[serving]") {
  g_plan = ServingPlan{};
  g_plan.batch = 2;
  auto svc = serving_service("resnet50", 1, groups(60, 2));
  svc["dynamic"] = two_exits(0.5, false);
  const auto a = run_batcher(svc, 7);
  const auto b = run_batcher(svc, 7);
  CHECK(events_jsonl(a) == events_jsonl(b));
  CHECK(a.summary.dump() == b.summary.dump());
  const auto c = run_batcher(svc, 8);
  std::vector<std::uint32_t> ends_a, ends_c;
  for (const auto& op : forward_ops(a)) ends_a.push_back(op.layers.last);
  for (const auto& op : forward_ops(c)) ends_c.push_back(op.layers.last);
  REQUIRE(ends_a.size() == 60);
  REQUIRE(ends_c.size() == 60);
  CHECK(ends_a != ends_c);
  CHECK(events_jsonl(a) != events_jsonl(c));
}
