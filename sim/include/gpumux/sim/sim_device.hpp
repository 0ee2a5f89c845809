// A simulated GPU or CPU (profile.kind) of platform "sim". It follows the device contract of
// core/api/include/gpumux/api/device.hpp (streams, FIFO, notifications, drop and abort); this
// header states what the simulator adds: phases, timing and sharing.
//
// Streams and ops
//   As in device.hpp. The head spends `setup_ns` (host-side, uses no resource), then is
//   reported started (on_op_started) and enters its main phase:
//   - Host: a pure delay of solo_ns.
//   - Compute: solo_ns of work on the compute engine at a rate in [0, 1] (sharing below).
//   - CopyH2D / CopyD2H: a fixed latency (h2d_latency_ns / d2h_latency_ns, no bandwidth used),
//     then `bytes` over that direction of the host link (h2d_gbps / d2h_gbps bytes per ns).
//     Copies in one direction share it max-min fairly, each capped at the full bandwidth
//     (pinned) or bandwidth x pageable_factor (op.pageable). The directions are independent.
//   - CopyD2D (to op.peer): d2h latency, then `bytes` on the D2H direction, capped at peer_gbps.
//   A CPU device has no link: submitting a copy to it throws std::logic_error.
//
// Compute sharing (GPU)
//   Every non-MPS context is its own time-slice group (TSG); all MPS contexts share one TSG.
//   When runnable compute (heads in their main phase) belongs to several TSGs, one TSG holds the
//   GPU at a time: it keeps it for timeslice_ns from when it got it, as long as another TSG has
//   runnable compute; then the GPU goes round-robin (TSG registration order, after the current
//   one) to the next TSG with runnable compute, after context_switch_ns during which no compute
//   progresses. (A TSG that ran alone past its slice is switched out as soon as another TSG
//   gets runnable compute.) A TSG with no runnable compute while another has some loses the GPU at
//   once. A lone TSG runs unbounded; getting the GPU back after another TSG had it costs a switch,
//   the very first activation is free. timeslice_ns <= 0 means no preemption (a TSG keeps the GPU
//   until it runs out of runnable compute). Copies and host ops are not time-sliced.
//   Notes to the observer: "context_switch" (value: target TSG) when a paid switch begins,
//   "timeslice" (value: TSG index) whenever a TSG gets the GPU, the first activation included.
//   Within the TSG holding the GPU (streams of one context, or all MPS clients) ops share at
//   kernel level (kernel_share.hpp): with two or more running, each op's kernels wait for the
//   others' GPU-filling kernels to retire (op.kernel_wait_ns, or kernel_wait_priority_ns for a
//   kernel of higher stream priority), which gives each op a speed s <= 1. Then capacity 1.0
//   is divided by stream priority: levels from the most urgent (largest) down, each
//   water-filling what is left among its ops with cap = demand x (gpu_ns / solo_ns) x s;
//   rate = s x share / cap. Ops without kernel data (kernels == 0) keep s = 1 and share by
//   demand alone. When two or more ops get a non-zero share, every rate is multiplied by
//   mps_efficiency (MPS TSG) or concurrent_efficiency (any other TSG).
// Compute sharing (CPU)
//   No time slicing: the same priority water-filling over capacity 1.0 (all cores; demand =
//   fraction of cores) across all contexts, with concurrent_efficiency for 2+ ops.
//
// Progress (SimGrid-style)
//   On every change the device advances each running activity's remaining work by
//   elapsed x rate, recomputes all rates and keeps ONE runtime timer at the earliest completion
//   (rounded up to a whole ns), phase end or slice boundary. An op alone at rate 1 finishes at
//   exactly start + solo_ns; a lone copy at start + latency + ceil(bytes / bandwidth).
//   Submits, drops and dependency changes are evaluated in a runtime event at the current time,
//   so the observer is never called back from inside submit() or dependencies_changed().
//
// Completion and abort
//   As in device.hpp. A finished op leaves its stream and is reported once (status Ok). The
//   simulator stops an aborted op at once: abort() reports every op of the job (queued and
//   issued) Aborted synchronously, before it returns (started = finished = now unless the op
//   had started), so its memory may be released at the same instant.
//
// Thread rules: runtime thread only. Times are ns, bandwidths bytes per ns (= GB/s).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "gpumux/api/device.hpp"
#include "gpumux/api/runtime.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/queued_device.hpp"
#include "gpumux/model/stream_queues.hpp"
#include "gpumux/sim/active_streams.hpp"
#include "gpumux/sim/kernel_share.hpp"
#include "gpumux/sim/sim_runtime.hpp"

namespace gpumux {

/// SimDevice's op and stream state (StreamQueues' payload types, named before the class
/// because its base QueuedDevice takes them).
namespace sim_device_detail {

enum class Phase : std::uint8_t { Queued, Waiting, Setup, Latency, Running };
enum class Resource : std::uint8_t { None, Compute, H2D, D2H };

struct OpState {
  OpSpec spec;
  TimeNs submitted_ns = 0;
  TimeNs started_ns = 0;
  TimeNs phase_end_ns = 0;   ///< Setup, Latency, and a Host op's main phase
  TimeNs finish_ns = 0;      ///< fluid main phase: projected completion at `rate`
  double remaining = 0;      ///< fluid main phase: ns of solo work, or bytes
  double rate = 0;           ///< units per ns
  double cap = 0;            ///< compute: demand; copies: per-copy bandwidth cap
  std::uint32_t stream = 0;  ///< stream index in queues_
  Phase phase = Phase::Queued;
  Resource resource = Resource::None;
};

struct StreamState : QueuedStream {
  std::uint32_t tsg = 0;
};

}  // namespace sim_device_detail

class SimDevice final
    : public QueuedDevice<sim_device_detail::OpState, sim_device_detail::StreamState> {
 public:
  /// `runtime` must outlive the device. Throws std::invalid_argument for a profile whose
  /// concurrent_efficiency (GPU: also mps_efficiency, pageable_factor) is not positive.
  SimDevice(DeviceId id, DeviceProfile profile, Runtime& runtime);
  ~SimDevice() override;

  /// Each context is a TSG, MPS ones share one. Throws std::invalid_argument for a duplicate.
  void add_context(ContextId ctx, ContextOptions options) override;
  /// Throws std::invalid_argument for a duplicate stream, an unknown context or
  /// max_in_flight == 0.
  void add_stream(StreamId stream, ContextId ctx, StreamOptions options) override;

  /// Throws std::invalid_argument (unknown stream, wrong device, negative times, compute demand
  /// outside (0, 1]), std::logic_error (no observer set; a copy on a CPU or over a link of
  /// zero bandwidth).
  void submit(const OpSpec& op) override;
  void dependencies_changed() override;

  /// Paid context switches so far (GPU time slicing).
  [[nodiscard]] std::uint64_t context_switches() const noexcept { return context_switches_; }

 private:
  using Phase = sim_device_detail::Phase;
  using Resource = sim_device_detail::Resource;

  // Small and built field by field (no zero-filled OpRecord per start): a finished op's
  // record lives in finished_, at index `value`.
  struct Notice {
    enum class Kind : std::uint8_t { Started, Finished, Note, Void } kind;
    OpId op;             ///< Started, Finished
    std::int64_t value;  ///< Note: the value; Finished: index into finished_
    TimeNs when_ns;
    std::string_view what;  ///< Note (a literal)
  };

  void issue(StreamState& s);
  /// issue() when a finished head made room at `now`: an op it issues waited in the host
  /// queue, so it cannot start before now + host_round_trip_ns (kept in phase_end_ns, which
  /// a waiting op does not use otherwise; 0 when issued at submit).
  void issue_after_completion(StreamState& s, TimeNs now);
  [[nodiscard]] bool dependencies_met(const OpState& op) const;
  [[nodiscard]] OpRecord make_record(const OpState& op, OpStatus status, TimeNs now) const;

  void request_evaluate();
  void on_timer();
  void evaluate();
  void advance(TimeNs now) noexcept;
  /// Advances each active stream's head by `dt` ns at its rate, steps it, and lists the new
  /// heads (running_*, runnable_ and runnable_list_, next_phase_end_, waiting_heads_).
  void step_streams(TimeNs now, double dt);
  void step_stream(StreamState& s, TimeNs now);
  void update_timeslice(TimeNs now);
  void begin_switch(std::uint32_t target, TimeNs now);
  void give_gpu(std::uint32_t tsg, TimeNs now);
  /// solve_rates, then next_finish_ns_.
  void recompute_rates(TimeNs now);
  void solve_rates(TimeNs now);
  struct Running {
    std::uint32_t op = 0;      ///< slot
    std::uint32_t stream = 0;  ///< stream index
  };
  void share_link(const std::vector<Running>& ops, double bandwidth, TimeNs now);
  void share_links(TimeNs now);  ///< each link direction among its copies (GPU)
  void deliver_notices();
  void schedule_next();
  void set_timer(TimeNs when_ns);
  std::size_t remove_job(JobId job, bool issued_too) override;

  Runtime& runtime_;

  std::map<ContextId, std::uint32_t> context_tsg_;  ///< context -> TSG index
  std::vector<bool> tsg_mps_;                       ///< per TSG, in registration order
  std::int64_t mps_tsg_ = -1;

  // progress
  TimeNs last_update_ = 0;
  /// The runtime as a SimRuntime, or nullptr: the device's timer is then a re-armable one
  /// (moved without heap work), else an ordinary cancel-and-reschedule timer.
  SimRuntime* sim_runtime_ = nullptr;
  std::uint32_t rearmable_ = 0;  ///< sim_runtime_'s timer handle
  TimerId timer_{};
  TimeNs timer_ns_ = kTimeNever;
  bool in_evaluate_ = false;
  bool dirty_ = false;
  std::vector<Notice> notices_;
  std::vector<OpRecord> finished_;  ///< records of the Finished notices in notices_
  std::size_t delivering_ = 0;      ///< index of the notice being delivered

  // time slicing (GPU)
  std::int64_t loaded_ = -1;  ///< TSG holding (or last holding) the GPU; -1 before the first
  TimeNs slice_start_ns_ = 0;
  bool switching_ = false;
  std::uint32_t switch_target_ = 0;
  TimeNs switch_end_ns_ = 0;
  std::uint64_t context_switches_ = 0;

  // scratch for rate computation (reused: no allocation per event)
  std::vector<std::uint32_t> scratch_ops_;
  std::vector<int> scratch_prio_;
  std::vector<double> scratch_caps_;
  std::vector<double> scratch_shares_;
  std::vector<double> scratch_speeds_;
  std::vector<KernelLoad> scratch_loads_;
  double kernel_wait_total_ = 0;              ///< warm start of kernel_wait_speeds
  std::vector<std::uint8_t> runnable_;        ///< per TSG
  std::vector<std::uint32_t> runnable_list_;  ///< the TSGs with runnable_ set, unordered
  ActiveStreams active_;                      ///< streams with issued ops
  // the heads as the last pass left them (step_streams): in their main phase by resource,
  // stream order; the earliest end of a Setup, Latency or Host phase; how many wait
  TimeNs next_phase_end_ = kTimeNever;
  std::size_t waiting_heads_ = 0;
  // from recompute_rates: the earliest finish_ns of the running lists; whether solving again
  // on the same running set gives the same rates bit for bit
  TimeNs next_finish_ns_ = kTimeNever;
  bool rates_idempotent_ = true;
  /// Set by what may change a head since the pass began (a new head, a removal, a
  /// dependency); a pass at the same instant without it repeats the last one.
  bool heads_changed_ = false;
  std::vector<Running> running_compute_;
  std::vector<Running> running_h2d_;
  std::vector<Running> running_d2h_;
  // The two directions' bandwidths (copy_link), shared by the copies running on each.
  double h2d_link_gbps_ = 0;
  double d2h_link_gbps_ = 0;
};

}  // namespace gpumux
