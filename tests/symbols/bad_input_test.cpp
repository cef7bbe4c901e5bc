// What samples and files outside the happy path do to the unwinder and the symboliser: short
// stack copies, addresses no mapping holds, files that are not ELF or are cut or scrambled,
// a file replaced since it was mapped. Nothing may throw or crash; every pc keeps a name.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <random>

#include "engine/symbols/elf_file.h"

#include "engine/symbols/symbolizer.h"
#include "engine/symbols/unwinder.h"
#include "tests/symbols/snapshot_file.h"

namespace profsh::symbols {
namespace {

using testing::CapturedSample;
using testing::ScratchDir;

CapturedSample CaptureC(const ScratchDir& dir) {
  CapturedSample sample;
  const std::string file = dir.path() + "/sample.bin";
  if (!testing::RunProgram({SYMBOLS_TARGET_C_CFI, file})) return sample;
  std::string error;
  EXPECT_TRUE(testing::ReadCapturedSample(file, &sample, &error)) << error;
  return sample;
}

TEST(SymbolsBadInput, TruncatedStackCopyStopsTheWalkAndIsCounted) {
  ScratchDir dir;
  CapturedSample sample = CaptureC(dir);
  auto space = AddressSpace::FromProcMaps(sample.maps, "maps");
  ASSERT_TRUE(space.ok());
  Unwinder unwinder;
  const size_t full = unwinder.Unwind(*space, sample.snapshot).size();
  EXPECT_EQ(unwinder.stats().truncated, 0u);
  sample.snapshot.stack = std::span<const uint8_t>(sample.stack).first(8);
  const auto cut = unwinder.Unwind(*space, sample.snapshot);
  EXPECT_GE(cut.size(), 1u);
  EXPECT_LT(cut.size(), full);
  EXPECT_EQ(unwinder.stats().truncated, 1u);
  EXPECT_EQ(unwinder.stats().samples, 2u);
  sample.snapshot.stack = {};
  EXPECT_GE(unwinder.Unwind(*space, sample.snapshot).size(), 1u);
  sample.snapshot.regs_mask = 0;  // no registers at all
  EXPECT_TRUE(unwinder.Unwind(*space, sample.snapshot).empty());
  EXPECT_EQ(unwinder.stats().truncated, 3u);
}

// A mapping's path may name a FIFO by the time the samples are read: opening it must neither
// wait for a writer nor read it as ELF.
TEST(SymbolsBadInput, FifoPathIsRefusedWithoutWaiting) {
  ScratchDir dir;
  const std::string fifo = dir.path() + "/not-a-library.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto opened = std::async(std::launch::async, [&] { return ElfFile::Open(fifo) != nullptr; });
  const bool finished = opened.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  if (!finished) {
    // Open waits for a writer: give it one, so that the test ends (and fails).
    const int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0) close(writer);
  }
  EXPECT_TRUE(finished) << "ElfFile::Open waited on a FIFO";
  EXPECT_FALSE(opened.get()) << "a FIFO was read as an ELF file";
}

TEST(SymbolsBadInput, AddressOutsideEveryMappingIsKeptAndNamed) {
  AddressSpace space;
  space.Add({0x400000, 0x401000, 0, "/nonexistent/prog", "", true});
  StackSnapshot snapshot;
  snapshot.regs[static_cast<size_t>(X86Reg::kIp)] = 0x10;
  snapshot.regs_mask = ~0ull;
  Unwinder unwinder;
  const auto frames = unwinder.Unwind(space, snapshot);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].pc, 0x10u);
  Symbolizer symbolizer;
  const auto named = symbolizer.Symbolize(space, 0x10, false);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].function, "[unknown]+0x10");
  EXPECT_EQ(named[0].module, "[unknown]");
  // A mapping whose file is gone: module and offset.
  const auto gone = symbolizer.Symbolize(space, 0x400123, false);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].function, "prog+0x123");
  EXPECT_EQ(gone[0].module_offset, 0x123u);
  EXPECT_EQ(symbolizer.stats().unnamed, 2u);
}

TEST(SymbolsBadInput, CorruptElfFilesAreNamedByOffset) {
  ScratchDir dir;
  std::ifstream in(SYMBOLS_TARGET_CXX, std::ios::binary);
  const std::string real((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(real.size(), 8192u);
  std::mt19937 random(1234);
  std::string garbage(64 * 1024, '\0');
  for (char& c : garbage) c = static_cast<char>(random());
  std::string scrambled = real;  // headers intact, the rest (sections, tables) noise
  for (size_t i = 4096; i < scrambled.size(); ++i) scrambled[i] = static_cast<char>(random());
  std::string bad_headers = real;  // section and program header offsets out of the file
  for (size_t i = 0x20; i < 0x40; ++i) bad_headers[i] = static_cast<char>(0xff);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"empty", ""},
      {"garbage", garbage},
      {"elf_magic_only", std::string("\x7f"
                                     "ELF\x02\x01\x01",
                                     7)},
      {"cut", real.substr(0, 4096)},
      {"scrambled", scrambled},
      {"bad_headers", bad_headers}};
  AddressSpace space;
  uint64_t base = 0x10000000;
  for (const auto& [name, content] : files) {
    const std::string path = dir.path() + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    space.Add({base, base + 0x100000, 0, path, "", true});
    base += 0x1000000;
  }
  Symbolizer symbolizer;
  Unwinder unwinder;
  std::vector<uint8_t> stack(4096, 0x41);
  base = 0x10000000;
  for (const auto& [name, content] : files) {
    for (uint64_t offset : {0x0ull, 0x1000ull, 0x1234ull, 0xfffffull}) {
      const auto frames = symbolizer.Symbolize(space, base + offset, offset != 0);
      ASSERT_FALSE(frames.empty()) << name;
      EXPECT_FALSE(frames.back().function.empty()) << name;
      EXPECT_EQ(frames.back().module, name);
      StackSnapshot snapshot;
      snapshot.regs[static_cast<size_t>(X86Reg::kIp)] = base + offset;
      snapshot.regs[static_cast<size_t>(X86Reg::kSp)] = 0x7ff000000000;
      snapshot.regs[static_cast<size_t>(X86Reg::kBp)] = 0x7ff000000100;
      snapshot.regs_mask = ~0ull;
      snapshot.stack = stack;
      EXPECT_GE(unwinder.Unwind(space, snapshot).size(), 1u) << name;
    }
    EXPECT_EQ(symbolizer.Symbolize(space, base + 0x1234, false)[0].function, name + "+0x1234")
        << "nothing in " << name << " names code";
    base += 0x1000000;
  }
}

TEST(SymbolsBadInput, AFileReplacedSinceItWasMappedIsNotTrusted) {
  ScratchDir dir;
  CapturedSample sample = CaptureC(dir);
  auto space = AddressSpace::FromProcMaps(sample.maps, "maps");
  ASSERT_TRUE(space.ok());
  const uint64_t pc = sample.snapshot.reg(X86Reg::kIp);
  Symbolizer symbolizer;
  EXPECT_EQ(symbolizer.Symbolize(*space, pc, false).back().function, "middle");
  AddressSpace replaced;
  for (Mapping m : space->mappings()) {
    m.build_id = "00112233445566778899aabbccddeeff00112233";  // not the file's
    replaced.Add(m);
  }
  Symbolizer fresh;
  const auto frames = fresh.Symbolize(replaced, pc, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function.rfind("symbols_target_c_cfi+0x", 0), 0u) << frames[0].function;
}

}  // namespace
}  // namespace profsh::symbols
