// The [vdso] mapping has no file: its frames are named and unwound from this process's copy of
// the kernel's vDSO. Checked against nm's reading of a dump of the same image.
#include <gtest/gtest.h>
#include <sys/auxv.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "engine/symbols/symbolizer.h"
#include "engine/symbols/unwinder.h"
#include "tests/symbols/snapshot_file.h"

namespace profsh::symbols {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SymbolsVdso, FramesInTheVdsoAreNamedAndUnwound) {
  auto space = AddressSpace::FromProcMaps(ReadAll("/proc/self/maps"), "/proc/self/maps");
  ASSERT_TRUE(space.ok()) << space.error().message;
  const Mapping* vdso = nullptr;
  for (const Mapping& m : space->mappings()) {
    if (m.path == "[vdso]") vdso = &m;
  }
  if (vdso == nullptr || getauxval(AT_SYSINFO_EHDR) == 0) GTEST_SKIP() << "no vDSO here";
  ASSERT_EQ(vdso->start, getauxval(AT_SYSINFO_EHDR));
  // nm's address of clock_gettime in a dump of the image.
  testing::ScratchDir dir;
  const std::string dump = dir.path() + "/vdso.so";
  {
    std::ofstream out(dump, std::ios::binary);
    out.write(reinterpret_cast<const char*>(vdso->start),
              static_cast<std::streamsize>(vdso->end - vdso->start));
  }
  FILE* nm = popen(("nm -D --defined-only " + dump + " 2>/dev/null").c_str(), "r");
  ASSERT_NE(nm, nullptr);
  uint64_t address = 0;
  std::vector<std::pair<uint64_t, std::string>> symbols;
  char line[512];
  while (std::fgets(line, sizeof line, nm) != nullptr) {
    unsigned long long value = 0;
    char type = 0, name[256] = {};
    if (std::sscanf(line, "%llx %c %255s", &value, &type, name) != 3) continue;
    std::string plain = name;  // without its version ("@@LINUX_2.6")
    plain = plain.substr(0, plain.find('@'));
    symbols.emplace_back(value, plain);
    if (std::string(name).rfind("__vdso_clock_gettime", 0) == 0) address = value;
  }
  pclose(nm);
  ASSERT_NE(address, 0u) << "nm found no __vdso_clock_gettime";
  const uint64_t pc = vdso->start + address;  // the vDSO's p_vaddr is 0

  Symbolizer symbolizer;
  const auto frames = symbolizer.Symbolize(*space, pc, false);
  ASSERT_EQ(frames.size(), 1u);
  // Any of the names nm gives the address (the vDSO exports aliases: clock_gettime too).
  bool named_as_nm_does = false;
  for (const auto& [value, name] : symbols) {
    if (value == address && frames[0].function == name) named_as_nm_does = true;
  }
  EXPECT_TRUE(named_as_nm_does) << frames[0].function;
  EXPECT_EQ(frames[0].module, "[vdso]");

  // At the function's first instruction the return address is at [sp]: the vDSO's CFI says so.
  const Mapping* text = space->Find(reinterpret_cast<uint64_t>(&ReadAll));
  ASSERT_NE(text, nullptr);
  const uint64_t return_address = reinterpret_cast<uint64_t>(&ReadAll) + 4;
  std::vector<uint8_t> stack(64, 0);
  std::memcpy(stack.data(), &return_address, 8);
  StackSnapshot snapshot;
  snapshot.regs[static_cast<size_t>(X86Reg::kIp)] = pc;
  snapshot.regs[static_cast<size_t>(X86Reg::kSp)] = 0x7ff000000000;
  snapshot.regs_mask = ~0ull;
  snapshot.stack = stack;
  Unwinder unwinder;
  const auto unwound = unwinder.Unwind(*space, snapshot, 2);
  ASSERT_EQ(unwound.size(), 2u);
  EXPECT_EQ(unwound[1].pc, return_address);
  EXPECT_TRUE(unwound[1].is_return_address);
}

}  // namespace
}  // namespace profsh::symbols
