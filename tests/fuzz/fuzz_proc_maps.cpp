// /proc/PID/maps parsing (engine/symbols/address_space.h), then mappings added over the parsed
// ones (as mmap records arrive) and lookups: the space must stay sorted and free of overlaps,
// and every lookup must land in the mapping that holds the address.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "engine/symbols/address_space.h"

namespace {

void CheckInvariants(const profsh::symbols::AddressSpace& space) {
  const auto& m = space.mappings();
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i].start >= m[i].end) std::abort();
    if (i > 0 && m[i - 1].end > m[i].start) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profsh::symbols;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto space = AddressSpace::FromProcMaps(text, "fuzz");
  if (!space.ok()) {
    if (space.error().message.rfind("fuzz:", 0) != 0) std::abort();  // errors name the origin
    return 0;
  }
  CheckInvariants(*space);
  // The input's bytes again, as mappings added over the parsed ones and as addresses.
  for (size_t at = 0; at + 16 <= size; at += 16) {
    uint64_t start, length;
    std::memcpy(&start, data + at, 8);
    std::memcpy(&length, data + at + 8, 8);
    length &= 0xffffff;
    if (start > UINT64_MAX - length) continue;
    space->Add({start, start + length, start & 0xfff, "/fuzz", "", true});
    CheckInvariants(*space);
    const Mapping* found = space->Find(start);
    if (length > 0 && (found == nullptr || found->path != "/fuzz")) std::abort();
    if (const Mapping* m = space->Find(start ^ length);
        m && !(m->start <= (start ^ length) && (start ^ length) < m->end)) {
      std::abort();
    }
  }
  return 0;
}
