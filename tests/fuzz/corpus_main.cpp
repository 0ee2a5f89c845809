// Regression runner: feeds every file of a corpus folder (seeds and past findings) to the
// harness's LLVMFuzzerTestOneInput, so the normal build replays them on every CI run without
// libFuzzer. Usage: gpumux_fuzz_regress_<harness> <corpus folder>. Exit 1 names the input
// that threw something other than an InputError; a crash names itself.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus folder>\n", argv[0]);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[1])) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // a stable order for reproducible failures
  if (files.empty()) {
    std::fprintf(stderr, "%s: no corpus files\n", argv[1]);
    return 1;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s (%zu bytes)\n", f.c_str(), bytes.size());
    try {
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FINDING: %s: uncaught %s\n", f.c_str(), e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "%zu inputs: ok\n", files.size());
  return 0;
}
