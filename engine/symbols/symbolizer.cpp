#include "engine/symbols/symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "engine/symbols/debug_files.h"
#include "engine/symbols/demangle.h"
#include "engine/symbols/module_files.h"
#include "engine/symbols/symbol_table.h"

namespace profsh::symbols {
namespace {

std::string OffsetName(const std::string& module, uint64_t offset) {
  char hex[24];
  std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(offset));
  return module + hex;
}

// Dwfl asks for a module's debug info lazily; the module's user data points at the path found
// for it beforehand (an empty one: the module's own sections are all there is).
int FindDebuginfo(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*, const char*,
                  GElf_Word, char** debuginfo_file_name) {
  const auto* path = static_cast<const std::string*>(*userdata);
  if (path == nullptr || path->empty()) return -1;
  const int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) *debuginfo_file_name = strdup(path->c_str());
  return fd;
}

const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = FindDebuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

// The DIE that declares a function: inlined copies and out-of-line definitions point back to
// it (DW_AT_abstract_origin, DW_AT_specification), and it sits in its namespaces and classes.
Dwarf_Die DeclarationOf(Dwarf_Die die) {
  for (int hops = 0; hops < 8; ++hops) {
    Dwarf_Attribute attr;
    Dwarf_Die next;
    if ((dwarf_attr(&die, DW_AT_abstract_origin, &attr) == nullptr &&
         dwarf_attr(&die, DW_AT_specification, &attr) == nullptr) ||
        dwarf_formref_die(&attr, &next) == nullptr) {
      break;
    }
    die = next;
  }
  return die;
}

// "ns::Class::" for a declaration inside namespaces and classes.
std::string ScopePrefix(Dwarf_Die* declaration) {
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes_die(declaration, &scopes);
  std::string prefix;
  for (int i = n - 1; i >= 1; --i) {  // outermost first; scopes[0] is the function itself
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
        tag != DW_TAG_union_type) {
      continue;
    }
    const char* name = dwarf_diename(&scopes[i]);
    prefix += name != nullptr ? name : "(anonymous namespace)";
    prefix += "::";
  }
  std::free(scopes);
  return prefix;
}

// A DWARF function's name: its linkage name demangled when it has one (C++ scopes and
// parameters), else its plain name in its namespaces and classes (functions of internal
// linkage have no linkage name; their parameters are not spelled out).
std::string DieFunctionName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name, &attr) != nullptr) {
      if (const char* linkage = dwarf_formstring(&attr)) return Demangle(linkage);
    }
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr) {
    if (const char* plain = dwarf_formstring(&attr)) {
      Dwarf_Die declaration = DeclarationOf(*die);
      return ScopePrefix(&declaration) + plain;
    }
  }
  return {};
}

// One file's symbols and debug info, through a Dwfl of its own holding just that module (at
// bias 0 for a shared object: addresses are the file's).
struct ModuleSymbols {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  Dwarf_Addr bias = 0;
  std::string debug_file;
  std::unique_ptr<ElfFile> debug;  // the separate debug file, for its .symtab
  SymbolTable table;
  std::unordered_map<uint64_t, std::vector<SourceFrame>> cache;  // by lookup offset

  ~ModuleSymbols() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

}  // namespace

struct Symbolizer::Impl {
  DebugSearch search;
  ModuleFiles files;
  std::unordered_map<const ElfFile*, std::unique_ptr<ModuleSymbols>> modules;

  ModuleSymbols& SymbolsOf(const ElfFile* file) {
    auto it = modules.find(file);
    if (it != modules.end()) return *it->second;
    auto symbols = std::make_unique<ModuleSymbols>();
    symbols->debug_file = FindDebugFile(*file, search);
    if (!symbols->debug_file.empty()) symbols->debug = ElfFile::Open(symbols->debug_file);
    symbols->table =
        SymbolTable::Read({file->elf(), symbols->debug ? symbols->debug->elf() : nullptr});
    symbols->dwfl = IsFilePath(file->path()) ? dwfl_begin(&kCallbacks) : nullptr;
    if (symbols->dwfl != nullptr) {
      dwfl_report_begin(symbols->dwfl);
      symbols->module = dwfl_report_elf(symbols->dwfl, ModuleName(file->path()).c_str(),
                                        file->path().c_str(), -1, 0, false);
      dwfl_report_end(symbols->dwfl, nullptr, nullptr);
      if (symbols->module != nullptr) {
        void** userdata = nullptr;
        dwfl_module_info(symbols->module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr,
                         nullptr);
        if (userdata != nullptr) *userdata = &symbols->debug_file;
        if (dwfl_module_getelf(symbols->module, &symbols->bias) == nullptr)
          symbols->module = nullptr;
      }
    }
    return *modules.emplace(file, std::move(symbols)).first->second;
  }

  // The frames at `address` (the file's own address space); empty when nothing names it.
  static std::vector<SourceFrame> Describe(ModuleSymbols& symbols, uint64_t address) {
    std::vector<SourceFrame> frames;
    const SymbolTable::Entry* entry = symbols.table.Find(address);
    const char* symbol = entry != nullptr ? entry->name : nullptr;
    if (symbols.module == nullptr) {
      if (symbol != nullptr) frames.push_back(SourceFrame{Demangle(symbol), "", 0, "", 0, false});
      return frames;
    }
    const Dwarf_Addr at = address + symbols.bias;
    std::string line_file;
    int line_number = 0;
    if (Dwfl_Line* line = dwfl_module_getsrc(symbols.module, at)) {
      if (const char* src = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr)) {
        line_file = src;
      }
    }
    Dwarf_Addr dwarf_bias = 0;
    Dwarf_Die* cu = dwfl_module_addrdie(symbols.module, at, &dwarf_bias);
    Dwarf_Die* scopes = nullptr;
    const int nscopes = cu != nullptr ? dwarf_getscopes(cu, at - dwarf_bias, &scopes) : 0;
    Dwarf_Files* files = nullptr;
    size_t nfiles = 0;
    if (cu != nullptr && dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = nullptr;
    std::string file = line_file;
    int line = line_number;
    for (int i = 0; i < nscopes; ++i) {
      Dwarf_Die* scope = &scopes[i];
      const int tag = dwarf_tag(scope);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
      SourceFrame frame;
      frame.function = DieFunctionName(scope);
      frame.file = file;
      frame.line = static_cast<uint32_t>(line > 0 ? line : 0);
      frame.inlined = tag == DW_TAG_inlined_subroutine;
      if (!frame.inlined) {
        // The symbol table's name is the one perf and the linker show; DWARF's is the fallback.
        if (symbol != nullptr) frame.function = Demangle(symbol);
        frames.push_back(std::move(frame));
        break;
      }
      // The outer frame's line is where this inlined call was made.
      Dwarf_Attribute attr;
      Dwarf_Word call_file = 0, call_line = 0;
      file.clear();
      line = 0;
      if (dwarf_formudata(dwarf_attr(scope, DW_AT_call_file, &attr), &call_file) == 0 &&
          files != nullptr && call_file < nfiles) {
        if (const char* name = dwarf_filesrc(files, call_file, nullptr, nullptr)) file = name;
      }
      if (dwarf_formudata(dwarf_attr(scope, DW_AT_call_line, &attr), &call_line) == 0) {
        line = static_cast<int>(call_line);
      }
      frames.push_back(std::move(frame));
    }
    std::free(scopes);
    if (frames.empty() || frames.back().inlined) {
      // No DWARF subprogram: the symbol table alone names the function.
      if (symbol == nullptr) return {};
      SourceFrame frame;
      frame.function = Demangle(symbol);
      frame.file = frames.empty() ? line_file : file;
      frame.line =
          static_cast<uint32_t>(frames.empty() ? std::max(line_number, 0) : std::max(line, 0));
      frames.push_back(std::move(frame));
    }
    return frames;
  }
};

Symbolizer::Symbolizer() : Symbolizer(SymbolizerOptions()) {}

Symbolizer::Symbolizer(SymbolizerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->search.roots = std::move(options.debug_roots);
  impl_->search.debuginfod_cache =
      options.debuginfod_cache.empty() ? DefaultDebuginfodCache() : options.debuginfod_cache;
}

Symbolizer::~Symbolizer() = default;

std::vector<SourceFrame> Symbolizer::Symbolize(const AddressSpace& space, uint64_t pc,
                                               bool is_return_address) {
  ++stats_.lookups;
  const Mapping* mapping = space.Find(pc);
  if (mapping == nullptr) {
    ++stats_.unnamed;
    return {SourceFrame{OffsetName("[unknown]", pc), "[unknown]", pc, "", 0, false}};
  }
  const std::string module = ModuleName(mapping->path);
  const uint64_t offset = pc - mapping->start + mapping->file_offset;
  const uint64_t lookup_offset = is_return_address && offset > 0 ? offset - 1 : offset;
  auto unnamed = [&]() {
    ++stats_.unnamed;
    return std::vector<SourceFrame>{
        SourceFrame{OffsetName(module, offset), module, offset, "", 0, false}};
  };
  try {
    const ElfFile* file = impl_->files.Get(*mapping);
    stats_.modules_opened = impl_->files.opened();
    if (file == nullptr) return unnamed();
    ModuleSymbols& symbols = impl_->SymbolsOf(file);
    auto cached = symbols.cache.find(lookup_offset);
    if (cached != symbols.cache.end()) {
      ++stats_.cache_hits;
      if (cached->second.empty()) return unnamed();
      // The same lookup serves a sampled pc and a return address one byte on: the offset is
      // this pc's.
      std::vector<SourceFrame> frames = cached->second;
      for (SourceFrame& frame : frames) frame.module_offset = offset;
      return frames;
    }
    std::vector<SourceFrame> frames;
    if (const auto address = file->OffsetToAddress(lookup_offset)) {
      frames = Impl::Describe(symbols, *address);
    }
    // A "return address" at a function's first byte puts pc - 1 in the padding before it: it
    // was no return address (a frame-pointer walk read a function pointer); name pc itself.
    if (frames.empty() && lookup_offset != offset) {
      if (const auto address = file->OffsetToAddress(offset)) {
        frames = Impl::Describe(symbols, *address);
      }
    }
    for (SourceFrame& frame : frames) {
      frame.module = module;
      frame.module_offset = offset;
      if (frame.function.empty()) frame.function = OffsetName(module, offset);
    }
    symbols.cache.emplace(lookup_offset, frames);
    if (frames.empty()) return unnamed();
    return frames;
  } catch (...) {  // out of memory: the caller still gets a frame
    return unnamed();
  }
}

}  // namespace profsh::symbols
