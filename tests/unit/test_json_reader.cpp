// JsonReader: typed getters, defaults, key paths in messages, unknown keys.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/json_reader.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gpumux::ConfigError;
using gpumux::JsonReader;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("JsonReader reads typed values and defaults", "[json_reader]") {
  const auto doc = nlohmann::json::parse(
      R"({"s": "text", "n": 2.5, "i": 7, "neg": -3, "b": true, "o": {"x": 1}})");
  JsonReader r(doc, "cfg.json", "");
  CHECK(r.required_string("s") == "text");
  CHECK(r.required_number("n") == 2.5);
  CHECK(r.required_number("i") == 7.0);  // an integer is also a number
  CHECK(r.required_int("i") == 7);
  CHECK(r.int_or("neg", 0) == -3);
  CHECK(r.bool_or("b", false));
  CHECK(r.string_or("missing", "dflt") == "dflt");
  CHECK(r.number_or("missing", 4.25) == 4.25);
  CHECK(r.int_or("missing", 11) == 11);
  CHECK_FALSE(r.bool_or("missing", false));
  CHECK(r.optional("missing") == nullptr);
  JsonReader o = r.object("o");
  CHECK(o.path_of("x") == "o.x");
  CHECK(o.required_int("x") == 1);
  o.finish();
  CHECK_NOTHROW(r.finish());
}

TEST_CASE("JsonReader type errors name the file and the key path", "[json_reader]") {
  const auto doc = nlohmann::json::parse(
      R"({"policy": {"params": {"quantum_us": "10", "frac": 1.5, "float_int": 8.0,
          "huge": 18446744073709551615, "flag": 1, "name": 3}}})");
  JsonReader root(doc, "configs/x.json", "");
  JsonReader policy = root.object("policy");
  JsonReader params = policy.object("params");

  CHECK_THAT(message_of([&] { (void)params.required_number("quantum_us"); }),
             Equals("configs/x.json: policy.params.quantum_us: expected a number, got string"));
  CHECK_THAT(message_of([&] { (void)params.required_int("frac"); }),
             Equals("configs/x.json: policy.params.frac: expected an integer, got number 1.5"));
  // Integers are written without a fraction (traces/formats.md): 8.0 is not an integer.
  CHECK_THAT(message_of([&] { (void)params.required_int("float_int"); }),
             Contains("policy.params.float_int: expected an integer, got number 8.0"));
  CHECK_THAT(message_of([&] { (void)params.required_int("huge"); }),
             Contains("policy.params.huge: integer out of range"));
  CHECK_THAT(message_of([&] { (void)params.bool_or("flag", false); }),
             Equals("configs/x.json: policy.params.flag: expected a boolean, got number"));
  CHECK_THAT(message_of([&] { (void)params.required_string("name"); }),
             Equals("configs/x.json: policy.params.name: expected a string, got number"));
  CHECK_THAT(message_of([&] { (void)params.required("absent"); }),
             Equals("configs/x.json: policy.params.absent: missing required key"));
  CHECK_THAT(message_of([&] { (void)params.object("quantum_us"); }),
             Equals("configs/x.json: policy.params.quantum_us: expected an object, got string"));
}

TEST_CASE("JsonReader rejects a non-object and checks number ranges", "[json_reader]") {
  const auto array = nlohmann::json::parse("[1, 2]");
  CHECK_THAT(message_of([&] { JsonReader r(array, "f.json", ""); }),
             Equals("f.json: expected an object, got array"));
  CHECK_THAT(message_of([&] { JsonReader r(array, "f.json", "devices[0]"); }),
             Equals("f.json: devices[0]: expected an object, got array"));

  const auto doc = nlohmann::json::parse(R"({"a": 0})");
  JsonReader r(doc, "f.json", "top");
  CHECK(r.non_negative("a", 0.0) == 0.0);
  CHECK(r.positive("a", 0.5) == 0.5);
  CHECK_THAT(message_of([&] { r.positive("a", 0.0); }),
             Equals("f.json: top.a: must be > 0, got 0"));
  CHECK_THAT(message_of([&] { r.non_negative("a", -1.5); }),
             Equals("f.json: top.a: must be >= 0, got -1.5"));
  CHECK_THAT(message_of([&] { r.fail("", "whole object is wrong"); }),
             Equals("f.json: top: whole object is wrong"));
}

TEST_CASE("JsonReader::finish reports the first unknown key in sorted order", "[json_reader]") {
  const auto doc = nlohmann::json::parse(R"({"zeta": 1, "known": 2, "alpha": 3, "mid": 4})");
  JsonReader r(doc, "cfg.json", "workload");
  (void)r.required_int("known");
  CHECK_THAT(message_of([&] { r.finish(); }), Equals("cfg.json: workload.alpha: unknown key"));
  (void)r.optional("alpha");
  CHECK_THAT(message_of([&] { r.finish(); }), Equals("cfg.json: workload.mid: unknown key"));
  CHECK(r.has("mid"));
  (void)r.required("mid");
  (void)r.int_or("zeta", 0);
  CHECK_NOTHROW(r.finish());
}

TEST_CASE("JsonReader errors are InputErrors", "[json_reader]") {
  const auto doc = nlohmann::json::parse(R"({"a": "x"})");
  JsonReader r(doc, "f.json", "");
  CHECK_THROWS_AS(r.required_int("a"), gpumux::InputError);
  CHECK_THROWS_AS(r.required_int("b"), ConfigError);
}
