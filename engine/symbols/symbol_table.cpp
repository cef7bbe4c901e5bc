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

bool IsCodeSection(Elf* elf, size_t index, std::vector<int8_t>* known) {
  if (index >= SHN_LORESERVE) return false;
  if (index >= known->size()) known->resize(index + 1, -1);
  int8_t& code = (*known)[index];
  if (code < 0) {
    GElf_Shdr shdr;
    Elf_Scn* scn = elf_getscn(elf, index);
    code = scn != nullptr && gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_flags & SHF_EXECINSTR);
  }
  return code == 1;
}

void Collect(Elf* elf, std::vector<Candidate>* out) {
  std::vector<int8_t> code_sections;  // by index: -1 not looked at yet
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
      if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      // Functions, and labels in code (hand-written assembly declares no type; perf reads them
      // too).
      if (type != STT_FUNC && type != STT_GNU_IFUNC &&
          !(type == STT_NOTYPE && IsCodeSection(elf, sym.st_shndx, &code_sections))) {
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

// x86-64 PLT entries are 16 bytes; with IBT (.plt.sec) entry i is the i-th of .plt.sec, else
// the (i+1)-th of .plt (entry 0 calls the resolver); .rela.plt's i-th relocation names it.
void CollectPlt(Elf* elf, std::deque<std::string>* names, std::vector<Candidate>* out) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  GElf_Shdr plt{}, plt_sec{}, rela{};
  Elf_Scn* rela_scn = nullptr;
  bool has_plt = false, has_plt_sec = false;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr) continue;
    if (std::strcmp(name, ".plt") == 0) {
      plt = shdr;
      has_plt = true;
    } else if (std::strcmp(name, ".plt.sec") == 0) {
      plt_sec = shdr;
      has_plt_sec = true;
    } else if (std::strcmp(name, ".rela.plt") == 0 && shdr.sh_type == SHT_RELA) {
      rela = shdr;
      rela_scn = scn;
    }
  }
  if (rela_scn == nullptr || rela.sh_entsize == 0 || (!has_plt && !has_plt_sec)) return;
  Elf_Scn* dynsym_scn = elf_getscn(elf, rela.sh_link);
  GElf_Shdr dynsym;
  if (dynsym_scn == nullptr || gelf_getshdr(dynsym_scn, &dynsym) == nullptr) return;
  Elf_Data* relocations = elf_getdata(rela_scn, nullptr);
  Elf_Data* symbols = elf_getdata(dynsym_scn, nullptr);
  if (relocations == nullptr || symbols == nullptr) return;
  const GElf_Shdr& table = has_plt_sec ? plt_sec : plt;
  const uint64_t first = has_plt_sec ? 0 : 1;
  const size_t count =
      std::min<size_t>(rela.sh_size / rela.sh_entsize, relocations->d_size / rela.sh_entsize);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t start = table.sh_addr + (first + i) * 16;
    if ((first + i + 1) * 16 > table.sh_size) break;
    GElf_Rela r;
    GElf_Sym sym;
    if (gelf_getrela(relocations, static_cast<int>(i), &r) == nullptr) break;
    const size_t index = GELF_R_SYM(r.r_info);
    if (index == 0 || gelf_getsym(symbols, static_cast<int>(index), &sym) == nullptr) continue;
    const char* name = elf_strptr(elf, dynsym.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;
    names->push_back(std::string(name) + "@plt");
    // Below every real symbol in rank: a PLT entry never shares an address with a function.
    out->push_back({{start, 0, names->back().c_str()}, 16, -1, 0});
  }
}

}  // namespace

SymbolTable SymbolTable::Read(std::initializer_list<Elf*> elves) {
  std::vector<Candidate> candidates;
  SymbolTable table;
  for (Elf* elf : elves) {
    if (elf == nullptr) continue;
    Collect(elf, &candidates);
    if (elf == *elves.begin()) CollectPlt(elf, &table.plt_names_, &candidates);
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.entry.start != b.entry.start) return a.entry.start < b.entry.start;
    return Better(a, b);
  });
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
