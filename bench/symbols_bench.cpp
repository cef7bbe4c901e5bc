// Symbolisation of the user-space frames of a `perf record -g` profile, by profsh's symboliser
// (engine/symbols), from `perf script --show-mmap-events -F comm,pid,ip,sym,dso` text: the
// mmap events give each process's address space, the callchains the addresses. Prints the
// median time of a cold pass (a fresh Symbolizer: files opened, symbol tables and DWARF read)
// and of a warm one (every result cached), and how often profsh's name agrees with perf's.
//   symbols_bench PERF_SCRIPT_TEXT [RUNS]
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/symbols/symbolizer.h"

using namespace profsh::symbols;

namespace {

struct Frame {
  int pid;
  uint64_t address;
  bool is_return_address;
  std::string perf_symbol, perf_module, perf_path;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string Basename(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PERF_SCRIPT_TEXT [RUNS]\n", argv[0]);
    return 2;
  }
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  std::map<int, AddressSpace> spaces;
  std::vector<Frame> frames;
  std::string line;
  int pid = -1;
  bool first_in_sample = false;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (const size_t at = line.find("PERF_RECORD_MMAP"); at != std::string::npos) {
      // comm pid PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ 0xPGOFF ...]: prot PATH
      int mmap_pid = 0;
      unsigned long long start = 0, length = 0, offset = 0;
      const size_t fields = line.find(' ', at);
      if (fields == std::string::npos ||
          std::sscanf(line.c_str() + fields, " %d/%*d: [0x%llx(0x%llx) @ 0x%llx", &mmap_pid, &start,
                      &length, &offset) != 4) {
        continue;  // the kernel's own map (pid -1) and other shapes
      }
      const size_t path_at = line.find("]: ");
      if (path_at == std::string::npos) continue;
      const std::string rest = line.substr(path_at + 3);  // "r-xp /path"
      const size_t space = rest.find(' ');
      if (space == std::string::npos) continue;
      Mapping m{start, start + length, offset, rest.substr(space + 1), "", true};
      spaces[mmap_pid].Add(std::move(m));
      continue;
    }
    if (line.empty()) continue;
    if (line[0] != '\t' && line[0] != ' ') {  // "comm pid" starts a sample
      const size_t last = line.find_last_not_of(' ');
      const size_t begin = line.find_last_of(' ', last);
      pid = std::atoi(line.c_str() + (begin == std::string::npos ? 0 : begin + 1));
      first_in_sample = true;
      continue;
    }
    // "\tADDR SYMBOL (DSO)"
    const size_t addr_begin = line.find_first_not_of(" \t");
    const size_t addr_end = line.find(' ', addr_begin);
    if (addr_end == std::string::npos) continue;
    const uint64_t address = std::strtoull(line.c_str() + addr_begin, nullptr, 16);
    const size_t dso_at = line.rfind(" (");
    Frame f{pid, address, !first_in_sample, "", "", ""};
    first_in_sample = false;
    if (dso_at != std::string::npos && dso_at > addr_end) {
      f.perf_symbol = line.substr(addr_end + 1, dso_at - addr_end - 1);
      f.perf_path = line.substr(dso_at + 2, line.size() - dso_at - 3);
      f.perf_module = Basename(f.perf_path);
    }
    if (address >= 0x800000000000ull || !spaces.count(pid)) continue;  // kernel or unknown pid
    // perf prints a frame it placed in a file as the offset in that file (map_ip: pc - map
    // start + pgoff); back to the address, through the file's mapping in the process.
    if (!f.perf_path.empty() && f.perf_path.front() == '/') {
      bool placed = false;
      for (const Mapping& m : spaces[pid].mappings()) {
        if (m.path == f.perf_path && address >= m.file_offset &&
            address - m.file_offset < m.end - m.start) {
          f.address = m.start + (address - m.file_offset);
          placed = true;
          break;
        }
      }
      if (!placed) continue;
    }
    frames.push_back(std::move(f));
  }
  if (frames.empty()) {
    std::fprintf(stderr, "%s: no user-space frames with mmap events\n", argv[1]);
    return 1;
  }
  std::map<std::pair<int, uint64_t>, int> unique;
  for (const Frame& f : frames) unique[{f.pid, f.address}]++;

  std::vector<double> cold_ms, warm_ms;
  std::vector<std::string> names(frames.size());
  SymbolizerStats stats;
  for (int run = 0; run < runs; ++run) {
    Symbolizer symbolizer;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < frames.size(); ++i) {
      const Frame& f = frames[i];
      names[i] =
          symbolizer.Symbolize(spaces[f.pid], f.address, f.is_return_address).back().function;
    }
    auto t1 = std::chrono::steady_clock::now();
    for (const Frame& f : frames)
      symbolizer.Symbolize(spaces[f.pid], f.address, f.is_return_address);
    auto t2 = std::chrono::steady_clock::now();
    cold_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    warm_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    stats = symbolizer.stats();
  }
  // Agreement with perf where perf named the frame.
  size_t perf_named = 0, agree = 0, torch_frames = 0, torch_named = 0, torch_agree = 0;
  std::vector<std::string> disagreements;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    const bool torch = f.perf_module.rfind("libtorch_cpu.so", 0) == 0;
    torch_frames += torch;
    if (f.perf_symbol.empty() || f.perf_symbol == "[unknown]") continue;
    ++perf_named;
    torch_named += torch;
    // perf leaves C++ parameter lists out; profsh keeps them.
    std::string perf_name = f.perf_symbol, profsh_name = names[i];
    if (perf_name.ends_with("@plt") && profsh_name.ends_with("@plt")) {
      perf_name.resize(perf_name.size() - 4);
      profsh_name.resize(profsh_name.size() - 4);
    }
    if (profsh_name == perf_name || profsh_name.find(perf_name + "(") != std::string::npos) {
      ++agree;
      torch_agree += torch;
    } else if (disagreements.size() < 8) {
      disagreements.push_back("  perf: " + f.perf_symbol + "\n  profsh: " + names[i]);
    }
  }
  std::printf("frames %zu (unique addresses %zu, processes %zu), in libtorch_cpu %zu\n",
              frames.size(), unique.size(), spaces.size(), torch_frames);
  std::printf(
      "profsh cold (fresh symboliser) median of %d: %.1f ms = %.2f us/frame; warm (cached): %.2f "
      "ms = %.3f us/frame\n",
      runs, Median(cold_ms), 1000 * Median(cold_ms) / frames.size(), Median(warm_ms),
      1000 * Median(warm_ms) / frames.size());
  std::printf("modules opened %" PRIu64 ", named by module+offset only %" PRIu64 " of %" PRIu64
              " lookups\n",
              stats.modules_opened, stats.unnamed, stats.lookups);
  std::printf(
      "same function as perf (perf omits parameter lists): %zu of %zu frames perf named "
      "(libtorch_cpu: %zu of %zu)\n",
      agree, perf_named, torch_agree, torch_named);
  for (const std::string& d : disagreements) std::printf("%s\n", d.c_str());
  return 0;
}
