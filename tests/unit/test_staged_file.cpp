// staged_file.hpp: a staged file is never a file or link that was there before, takes its
// final name without replacing (or, asked to, by replacing the entry, never a link's target),
// and leaves nothing behind unless placed; both the unnamed (O_TMPFILE) and the hidden-name
// ways.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/staged_file.hpp"

namespace fs = std::filesystem;
using gpumux::StagedFile;

namespace {

struct Folder {
  fs::path path =
      fs::temp_directory_path() / ("gpumux_staged_" + std::to_string(std::random_device{}()));
  int fd = -1;
  Folder() {
    fs::create_directories(path);
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~Folder() {
    ::close(fd);
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void put(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
  }
};

// Whether the folder's file system has O_TMPFILE (else Unnamed falls back to a hidden name).
bool tmpfile_here(const Folder& dir) {
  const int fd = ::openat(dir.fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

void write_text(StagedFile& f, const std::string& text) {
  REQUIRE(f.write(text.data(), text.size()));
  REQUIRE(f.finish() == 0);
}

}  // namespace

TEST_CASE("a staged file takes its name without replacing, or replaces the entry itself",
          "[staged_file]") {
  for (const auto naming : {StagedFile::Naming::Unnamed, StagedFile::Naming::Hidden}) {
    const bool hidden = naming == StagedFile::Naming::Hidden;
    INFO((hidden ? "hidden name" : "unnamed where O_TMPFILE is"));
    Folder dir;
    dir.put("precious.txt", "precious\n");
    dir.put("out.csv", "mine\n");
    fs::create_symlink(dir.path / "precious.txt", dir.path / "link.csv");
    {
      StagedFile f(dir.fd, (dir.path / "out.csv").string(), "out.csv", naming);
      if (!hidden && tmpfile_here(dir)) {
        CHECK(f.hidden_name().empty());  // no name at all
        CHECK(dir.names().size() == 3);
      } else {
        // `.out.csv.gpumux-import.<pid>.<6 letters>`, a new file.
        const std::string prefix = ".out.csv.gpumux-import." + std::to_string(::getpid()) + ".";
        CHECK(f.hidden_name().rfind(prefix, 0) == 0);
        CHECK(f.hidden_name().size() == prefix.size() + 6);
        CHECK(dir.names().size() == 4);
      }
      write_text(f, "new\n");
      // Not replacing: out.csv exists, so EEXIST and nothing changes.
      CHECK(f.place(false) == EEXIST);
      CHECK(dir.read("out.csv") == "mine\n");
    }
    // Not placed: nothing of it is left.
    CHECK(dir.names() == std::vector<std::string>{"link.csv", "out.csv", "precious.txt"});
    {
      StagedFile f(dir.fd, (dir.path / "link.csv").string(), "link.csv", naming);
      write_text(f, "new\n");
      CHECK(f.place(true) == 0);  // the link is replaced, not written through
      CHECK(f.hidden_name().empty());
    }
    CHECK(dir.read("precious.txt") == "precious\n");
    CHECK(fs::is_regular_file(fs::symlink_status(dir.path / "link.csv")));
    CHECK(dir.read("link.csv") == "new\n");
    {
      StagedFile f(dir.fd, (dir.path / "fresh.csv").string(), "fresh.csv", naming);
      write_text(f, "fresh\n");
      CHECK(f.place(false) == 0);
    }
    CHECK(dir.read("fresh.csv") == "fresh\n");
    CHECK(dir.names() ==
          std::vector<std::string>{"fresh.csv", "link.csv", "out.csv", "precious.txt"});
  }
}

TEST_CASE("a staged file's hidden name is removed only while it is still its own",
          "[staged_file]") {
  Folder dir;
  std::string taken;
  {
    StagedFile f(dir.fd, (dir.path / "out.csv").string(), "out.csv", StagedFile::Naming::Hidden);
    taken = f.hidden_name();
    // Someone else's file now holds that name: it is theirs, and it stays.
    fs::remove(dir.path / taken);
    dir.put(taken, "theirs\n");
  }
  CHECK(dir.read(taken) == "theirs\n");
}

TEST_CASE("a staged file that cannot be created is an error naming the target", "[staged_file]") {
  CHECK_THROWS_WITH(StagedFile(-1, "x/out.csv", "out.csv"),
                    "x/out.csv: cannot create a temporary file beside it (Bad file descriptor)");
}
