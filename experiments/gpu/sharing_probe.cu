// sharing_probe: how a small kernel reaches a GPU that another kernel fills, on the real card.
// It measures what docs/fidelity.md ("How the GPU shares itself") compares with the device
// model (block placement between streams, and time slicing between processes):
//   solo       a 1-block kernel alone: launch-to-end latency (the floor);
//   priority   the same kernel on the greatest-priority stream, arriving 0.5, 1.0 .. 9.5 ms
//              into a least-priority kernel of 10 waves of 1 ms blocks that fills every SM of
//              the same context: CUDA says priority orders pending blocks and never preempts
//              running ones, so it should wait for the running wave (to the next 1 ms boundary);
//   equal      the same with both streams at one priority: it should wait for the whole low
//              kernel (FIFO), 10 ms less its arrival;
//   process    the 1-block kernel from a second process (its own context, no MPS), 0.25 ..
//              4.75 ms after the first process launched the same low kernel: the GPU
//              time-slices the two contexts (timed on the host: a context off the GPU may not
//              even record its first event);
//   slices     both processes run one wave of 50 ms blocks at once; thread 0 of block 0 of each
//              reads %globaltimer in a loop, and a jump over 2 us is time its context was off
//              the GPU: the gaps give the other context's slice plus the switches, the runs
//              between gaps its own slice.
// Units: ns on the GPU's global timer, ms in the printed tables. Single-threaded host code per
// process; the two processes meet through two pipes. Build: the CMake target
// gpumux_sharing_probe (CUDA builds), or nvcc -O2 -arch=sm_90 -std=c++17; session.sh step
// `sharing` runs it. Output: tables on stdout and raw rows in the CSV named by argv[1] (the
// child's in the same name + ".child").
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

namespace {

constexpr std::uint64_t kBlockNs = 1'000'000;        // low kernel: each block spins 1 ms
constexpr std::uint64_t kSliceBlockNs = 50'000'000;  // slices: each block spins 50 ms
constexpr std::uint64_t kGapNs = 2'000;  // a longer jump of the timer is time off the GPU
constexpr int kWaves = 10;
constexpr int kReps = 19;  // arrivals 0.5, 1.0 .. 9.5 ms into the low kernel
constexpr int kMaxGaps = 4096;
constexpr int kThreads = 1024;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "sharing_probe: %s: %s (%s)\n", what, cudaGetErrorName(e),
                 cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CHECK(call) check((call), #call)

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Every thread spins `block_ns`, so the block holds its SM slot until then. Thread 0 of each
/// block records when the block ran; thread 0 of block 0 also records the timer's jumps.
__global__ void spin(std::uint64_t block_ns, std::uint64_t* first_start, std::uint64_t* last_end,
                     std::uint64_t* gaps, unsigned int* gap_count) {
  const std::uint64_t t0 = global_ns();
  std::uint64_t last = t0, t = t0;
  const bool tracer = blockIdx.x == 0 && threadIdx.x == 0 && gaps != nullptr;
  while (t - t0 < block_ns) {
    t = global_ns();
    if (tracer && t - last > kGapNs) {
      const unsigned int i = *gap_count;
      if (i < kMaxGaps) {
        gaps[2 * i] = last;
        gaps[2 * i + 1] = t;
        *gap_count = i + 1;
      }
    }
    last = t;
  }
  if (threadIdx.x == 0) {
    atomicMin(reinterpret_cast<unsigned long long*>(first_start), t0);
    atomicMax(reinterpret_cast<unsigned long long*>(last_end), t);
  }
}

/// The small kernel: one block of one warp that notes when it started.
__global__ void probe(std::uint64_t* started) {
  if (threadIdx.x == 0) *started = global_ns();
}

struct Device {
  int sms = 0, per_sm = 0, least = 0, greatest = 0;
  cudaStream_t low = nullptr, high = nullptr, equal = nullptr;
  cudaEvent_t before = nullptr, after = nullptr, low_start = nullptr;
  std::uint64_t* word = nullptr;  // [0] probe start, [1] low first start, [2] low last end
  std::uint64_t* gaps = nullptr;
  unsigned int* gap_count = nullptr;

  Device() {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    sms = prop.multiProcessorCount;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin, kThreads, 0));
    if (per_sm * kThreads != prop.maxThreadsPerMultiProcessor) {
      // The low kernel must leave no thread slot free, or the probe runs beside it and every
      // wait reads near zero (e.g. 1536 threads per SM on sm_86/89 cards).
      std::fprintf(stderr,
                   "sharing_probe: %d blocks of %d threads do not fill an SM of %d threads\n",
                   per_sm, kThreads, prop.maxThreadsPerMultiProcessor);
      std::exit(2);
    }
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(cudaStreamCreateWithPriority(&low, cudaStreamNonBlocking, least));
    CHECK(cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, greatest));
    CHECK(cudaStreamCreateWithPriority(&equal, cudaStreamNonBlocking, least));
    CHECK(cudaEventCreate(&before));
    CHECK(cudaEventCreate(&after));
    CHECK(cudaEventCreate(&low_start));
    CHECK(cudaMalloc(&word, 3 * sizeof(std::uint64_t)));
    CHECK(cudaMalloc(&gaps, 2 * kMaxGaps * sizeof(std::uint64_t)));
    CHECK(cudaMalloc(&gap_count, sizeof(unsigned int)));
    probe<<<1, 32, 0, high>>>(word);  // load the module before anything is timed
    spin<<<1, 32, 0, low>>>(1000, word + 1, word + 2, nullptr, nullptr);
    CHECK(cudaDeviceSynchronize());
  }
  int full_grid(int waves) const { return waves * sms * per_sm; }

  void reset_marks() {
    const std::uint64_t init[3] = {0, ~std::uint64_t{0}, 0};
    CHECK(cudaMemcpy(word, init, sizeof(init), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(gap_count, 0, sizeof(unsigned int)));
  }
  void launch_low(cudaStream_t s, int grid, std::uint64_t block_ns, bool trace) {
    spin<<<grid, kThreads, 0, s>>>(block_ns, word + 1, word + 2, trace ? gaps : nullptr,
                                   trace ? gap_count : nullptr);
    CHECK(cudaGetLastError());
  }
  /// Launches the probe on `s` between two events. Returns its latency in ms between the events
  /// and, on the host, from before the first event's record to after the second's
  /// synchronisation (a context off the GPU may not even record the first event).
  std::pair<double, double> time_probe(cudaStream_t s) {
    const auto host0 = std::chrono::steady_clock::now();
    CHECK(cudaEventRecord(before, s));
    probe<<<1, 32, 0, s>>>(word);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(after, s));
    CHECK(cudaEventSynchronize(after));
    const auto host1 = std::chrono::steady_clock::now();
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, before, after));
    return {ms, std::chrono::duration<double, std::milli>(host1 - host0).count()};
  }
  std::vector<std::uint64_t> marks() {
    std::vector<std::uint64_t> m(3);
    CHECK(cudaMemcpy(m.data(), word, 3 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    return m;
  }
  std::vector<std::uint64_t> read_gaps() {
    unsigned int n = 0;
    CHECK(cudaMemcpy(&n, gap_count, sizeof(n), cudaMemcpyDeviceToHost));
    n = std::min<unsigned int>(n, kMaxGaps);
    std::vector<std::uint64_t> g(2 * n);
    if (n > 0) {
      CHECK(cudaMemcpy(g.data(), gaps, g.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    }
    return g;
  }
};

void sleep_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Csv {
  std::FILE* f;
  void row(const std::string& experiment, int rep, const std::string& what, double value) {
    std::fprintf(f, "%s,%d,%s,%.6f\n", experiment.c_str(), rep, what.c_str(), value);
  }
};

/// One pipe each way between the processes; a byte is a step.
struct Pipes {
  int to_child[2], to_parent[2];
  void send(int fd) const {
    const char c = 1;
    if (write(fd, &c, 1) != 1) {  // SIGPIPE is ignored: a dead peer gives an error here
      std::fprintf(stderr, "sharing_probe: the other process ended early\n");
      std::exit(1);
    }
  }
  void wait(int fd) const {
    char c = 0;
    if (read(fd, &c, 1) != 1) {  // the other process ended early (its error is on stderr)
      std::fprintf(stderr, "sharing_probe: the other process ended early\n");
      std::exit(1);
    }
  }
};

/// The waits the block-level model predicts for a probe arriving `a` ms into the low kernel of
/// kWaves waves of 1 ms blocks: the next wave boundary with the greatest priority (pending
/// blocks of the greater priority go first, running ones finish), the kernel's end with equal
/// priority (FIFO: every pending low block goes first).
double predicted_wait_ms(bool priority, double a) {
  return std::max(0.0, priority ? std::ceil(a) - a : kWaves - a);
}

/// Same context: the probe on the high (or equal) stream while the low kernel fills the GPU,
/// arriving 0.5, 1.0 .. 9.5 ms after the low kernel starts (the event before it).
void same_context(Device& d, Csv& csv, const char* name, cudaStream_t s, bool priority,
                  std::vector<double>* lat, std::vector<double>* host) {
  std::printf("\n%s: arrival (ms after the low kernel's start), wait (ms), model (ms)\n", name);
  double error = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    d.reset_marks();
    CHECK(cudaEventRecord(d.low_start, d.low));
    d.launch_low(d.low, d.full_grid(kWaves), kBlockNs, false);
    sleep_ms(0.5 + 0.5 * rep);  // every SM holds a running block, more are pending
    const auto [ms, host_ms] = d.time_probe(s);
    CHECK(cudaDeviceSynchronize());
    const auto m = d.marks();
    float arrival = 0;
    CHECK(cudaEventElapsedTime(&arrival, d.low_start, d.before));
    const double model = predicted_wait_ms(priority, arrival);
    error += std::abs(ms - model);
    std::printf("  %6.3f %8.3f %8.3f\n", arrival, ms, model);
    lat->push_back(ms);
    host->push_back(host_ms);
    csv.row(name, rep, "arrival_ms", arrival);
    csv.row(name, rep, "latency_ms", ms);
    csv.row(name, rep, "model_ms", model);
    csv.row(name, rep, "host_latency_ms", host_ms);
    csv.row(name, rep, "probe_after_low_start_ms", (double(m[0]) - double(m[1])) / 1e6);
    csv.row(name, rep, "low_end_after_probe_ms", (double(m[2]) - double(m[0])) / 1e6);
  }
  std::printf("  mean |wait - model| %.3f ms\n", error / kReps);
}

/// The child process: its own context; runs the probe or a slice wave when told.
void child(Pipes p, const char* csv_path) {
  Device d;
  Csv csv{std::fopen((std::string(csv_path) + ".child").c_str(), "w")};
  if (csv.f == nullptr) std::exit(1);
  p.send(p.to_parent[1]);  // ready
  for (int rep = 0; rep < kReps; ++rep) {
    p.wait(p.to_child[0]);
    sleep_ms(0.25 * (rep + 1));  // 0.25 .. 4.75 ms after the other context's kernel launch
    const auto [ms, host_ms] = d.time_probe(d.high);
    csv.row("process", rep, "offset_ms", 0.25 * (rep + 1));
    csv.row("process", rep, "latency_ms", ms);
    csv.row("process", rep, "host_latency_ms", host_ms);
    p.send(p.to_parent[1]);
  }
  p.wait(p.to_child[0]);  // slices
  d.reset_marks();
  d.launch_low(d.low, d.sms * d.per_sm, kSliceBlockNs, true);
  CHECK(cudaDeviceSynchronize());
  const auto g = d.read_gaps();
  const std::uint64_t origin = d.marks()[1];  // the wave's first start: small, exact numbers
  for (std::size_t i = 0; i + 1 < g.size(); i += 2) {
    csv.row("slices_child", static_cast<int>(i / 2), "gap_start_ns", double(g[i] - origin));
    csv.row("slices_child", static_cast<int>(i / 2), "gap_end_ns", double(g[i + 1] - origin));
  }
  std::fclose(csv.f);
  p.send(p.to_parent[1]);
  std::exit(0);
}

/// Gap lengths and the runs between them, in ms, from a flat [start, end, start, end...] list.
/// The first and last gaps are left out of `off`: they can be cut short by the other process
/// starting or ending its wave.
void slice_stats(const std::vector<double>& g, std::vector<double>* off, std::vector<double>* on) {
  const std::size_t gaps = g.size() / 2;
  for (std::size_t k = 0; k < gaps; ++k) {
    if (k > 0 && k + 1 < gaps) off->push_back((g[2 * k + 1] - g[2 * k]) / 1e6);
    if (k > 0) on->push_back((g[2 * k] - g[2 * k - 1]) / 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* csv_path = argc > 1 ? argv[1] : "sharing_probe.csv";
  std::signal(SIGPIPE, SIG_IGN);  // a write to a dead peer fails instead of killing silently
  Pipes p{};
  if (pipe(p.to_child) != 0 || pipe(p.to_parent) != 0) return 1;
  const pid_t pid = fork();  // before any CUDA call: a child may not inherit a context
  if (pid < 0) return 1;
  if (pid == 0) {
    close(p.to_child[1]);  // each side keeps only its own ends, so a dead peer reads as EOF
    close(p.to_parent[0]);
    child(p, csv_path);
  }
  close(p.to_child[0]);
  close(p.to_parent[1]);
  p.wait(p.to_parent[0]);  // the child has its context
  Device d;
  Csv csv{std::fopen(csv_path, "w")};
  if (csv.f == nullptr) return 1;
  std::fprintf(csv.f, "experiment,rep,what,value\n");
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s: %d SMs, %d blocks of %d threads per SM, stream priorities %d (least) .. %d\n",
              prop.name, d.sms, d.per_sm, kThreads, d.least, d.greatest);
  std::printf("low kernel: %d waves of 1 ms blocks (%d blocks)\n", kWaves, d.full_grid(kWaves));

  std::vector<double> solo, prio, equal, process, solo_h, prio_h, equal_h, process_h;
  for (int rep = 0; rep < kReps; ++rep) {
    const auto [ms, host_ms] = d.time_probe(d.high);
    solo.push_back(ms);
    solo_h.push_back(host_ms);
    csv.row("solo", rep, "latency_ms", ms);
    csv.row("solo", rep, "host_latency_ms", host_ms);
  }
  same_context(d, csv, "priority", d.high, true, &prio, &prio_h);
  same_context(d, csv, "equal", d.equal, false, &equal, &equal_h);
  for (int rep = 0; rep < kReps; ++rep) {
    d.reset_marks();
    d.launch_low(d.low, d.full_grid(kWaves), kBlockNs, false);
    p.send(p.to_child[1]);
    CHECK(cudaDeviceSynchronize());
    p.wait(p.to_parent[0]);
  }
  // Slices: both contexts run one full wave of 50 ms blocks at once.
  d.reset_marks();
  p.send(p.to_child[1]);
  d.launch_low(d.low, d.sms * d.per_sm, kSliceBlockNs, true);
  CHECK(cudaDeviceSynchronize());
  const auto g = d.read_gaps();
  const std::uint64_t origin = d.marks()[1];
  p.wait(p.to_parent[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  for (std::size_t i = 0; i + 1 < g.size(); i += 2) {
    csv.row("slices_parent", static_cast<int>(i / 2), "gap_start_ns", double(g[i] - origin));
    csv.row("slices_parent", static_cast<int>(i / 2), "gap_end_ns", double(g[i + 1] - origin));
  }
  std::fclose(csv.f);

  // The child's rows: its probe latencies and its gaps.
  std::vector<double> child_gaps;
  if (std::FILE* f = std::fopen((std::string(csv_path) + ".child").c_str(), "r")) {
    char name[64], what[64];
    int rep = 0;
    double value = 0;
    while (std::fscanf(f, "%63[^,],%d,%63[^,],%lf\n", name, &rep, what, &value) == 4) {
      if (std::string(name) == "process" && std::string(what) == "latency_ms") {
        process.push_back(value);
      }
      if (std::string(name) == "process" && std::string(what) == "host_latency_ms") {
        process_h.push_back(value);
      }
      if (std::string(name) == "slices_child") child_gaps.push_back(value);
    }
    std::fclose(f);
  }
  std::vector<double> parent_gaps, off_p, on_p, off_c, on_c;
  for (const std::uint64_t t : g) parent_gaps.push_back(double(t - origin));
  slice_stats(parent_gaps, &off_p, &on_p);
  slice_stats(child_gaps, &off_c, &on_c);

  std::printf("\nprocess: offset (ms after the other context's launch), host latency (ms)\n");
  for (std::size_t i = 0; i < process_h.size(); ++i) {
    std::printf("  %6.3f %8.3f\n", 0.25 * static_cast<double>(i + 1), process_h[i]);
  }
  std::printf("\n%-34s %10s %10s %10s %12s\n", "probe latency (ms)", "median", "min", "max",
              "host median");
  auto line = [](const char* name, const std::vector<double>& v, const std::vector<double>& h) {
    if (v.empty()) {
      std::printf("%-34s %10s\n", name, "-");
      return;
    }
    std::printf("%-34s %10.3f %10.3f %10.3f %12.3f\n", name, median(v),
                *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()),
                median(h));
  };
  line("solo", solo, solo_h);
  line("same context, greatest priority", prio, prio_h);
  line("same context, equal priority", equal, equal_h);
  line("second process (time slicing)", process, process_h);
  std::printf("\n%-34s %10s %10s %10s %6s\n", "time slicing (ms)", "median", "min", "max", "n");
  auto slices = [&](const char* name, const std::vector<double>& v) {
    if (v.empty()) {  // no slicing seen (e.g. both processes are clients of one MPS server)
      std::printf("%-34s %10s %10s %10s %6d\n", name, "-", "-", "-", 0);
      return;
    }
    std::printf("%-34s %10.3f %10.3f %10.3f %6zu\n", name, median(v),
                *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()),
                v.size());
  };
  slices("parent off the GPU (gap)", off_p);
  slices("parent on the GPU (run)", on_p);
  slices("child off the GPU (gap)", off_c);
  slices("child on the GPU (run)", on_c);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
