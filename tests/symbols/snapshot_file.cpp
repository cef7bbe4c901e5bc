#include "tests/symbols/snapshot_file.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace profsh::symbols::testing {

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "profsh-symbols-XXXXXX").string();
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

bool RunProgram(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) {
    ADD_FAILURE() << "cannot run " << argv[0];
    return false;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << argv[0] << " failed (status " << status << ")";
    return false;
  }
  return true;
}

bool ReadCapturedSample(const std::string& path, CapturedSample* sample, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  size_t at = 0;
  auto take = [&](void* out, size_t size) {
    if (bytes.size() - at < size) return false;
    std::memcpy(out, bytes.data() + at, size);
    at += size;
    return true;
  };
  char magic[8];
  uint64_t stack_size = 0, maps_size = 0;
  if (!take(magic, 8) || std::memcmp(magic, "PSNAP001", 8) != 0) {
    *error = path + ": not a snapshot (magic)";
    return false;
  }
  if (!take(sample->snapshot.regs.data(), sizeof(uint64_t) * sample->snapshot.regs.size()) ||
      !take(&sample->snapshot.regs_mask, 8) || !take(&stack_size, 8) || stack_size > bytes.size()) {
    *error = path + ": truncated registers";
    return false;
  }
  sample->stack.resize(stack_size);
  if (!take(sample->stack.data(), stack_size) || !take(&maps_size, 8) || maps_size > bytes.size()) {
    *error = path + ": truncated stack";
    return false;
  }
  sample->maps.resize(maps_size);
  if (!take(sample->maps.data(), maps_size)) {
    *error = path + ": truncated maps";
    return false;
  }
  sample->snapshot.stack = sample->stack;
  return true;
}

uint32_t MarkerLine(const std::string& source, const std::string& marker) {
  std::ifstream in(std::string(PROFSH_SOURCE_DIR) + "/tests/symbols/" + source);
  std::string line;
  for (uint32_t number = 1; std::getline(in, line); ++number) {
    const size_t at = line.find(marker);
    // The whole marker, not a prefix of a longer one ("@c-call" of "@c-call-leaf").
    const size_t after = at + marker.size();
    if (at != std::string::npos &&
        (after == line.size() ||
         (!std::isalnum(static_cast<unsigned char>(line[after])) && line[after] != '-'))) {
      return number;
    }
  }
  ADD_FAILURE() << "no marker " << marker << " in " << source;
  return 0;
}

}  // namespace profsh::symbols::testing
