// Streaming compressors in front of a ByteSink: gzip through zlib, zstd through libzstd. Each
// holds one bounded output buffer; input is compressed as it comes, so memory stays constant.
#include <zlib.h>
#include <zstd.h>

#include <memory>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/byte_sink.hpp"

namespace gpumux {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 17;  // 128 KiB of compressed output per write

class GzipSink final : public ByteSink {
 public:
  explicit GzipSink(ByteSink& next) : next_(next), out_(kChunk) {
    // windowBits 15 + 16: a gzip wrapper (one member, which Perfetto reads). zlib's default
    // header has mtime 0 and no name, so the output depends on the input only. Level 1: event
    // files are very repetitive, and at level 6 gzip was the slowest part of a run (bench).
    if (deflateInit2(&z_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw Error("gzip: cannot initialise zlib");
    }
  }
  ~GzipSink() override { deflateEnd(&z_); }

  void write(const char* data, std::size_t n) override {
    // zlib counts in uInt: feed huge writes in pieces.
    while (n > 0) {
      const std::size_t piece = std::min<std::size_t>(n, 1u << 30);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
      z_.avail_in = static_cast<uInt>(piece);
      run(Z_NO_FLUSH);
      data += piece;
      n -= piece;
    }
  }
  void finish() override {
    z_.next_in = nullptr;
    z_.avail_in = 0;
    run(Z_FINISH);
  }

 private:
  void run(int flush) {
    int rc = Z_OK;
    do {
      z_.next_out = out_.data();
      z_.avail_out = static_cast<uInt>(out_.size());
      rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) throw Error("gzip: zlib stream error");
      const std::size_t have = out_.size() - z_.avail_out;
      if (have > 0) next_.write(reinterpret_cast<const char*>(out_.data()), have);
    } while (z_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }

  ByteSink& next_;
  z_stream z_{};
  std::vector<Bytef> out_;
};

class ZstdSink final : public ByteSink {
 public:
  explicit ZstdSink(ByteSink& next) : next_(next), out_(ZSTD_CStreamOutSize()) {
    ctx_ = ZSTD_createCCtx();
    if (ctx_ == nullptr) throw Error("zstd: cannot create a compression context");
    // Level 3 (zstd's default); single-threaded, so the output is deterministic.
    ZSTD_CCtx_setParameter(ctx_, ZSTD_c_compressionLevel, 3);
  }
  ~ZstdSink() override { ZSTD_freeCCtx(ctx_); }

  void write(const char* data, std::size_t n) override {
    ZSTD_inBuffer in{data, n, 0};
    while (in.pos < in.size) run(in, ZSTD_e_continue);
  }
  void finish() override {
    ZSTD_inBuffer in{nullptr, 0, 0};
    while (run(in, ZSTD_e_end) != 0) {
    }
  }

 private:
  std::size_t run(ZSTD_inBuffer& in, ZSTD_EndDirective mode) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    const std::size_t left = ZSTD_compressStream2(ctx_, &out, &in, mode);
    if (ZSTD_isError(left)) throw Error(std::string("zstd: ") + ZSTD_getErrorName(left));
    if (out.pos > 0) next_.write(out_.data(), out.pos);
    return left;
  }

  ByteSink& next_;
  ZSTD_CCtx* ctx_ = nullptr;
  std::vector<char> out_;
};

}  // namespace

std::unique_ptr<ByteSink> make_compressor(Compression c, ByteSink& next) {
  switch (c) {
    case Compression::None:
      return nullptr;
    case Compression::Gzip:
      return std::make_unique<GzipSink>(next);
    case Compression::Zstd:
      return std::make_unique<ZstdSink>(next);
  }
  return nullptr;
}

}  // namespace gpumux
