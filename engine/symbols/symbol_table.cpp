#include "engine/symbols/symbol_table.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>

namespace profsh::symbols {
namespace {

struct Candidate {
  SymbolTable::Entry entry;
  uint64_t size;
  int binding_rank;  // 2 global, 1 weak, 0 local
  int underscores;
};

int LeadingUnderscores(const char* name) {
  int n = 0;
  while (name[n] == '_') ++n;
  return n;
}

// Whether `a` is the better name for an address than `b` (perf's choose_best_symbol order).
bool Better(const Candidate& a, const Candidate& b) {
  if (a.binding_rank != b.binding_rank) return a.binding_rank > b.binding_rank;
  if (a.underscores != b.underscores) return a.underscores < b.underscores;
  const size_t la = std::strlen(a.entry.name), lb = std::strlen(b.entry.name);
  if (la != lb) return la > lb;
  return std::strcmp(a.entry.name, b.entry.name) < 0;
}

void Collect(Elf* elf, std::vector<Candidate>* out) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_entsize == 0 ||
        (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    const size_t count =
        std::min<size_t>(shdr.sh_size / shdr.sh_entsize, data->d_size / shdr.sh_entsize);
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
      const int type = GELF_ST_TYPE(sym.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
          sym.st_value == 0) {
        continue;
      }
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name == nullptr || *name == '\0') continue;
      const int binding = GELF_ST_BIND(sym.st_info);
      out->push_back({{sym.st_value, 0, name},
                      sym.st_size,
                      binding == STB_GLOBAL ? 2
                      : binding == STB_WEAK ? 1
                                            : 0,
                      LeadingUnderscores(name)});
    }
  }
}

}  // namespace

SymbolTable SymbolTable::Read(std::initializer_list<Elf*> elves) {
  std::vector<Candidate> candidates;
  for (Elf* elf : elves) {
    if (elf != nullptr) Collect(elf, &candidates);
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.entry.start != b.entry.start) return a.entry.start < b.entry.start;
    return Better(a, b);
  });
  SymbolTable table;
  table.entries_.reserve(candidates.size());
  uint64_t size_of_last = 0;
  for (const Candidate& c : candidates) {
    if (!table.entries_.empty() && table.entries_.back().start == c.entry.start) {
      size_of_last = std::max(size_of_last, c.size);  // an alias: the first (best) name stays
      table.entries_.back().end = table.entries_.back().start + size_of_last;
      continue;
    }
    table.entries_.push_back(c.entry);
    size_of_last = c.size;
    table.entries_.back().end = c.entry.start + c.size;
  }
  for (size_t i = 0; i < table.entries_.size(); ++i) {
    Entry& e = table.entries_[i];
    if (e.end == e.start) {
      e.end = i + 1 < table.entries_.size() ? table.entries_[i + 1].start : e.start + 1;
    }
  }
  return table;
}

const SymbolTable::Entry* SymbolTable::Find(uint64_t address) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                             [](uint64_t a, const Entry& e) { return a < e.start; });
  // The nearest symbol starting at or below the address, or one just before it that is longer
  // (a function that contains a smaller local one).
  for (int tries = 0; it != entries_.begin() && tries < 4; ++tries) {
    --it;
    if (address < it->end) return &*it;
  }
  return nullptr;
}

}  // namespace profsh::symbols
