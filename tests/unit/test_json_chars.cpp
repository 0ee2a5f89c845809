// OutBuf::put_json_chars, the one JSON string escaper of events.jsonl and trace.json, writes
// exactly what nlohmann::json::dump writes (trace.json stays byte-identical to the JSON tree it
// replaced; events.jsonl lines parse back to the same label).
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gpumux/io/byte_sink.hpp"

using namespace gpumux;

namespace {

std::string escaped(const std::string& s) {
  std::ostringstream os;
  OstreamSink sink(os);
  OutBuf out(sink);
  out.put('"');
  out.put_json_chars(s);
  out.put('"');
  out.flush();
  return os.str();
}

}  // namespace

TEST_CASE("put_json_chars escapes as nlohmann::json::dump does", "[unit]") {
  std::string every_control;
  for (int c = 1; c < 0x20; ++c) every_control += static_cast<char>(c);
  for (const std::string& s :
       {std::string("plain"), std::string("quote \" and backslash \\"), std::string("a\tb\nc"),
        std::string("\b\f\r"), every_control, std::string("utf-8 \xc3\xa9 kept")}) {
    CAPTURE(s);
    CHECK(escaped(s) == nlohmann::json(s).dump());
    CHECK(nlohmann::json::parse(escaped(s)).get<std::string>() == s);
  }
  CHECK(escaped("\b\x01") == "\"\\b\\u0001\"");  // by hand: short escape, then \u00xx
}
