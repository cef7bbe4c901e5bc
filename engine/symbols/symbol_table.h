// The function symbols of one file, sorted for binary search: .symtab (of the file, or of its
// separate debug file when the file is stripped) and .dynsym. libdw's dwfl_module_addrsym scans
// the whole table per lookup, which for libtorch_cpu.so (hundreds of thousands of symbols)
// costs more than all the rest of symbolisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <vector>

typedef struct Elf Elf;

namespace profsh::symbols {

class SymbolTable {
 public:
  struct Entry {
    uint64_t start = 0;
    uint64_t end = 0;  // one past; a symbol of size 0 reaches the next one (as perf reads it)
    const char* name = nullptr;  // raw, in the ELF's string table (alive as long as the Elf)
  };

  // Symbols of every ELF given (null ones skipped); where several name one address the one perf
  // would show wins: global over weak over local, fewer leading underscores, then longer. The
  // first ELF's PLT entries are named "function@plt" after their relocations, as perf does.
  static SymbolTable Read(std::initializer_list<Elf*> elves);
  // Null when no function symbol covers the address.
  const Entry* Find(uint64_t address) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
  std::deque<std::string> plt_names_;  // what the PLT entries' names point into
};

}  // namespace profsh::symbols
