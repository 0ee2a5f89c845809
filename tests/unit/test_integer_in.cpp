// JsonReader::integer_in and ParamReader::integer_in: an integer is checked against its range
// as written (up to 64 bits, and above: 2^64 - 1) before it is narrowed, and the error names
// the file, the key, the range and the value.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/params.hpp"

using namespace gpumux;
using Catch::Matchers::Equals;

namespace {

template <class Read>
std::string error_of(const char* text, Read read) {
  const nlohmann::json doc = nlohmann::json::parse(text);
  JsonReader r(doc, "f.json", "top");
  try {
    read(r);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("integer_in refuses what would wrap when narrowed", "[json_reader][numbers]") {
  const auto u32 = [](JsonReader& r) { (void)r.integer_in<std::uint32_t>("n", 1, 1 << 20); };
  // 2^32 is 0 as a uint32_t, 2^32 + 5 is 5: both checked as written.
  CHECK_THAT(error_of(R"({"n": 4294967296})", u32),
             Equals("f.json: top.n: must be an integer in [1, 1048576], got 4294967296"));
  CHECK_THAT(error_of(R"({"n": 4294967301})", u32),
             Equals("f.json: top.n: must be an integer in [1, 1048576], got 4294967301"));
  CHECK_THAT(error_of(R"({"n": 18446744073709551615})", u32),
             Equals("f.json: top.n: must be an integer in [1, 1048576], got 18446744073709551615"));
  CHECK_THAT(error_of(R"({"n": -1})", u32),
             Equals("f.json: top.n: must be an integer in [1, 1048576], got -1"));
  CHECK_THAT(error_of(R"({"n": 2.0})", u32),
             Equals("f.json: top.n: expected an integer, got number 2.0"));
  CHECK_THAT(error_of(R"({"n": "2"})", u32),
             Equals("f.json: top.n: expected an integer, got string"));
  CHECK_THAT(error_of(R"({})", u32), Equals("f.json: top.n: missing required key"));

  const nlohmann::json doc = nlohmann::json::parse(R"({"n": 1048576, "m": -5})");
  JsonReader r(doc, "f.json", "top");
  CHECK(r.integer_in<std::uint32_t>("n", 1, 1 << 20) == 1048576u);
  CHECK(r.integer_in<int>("m", -5, 5) == -5);
  CHECK(r.integer_in_or<std::uint16_t>("absent", 7, 0, 65535) == 7);
  // A range that does not fit the target type is a programming error, not an input error.
  CHECK_THROWS_AS(r.integer_in<std::uint8_t>("n", 0, 1000), std::logic_error);
  CHECK_THROWS_AS(r.integer_in<std::uint32_t>("m", -1, 1), std::logic_error);
}

TEST_CASE("ParamReader::integer_in and integer_at_least narrow after the check",
          "[params][numbers]") {
  const ParamSpecs specs{param::integer("n", 3, "a count"), param::integer("k", 1, "another")};
  const auto error = [&](const char* text, auto read) {
    const nlohmann::json params = nlohmann::json::parse(text);
    ParamReader p(params, "cfg.json", "policy.params", specs);
    try {
      read(p);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(
      error(R"({"n": 4294967299})", [](ParamReader& p) { (void)p.integer_at_least<int>("n", 1); }),
      Equals("cfg.json: policy.params.n: must be an integer in [1, 2147483647], got 4294967299"));
  CHECK_THAT(
      error(R"({"n": 0})", [](ParamReader& p) { (void)p.integer_in<std::size_t>("n", 1, 1024); }),
      Equals("cfg.json: policy.params.n: must be an integer in [1, 1024], got 0"));
  CHECK(error("{}", [](ParamReader& p) { CHECK(p.integer_in<int>("n", 1, 4) == 3); }) ==
        "(no error)");
  // A declared default outside the range read is a programming error.
  CHECK_THROWS_AS(error("{}", [](ParamReader& p) { (void)p.integer_in<int>("n", 5, 9); }), Error);
}
