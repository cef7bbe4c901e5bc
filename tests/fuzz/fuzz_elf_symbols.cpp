// Symbolisation and unwinding over a file that claims to be ELF (engine/symbols): the input is
// written to a scratch file mapped as a library's code, then named at several addresses and
// unwound through with a stack made of the input's first bytes. Nothing may crash, hang or
// leak, and every address keeps a name.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/symbols/symbolizer.h"
#include "engine/symbols/unwinder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profsh::symbols;
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir != nullptr && *dir ? dir : "/tmp") +
                           "/profsh-fuzz-elf-" + std::to_string(getpid()) + ".so";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  AddressSpace space;
  constexpr uint64_t kBase = 0x7f0000000000;
  space.Add({kBase, kBase + 0x200000, 0, path, "", true});
  {
    Symbolizer symbolizer(SymbolizerOptions{{}, "/nonexistent"});
    Unwinder unwinder;
    std::vector<uint8_t> stack(data, data + std::min<size_t>(size, 4096));
    for (uint64_t offset : {0x0ull, 0x40ull, 0x1000ull, 0x1100ull, 0x10f0ull, 0x1fffffull}) {
      for (bool is_return : {false, true}) {
        const auto frames = symbolizer.Symbolize(space, kBase + offset, is_return);
        if (frames.empty() || frames.back().function.empty()) std::abort();
      }
      StackSnapshot snapshot;
      snapshot.regs[static_cast<size_t>(X86Reg::kIp)] = kBase + offset;
      snapshot.regs[static_cast<size_t>(X86Reg::kSp)] = 0x7ffd00000000;
      snapshot.regs[static_cast<size_t>(X86Reg::kBp)] = 0x7ffd00000010;
      snapshot.regs_mask = ~0ull;
      snapshot.stack = stack;
      if (unwinder.Unwind(space, snapshot, 64).empty()) std::abort();
    }
  }
  std::remove(path.c_str());
  return 0;
}
