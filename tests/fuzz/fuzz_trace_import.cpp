// Harness: a request trace for `gpumux trace import` (parse_table in every format, then
// convert with the first column as the time, in ms and as a date, sorted, and as gaps).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gpumux/io/trace_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ti = gpumux::trace_import;
  const auto text = gpumux::fuzz::as_text(data, size);
  for (const ti::Format f :
       {ti::Format::Csv, ti::Format::Tsv, ti::Format::Jsonl, ti::Format::Json}) {
    gpumux::fuzz::input_errors_only([&] {
      const ti::Table t = ti::parse_table(text, f, "trace");
      if (t.columns.empty()) return;
      for (const ti::TimeUnit u : {ti::TimeUnit::Ms, ti::TimeUnit::Datetime}) {
        gpumux::fuzz::input_errors_only([&] {
          ti::Options o;
          o.time_column = t.columns.front();
          o.unit = u;
          o.sort = true;
          (void)ti::convert(t, o, "trace");
          o.gaps = true;
          (void)ti::convert(t, o, "trace");
        });
      }
    });
  }
  return 0;
}
