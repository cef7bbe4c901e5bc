// The sorted symbol table (engine/symbols/symbol_table.h): every function and PLT entry
// objdump labels in a test program is found at its address under the same name.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "engine/symbols/demangle.h"
#include "engine/symbols/elf_file.h"
#include "engine/symbols/symbol_table.h"

namespace profsh::symbols {
namespace {

// objdump -d's labels of the code and the lazy PLT: "0000000000001030 <dlerror@plt>:" (its
// .plt.got entries, named from the GOT's relocations, are not read by profsh, as by perf).
std::map<uint64_t, std::string> ObjdumpLabels(const std::string& path) {
  std::map<uint64_t, std::string> labels;
  FILE* out =
      popen(("objdump -d --no-show-raw-insn -j .text -j .plt -j .plt.sec " + path + " 2>/dev/null")
                .c_str(),
            "r");
  if (out == nullptr) return labels;
  char line[4096];
  while (std::fgets(line, sizeof line, out) != nullptr) {
    unsigned long long address = 0;
    char name[2048];
    if (std::sscanf(line, "%llx <%2047[^>]>:", &address, name) == 2) labels[address] = name;
  }
  pclose(out);
  return labels;
}

TEST(SymbolTable, NamesWhatObjdumpLabelsIncludingPltEntries) {
  const auto file = ElfFile::Open(SYMBOLS_TARGET_CXX);
  ASSERT_NE(file, nullptr);
  const SymbolTable table = SymbolTable::Read({file->elf()});
  const auto labels = ObjdumpLabels(SYMBOLS_TARGET_CXX);
  ASSERT_GT(labels.size(), 5u) << "objdump gave nothing";
  size_t plt = 0, functions = 0;
  for (const auto& [address, name] : labels) {
    // PLT0, the resolver's stub, is labelled "first@plt-0x10": no function of its own.
    if (name.find("-0x") != std::string::npos || name.find("+0x") != std::string::npos) continue;
    const SymbolTable::Entry* entry = table.Find(address);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_EQ(entry->start, address) << name;
    EXPECT_EQ(std::string(entry->name), name);
    plt += name.ends_with("@plt");
    ++functions;
  }
  EXPECT_GE(plt, 5u);  // dlopen, dlsym, sigaction, ...
  EXPECT_GE(functions, 10u);
  EXPECT_EQ(table.Find(0), nullptr);
  EXPECT_EQ(Demangle("_ZdlPvm@plt"), "operator delete(void*, unsigned long)@plt");
  EXPECT_EQ(Demangle("_ZN11profsh_test10SampleHereEi"), "profsh_test::SampleHere(int)");
  EXPECT_EQ(Demangle("_Znot_mangled"), "_Znot_mangled");
  EXPECT_EQ(Demangle("plain_c"), "plain_c");
}

}  // namespace
}  // namespace profsh::symbols
