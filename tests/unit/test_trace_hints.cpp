// A request trace met where gpumux expects a job file or an arrival CSV: the error says what
// it looks like and how to import it. Arrival CSVs: arrival_s in any column, a BOM, ranges.
#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/workload.hpp"

using namespace gpumux;
using Catch::Matchers::Contains;

TEST_CASE("a JSONL request trace given as a job file suggests trace import", "[trace_import]") {
  const std::string text = "{\"timestamp\": 1700000000000, \"input_tokens\": 5}\n";
  CHECK_THROWS_WITH(
      parse_jobs_jsonl_text(text, "req.jsonl", {}),
      Contains("req.jsonl: line 1: this looks like a request trace (one request per line, keys "
               "input_tokens, timestamp), not a job file") &&
          Contains("gpumux trace import req.jsonl --out <name>.csv --time-column timestamp"));
  // A job without a name is still the ordinary error.
  CHECK_THROWS_WITH(parse_jobs_jsonl_text("{\"kind\": \"training\"}\n", "j.jsonl", {}),
                    Contains("name: missing required key"));
}

TEST_CASE("arrival CSVs: hints, arrival_s in any column, a BOM", "[trace_import]") {
  CHECK_THROWS_WITH(parse_arrivals_csv_text("{\"ts\": 1}\n", "r.csv"),
                    Contains("r.csv: line 1: this looks like a request trace in JSONL") &&
                        Contains("--time-column ts"));
  CHECK_THROWS_WITH(parse_arrivals_csv_text("t,x\n1,2\n", "r.csv"),
                    Contains("r.csv: line 1: no arrival_s column in the header 't,x'") &&
                        Contains("gpumux trace import"));
  CHECK(parse_arrivals_csv_text("id,arrival_s,tok\na,1.5,3\nb,2,4\n", "r.csv") ==
        std::vector<double>{1.5, 2.0});
  CHECK(parse_arrivals_csv_text("\xEF\xBB\xBF"
                                "arrival_s\r\n0.5\r\n",
                                "r.csv") == std::vector<double>{0.5});
  CHECK_THROWS_WITH(parse_arrivals_csv_text("x,arrival_s\n1\n", "r.csv"),
                    "r.csv: line 2: arrival_s: the row ends before column 2");
  CHECK_THROWS_WITH(parse_arrivals_csv_text("arrival_s\n-1\n", "r.csv"),
                    "r.csv: line 2: arrival_s: -1.0 is out of range [0, 1e9] s");
}
