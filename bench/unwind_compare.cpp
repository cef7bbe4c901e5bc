// profsh's unwinder beside perf's on the same samples: reads a `perf record --call-graph dwarf`
// perf.data (its mmap records and its samples' user registers and stack copies), unwinds every
// sample with engine/symbols, and compares each chain, frame by frame as (module, offset in the
// file), with what `perf script --ns -F tid,time,ip,sym,dso` printed for that sample. Prints how
// many chains are identical, how many agree as far as the shorter goes, mean depths, and the
// median time profsh took per sample.
//   unwind_compare PERF_DATA PERF_SCRIPT_TEXT
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/symbols/unwinder.h"

using namespace profsh::symbols;

namespace {

using Chain = std::vector<std::pair<std::string, uint64_t>>;  // (module, offset or address)

std::string Basename(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

// perf sometimes prints a frame it placed in a file with the dso "[unknown]" (and the offset).
bool SameFrame(const std::pair<std::string, uint64_t>& a,
               const std::pair<std::string, uint64_t>& b) {
  return a.second == b.second &&
         (a.first == b.first || a.first == "[unknown]" || b.first == "[unknown]");
}

template <typename T>
bool Take(const std::string& bytes, size_t* at, size_t end, T* out) {
  if (*at + sizeof(T) > end) return false;
  std::memcpy(out, bytes.data() + *at, sizeof(T));
  *at += sizeof(T);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PERF_DATA PERF_SCRIPT_TEXT\n", argv[0]);
    return 2;
  }
  std::ifstream data_in(argv[1], std::ios::binary);
  std::stringstream buffer;
  buffer << data_in.rdbuf();
  const std::string bytes = buffer.str();
  size_t at = 0;
  uint64_t magic, header_size, attr_size, attrs_offset, attrs_size, data_offset, data_size;
  if (!Take(bytes, &at, bytes.size(), &magic) || std::memcmp(&magic, "PERFILE2", 8) != 0 ||
      !Take(bytes, &at, bytes.size(), &header_size) ||
      !Take(bytes, &at, bytes.size(), &attr_size) ||
      !Take(bytes, &at, bytes.size(), &attrs_offset) ||
      !Take(bytes, &at, bytes.size(), &attrs_size) ||
      !Take(bytes, &at, bytes.size(), &data_offset) ||
      !Take(bytes, &at, bytes.size(), &data_size) || attrs_size < 96 ||
      data_offset + data_size > bytes.size()) {
    std::fprintf(stderr, "%s: not a perf.data file this reads\n", argv[1]);
    return 1;
  }
  uint64_t sample_type, regs_mask;
  std::memcpy(&sample_type, bytes.data() + attrs_offset + 24, 8);
  std::memcpy(&regs_mask, bytes.data() + attrs_offset + 80, 8);
  constexpr uint64_t kIp = 1 << 0, kTid = 1 << 1, kTime = 1 << 2, kAddr = 1 << 3, kRead = 1 << 4,
                     kCallchain = 1 << 5, kId = 1 << 6, kCpu = 1 << 7, kPeriod = 1 << 8,
                     kStreamId = 1 << 9, kRaw = 1 << 10, kBranch = 1 << 11, kRegsUser = 1 << 12,
                     kStackUser = 1 << 13, kIdentifier = 1 << 16;
  if ((sample_type & (kRead | kRaw | kBranch)) || !(sample_type & kRegsUser) ||
      !(sample_type & kStackUser) || !(sample_type & kTime) || !(sample_type & kTid)) {
    std::fprintf(stderr,
                 "%s: samples without user registers, stack and time (record with "
                 "--call-graph dwarf)\n",
                 argv[1]);
    return 1;
  }
  std::map<uint32_t, AddressSpace> spaces;
  struct Sample {
    uint32_t pid = 0, tid = 0;
    uint64_t time = 0;
    StackSnapshot snapshot;
    std::vector<uint8_t> stack;
  };
  std::vector<Sample> samples;
  at = data_offset;
  const size_t end = data_offset + data_size;
  while (at + 8 <= end) {
    uint32_t type;
    uint16_t misc, size;
    std::memcpy(&type, bytes.data() + at, 4);
    std::memcpy(&misc, bytes.data() + at + 4, 2);
    std::memcpy(&size, bytes.data() + at + 6, 2);
    if (size < 8 || at + size > end) break;
    size_t p = at + 8;
    const size_t record_end = at + size;
    if (type == 1 || type == 10) {  // PERF_RECORD_MMAP, PERF_RECORD_MMAP2
      uint32_t pid = 0, tid = 0;
      uint64_t start = 0, length = 0, pgoff = 0;
      Take(bytes, &p, record_end, &pid);
      Take(bytes, &p, record_end, &tid);
      Take(bytes, &p, record_end, &start);
      Take(bytes, &p, record_end, &length);
      Take(bytes, &p, record_end, &pgoff);
      uint32_t prot = 4;  // PROT_EXEC for MMAP, which only reports code
      if (type == 10) {
        p += 24;  // device and inode, or build id
        Take(bytes, &p, record_end, &prot);
        p += 4;  // flags
      }
      if (p < record_end) {
        const std::string path(bytes.data() + p, strnlen(bytes.data() + p, record_end - p));
        spaces[pid].Add({start, start + length, pgoff, path, "", (prot & 4) != 0});
      }
    } else if (type == 9) {  // PERF_RECORD_SAMPLE
      Sample s;
      uint64_t skip;
      bool ok = true;
      if (sample_type & kIdentifier) ok &= Take(bytes, &p, record_end, &skip);
      if (sample_type & kIp) ok &= Take(bytes, &p, record_end, &skip);
      ok &= Take(bytes, &p, record_end, &s.pid) && Take(bytes, &p, record_end, &s.tid);
      ok &= Take(bytes, &p, record_end, &s.time);
      if (sample_type & kAddr) ok &= Take(bytes, &p, record_end, &skip);
      if (sample_type & kId) ok &= Take(bytes, &p, record_end, &skip);
      if (sample_type & kStreamId) ok &= Take(bytes, &p, record_end, &skip);
      if (sample_type & kCpu) ok &= Take(bytes, &p, record_end, &skip);
      if (sample_type & kPeriod) ok &= Take(bytes, &p, record_end, &skip);
      if (sample_type & kCallchain) {
        uint64_t nr = 0;
        ok &= Take(bytes, &p, record_end, &nr);
        p += 8 * nr;
      }
      uint64_t abi = 0;
      ok &= Take(bytes, &p, record_end, &abi);
      if (ok && abi != 0) {
        for (unsigned r = 0; r < 64; ++r) {
          if (!((regs_mask >> r) & 1)) continue;
          uint64_t value = 0;
          ok &= Take(bytes, &p, record_end, &value);
          if (r < s.snapshot.regs.size()) {
            s.snapshot.regs[r] = value;
            s.snapshot.regs_mask |= 1ull << r;
          }
        }
      }
      uint64_t stack_size = 0;
      ok &= Take(bytes, &p, record_end, &stack_size);
      if (ok && stack_size > 0 && p + stack_size + 8 <= record_end) {
        uint64_t dyn_size;
        std::memcpy(&dyn_size, bytes.data() + p + stack_size, 8);
        s.stack.assign(bytes.begin() + p, bytes.begin() + p + std::min(stack_size, dyn_size));
      }
      if (ok && abi != 0) samples.push_back(std::move(s));
    }
    at = record_end;
  }
  // perf's chains, keyed by (tid, time).
  std::map<std::pair<uint32_t, uint64_t>, Chain> perf_chains;
  {
    std::ifstream in(argv[2]);
    std::string line;
    Chain* current = nullptr;
    bool previous_inlined = false;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (line[0] != '\t') {  // "  TID SECS.NANOS:" starts a sample, its frames start with a tab
        unsigned tid = 0;
        unsigned long long secs = 0, nanos = 0;
        if (std::sscanf(line.c_str(), "%u %llu.%llu:", &tid, &secs, &nanos) == 3) {
          current = &perf_chains[{tid, secs * 1000000000ull + nanos}];
          previous_inlined = false;
        } else {
          current = nullptr;
        }
        continue;
      }
      if (current == nullptr) continue;
      const size_t first = line.find_first_not_of(" \t");
      const uint64_t address = std::strtoull(line.c_str() + first, nullptr, 16);
      const size_t dso_at = line.rfind(" (");
      std::string dso =
          dso_at == std::string::npos ? "" : line.substr(dso_at + 2, line.size() - dso_at - 3);
      const std::string module =
          dso.empty() || dso[0] != '/' ? std::string("[unknown]") : Basename(dso);
      // perf lists a frame's inlined functions first, at the same address, as "(inlined)":
      // one frame of the walk.
      if (previous_inlined && !current->empty() && current->back().second == address) {
        current->back().first = module;
      } else {
        current->push_back({module, address});
      }
      previous_inlined = dso == "inlined";
    }
  }
  Unwinder unwinder;
  size_t our_repeats = 0, perf_repeats = 0, identical_once = 0, agree_shorter_once = 0;
  size_t compared = 0, identical = 0, agree_shorter = 0, our_frames = 0, perf_frames = 0;
  std::vector<double> us;
  std::vector<std::string> examples;
  for (Sample& s : samples) {
    s.snapshot.stack = s.stack;
    const auto t0 = std::chrono::steady_clock::now();
    const auto frames = unwinder.Unwind(spaces[s.pid], s.snapshot);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    auto it = perf_chains.find({s.tid, s.time});
    if (it == perf_chains.end()) continue;
    Chain ours;
    for (const UnwoundFrame& f : frames) {
      // perf prints a caller's frame at its call instruction (return address - 1).
      const uint64_t pc = f.is_return_address ? f.pc - 1 : f.pc;
      const Mapping* m = spaces[s.pid].Find(pc);
      if (m != nullptr && IsFilePath(m->path)) {
        ours.push_back({Basename(m->path), pc - m->start + m->file_offset});
      } else {
        ours.push_back({"[unknown]", pc});
      }
    }
    Chain theirs = it->second;
    our_repeats += std::adjacent_find(ours.begin(), ours.end(), SameFrame) != ours.end();
    perf_repeats += std::adjacent_find(theirs.begin(), theirs.end(), SameFrame) != theirs.end();
    ++compared;
    our_frames += ours.size();
    perf_frames += theirs.size();
    auto agree = [](const Chain& a, const Chain& b, size_t* same, size_t* prefix) {
      const size_t shorter = std::min(a.size(), b.size());
      const bool equal = std::equal(a.begin(), a.begin() + shorter, b.begin(), SameFrame);
      *same += equal && a.size() == b.size();
      *prefix += equal;
      return equal;
    };
    agree(ours, theirs, &identical, &agree_shorter);
    // Again with a frame repeated at once counted once (perf's walk repeats frames).
    theirs.erase(std::unique(theirs.begin(), theirs.end(), SameFrame), theirs.end());
    ours.erase(std::unique(ours.begin(), ours.end(), SameFrame), ours.end());
    const bool prefix_equal = agree(ours, theirs, &identical_once, &agree_shorter_once);
    const size_t n = std::min(ours.size(), theirs.size());
    if (!prefix_equal && examples.size() < 12) {
      size_t i = 0;
      while (i < n && SameFrame(ours[i], theirs[i])) ++i;
      char text[256];
      std::snprintf(text, sizeof text,
                    "  first difference at frame %zu: profsh %s+0x%llx, perf %s+0x%llx", i,
                    ours[i].first.c_str(), static_cast<unsigned long long>(ours[i].second),
                    theirs[i].first.c_str(), static_cast<unsigned long long>(theirs[i].second));
      examples.push_back(text);
      if (std::getenv("UNWIND_COMPARE_VERBOSE") != nullptr) {
        for (size_t k = 0; k < std::max(ours.size(), theirs.size()); ++k) {
          std::printf(
              "    %2zu  %-40s  %s\n", k,
              k < ours.size() ? (ours[k].first + "+" + std::to_string(ours[k].second)).c_str() : "",
              k < theirs.size() ? (theirs[k].first + "+" + std::to_string(theirs[k].second)).c_str()
                                : "");
        }
      }
    }
  }
  std::sort(us.begin(), us.end());
  auto percent = [&compared](size_t n) { return compared ? 100.0 * n / compared : 0.0; };
  std::printf(
      "samples %zu, compared with perf's %zu: identical chains %zu (%.1f %%), same frames "
      "as far as the shorter goes %zu (%.1f %%)\n",
      samples.size(), compared, identical, percent(identical), agree_shorter,
      percent(agree_shorter));
  std::printf(
      "with a frame repeated at once counted once: identical %zu (%.1f %%), as far as "
      "the shorter goes %zu (%.1f %%); differences listed below are of these\n",
      identical_once, percent(identical_once), agree_shorter_once, percent(agree_shorter_once));
  std::printf("mean frames per sample: profsh %.1f, perf %.1f; truncated walks %llu\n",
              compared ? double(our_frames) / compared : 0.0,
              compared ? double(perf_frames) / compared : 0.0,
              static_cast<unsigned long long>(unwinder.stats().truncated));
  std::printf(
      "chains with a frame repeated at once (the same call site twice): profsh %zu, perf %zu\n",
      our_repeats, perf_repeats);
  if (!us.empty()) {
    std::printf(
        "profsh unwinding: median %.1f us/sample (first pass over the data, caches filling)\n",
        us[us.size() / 2]);
  }
  for (const std::string& e : examples) std::printf("%s\n", e.c_str());
  return 0;
}
