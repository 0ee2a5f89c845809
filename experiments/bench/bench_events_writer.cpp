// Throughput of the streamed result writers (docs/performance.md, "Writers"): events.jsonl and
// trace.json formatted from a real run's events (the default experiment under per-layer PipeSwitch,
// 8 simulated seconds, kept in memory once), written to a discarding sink (formatting alone), to a
// file in a temporary folder, and through gzip / zstd. bytes_per_second is the output's MB/s,
// items_per_second the events per second.
#include <fcntl.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "gpumux/io/config.hpp"
#include "gpumux/io/event_writers.hpp"
#include "gpumux/io/experiment.hpp"

namespace {

namespace fs = std::filesystem;

const gpumux::ExperimentResult& run() {
  static const gpumux::ExperimentResult result = [] {
    const fs::path r = gpumux::find_repo_root(fs::current_path());
    const auto cfg = gpumux::load_experiment(r / "experiments" / "configs" / "default.json",
                                             {"policy.name=pipeswitch", "horizon_s=8"}, r);
    return gpumux::run_experiment(cfg, r, /*write_outputs=*/false, /*keep_log=*/true);
  }();
  return result;
}

/// write(2) to a file in a fresh temporary folder, removed afterwards.
class TempFileSink final : public gpumux::ByteSink {
 public:
  TempFileSink() {
    dir_ = fs::temp_directory_path() / ("gpumux_bench_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    fd_ = ::open((dir_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  ~TempFileSink() override {
    ::close(fd_);
    fs::remove_all(dir_);
  }
  void write(const char* data, std::size_t n) override {
    while (n > 0) {
      const ssize_t w = ::write(fd_, data, n);
      if (w <= 0) throw std::runtime_error("bench: write failed");
      data += w;
      n -= static_cast<std::size_t>(w);
    }
  }

 private:
  fs::path dir_;
  int fd_ = -1;
};

enum class Target { Null, File };

template <class Writer>
void bench_writer(benchmark::State& state, Target target, gpumux::Compression compression) {
  const auto& r = run();
  std::uint64_t bytes = 0, events = 0;
  for (auto _ : state) {
    gpumux::NullSink null_sink;
    std::unique_ptr<TempFileSink> file;
    gpumux::ByteSink* sink = &null_sink;
    if (target == Target::File) {
      file = std::make_unique<TempFileSink>();
      sink = file.get();
    }
    const auto compressor = gpumux::make_compressor(compression, *sink);
    if (compressor) sink = compressor.get();
    std::unique_ptr<Writer> w;
    if constexpr (std::is_same_v<Writer, gpumux::ChromeTraceWriter>) {
      w = std::make_unique<Writer>(*sink, r.jobs);
    } else {
      w = std::make_unique<Writer>(*sink);
    }
    for (const gpumux::Event& e : r.log.events()) w->on_event(e);
    w->finish();
    bytes += w->bytes();  // uncompressed bytes formatted
    events += r.log.size();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["events_per_run"] = static_cast<double>(r.log.size());
}

using gpumux::ChromeTraceWriter;
using gpumux::Compression;
using gpumux::JsonlEventWriter;

void BM_EventsJsonl_Format(benchmark::State& s) {
  bench_writer<JsonlEventWriter>(s, Target::Null, Compression::None);
}
void BM_EventsJsonl_File(benchmark::State& s) {
  bench_writer<JsonlEventWriter>(s, Target::File, Compression::None);
}
void BM_EventsJsonl_Gzip(benchmark::State& s) {
  bench_writer<JsonlEventWriter>(s, Target::File, Compression::Gzip);
}
void BM_EventsJsonl_Zstd(benchmark::State& s) {
  bench_writer<JsonlEventWriter>(s, Target::File, Compression::Zstd);
}
void BM_Trace_Format(benchmark::State& s) {
  bench_writer<ChromeTraceWriter>(s, Target::Null, Compression::None);
}
void BM_Trace_File(benchmark::State& s) {
  bench_writer<ChromeTraceWriter>(s, Target::File, Compression::None);
}

}  // namespace

BENCHMARK(BM_EventsJsonl_Format)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EventsJsonl_File)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EventsJsonl_Gzip)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EventsJsonl_Zstd)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Trace_Format)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Trace_File)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
