// compress: gzip | zstd writes events.jsonl.gz / trace.json.zst ...; decompressed, they are the
// bytes of an uncompressed run. A bad value is a config error naming the file and the key.
#include <zlib.h>
#include <zstd.h>

#include <catch2/catch.hpp>

#include "cli_harness.hpp"

using namespace cli_test;

namespace {

std::string gunzip(const std::string& in) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    REQUIRE((rc == Z_OK || rc == Z_STREAM_END));
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  return out;
}

std::string unzstd(const std::string& in) {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  std::string out;
  std::vector<char> buf(ZSTD_DStreamOutSize());
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  while (src.pos < src.size) {
    ZSTD_outBuffer dst{buf.data(), buf.size(), 0};
    const std::size_t rc = ZSTD_decompressStream(d, &dst, &src);
    REQUIRE_FALSE(ZSTD_isError(rc));
    out.append(buf.data(), dst.pos);
  }
  ZSTD_freeDCtx(d);
  return out;
}

}  // namespace

TEST_CASE("compressed events and trace decompress to the uncompressed bytes", "[cli][compress]") {
  std::string cfg_text = kSmallConfig;
  cfg_text.replace(cfg_text.find("\"iterations\": 2"), 15, "\"iterations\": 20");
  const fs::path cfg = write("compress.json", cfg_text);
  auto run = [&](const std::string& mode) {
    const fs::path out = scratch() / ("compress-" + mode);
    const Outcome o =
        gpumux("run -q '" + cfg.string() + "' --out '" + out.string() + "' --set compress=" + mode);
    INFO(o.output);
    REQUIRE(o.exit_code == 0);
    return out;
  };
  const fs::path plain = run("none");
  const std::string events = slurp(plain / "events.jsonl");
  const std::string trace = slurp(plain / "trace.json");
  REQUIRE(events.size() > 10000);

  const fs::path gz = run("gzip");
  CHECK_FALSE(fs::exists(gz / "events.jsonl"));
  const std::string events_gz = slurp(gz / "events.jsonl.gz");
  CHECK(events_gz.size() < events.size() / 4);
  CHECK(gunzip(events_gz) == events);
  CHECK(gunzip(slurp(gz / "trace.json.gz")) == trace);
  CHECK(slurp(gz / "summary.json") == slurp(plain / "summary.json"));

  const fs::path zst = run("zstd");
  CHECK(unzstd(slurp(zst / "events.jsonl.zst")) == events);
  CHECK(unzstd(slurp(zst / "trace.json.zst")) == trace);

  // Deterministic: the same run compresses to the same bytes.
  const fs::path gz2 = scratch() / "compress-gzip-again";
  REQUIRE(gpumux("run -q '" + cfg.string() + "' --out '" + gz2.string() + "' --set compress=gzip")
              .exit_code == 0);
  CHECK(slurp(gz2 / "events.jsonl.gz") == events_gz);
}

TEST_CASE("an unknown compression is a config error naming the file and the key",
          "[cli][compress]") {
  const fs::path cfg = write("bad-compress.json", kSmallConfig);
  const Outcome o = gpumux("validate '" + cfg.string() + "' --set compress=lz4");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("bad-compress.json") != std::string::npos);
  CHECK(o.output.find("compress") != std::string::npos);
  CHECK(o.output.find("lz4") != std::string::npos);
  CHECK(o.output.find("gzip") != std::string::npos);
}
