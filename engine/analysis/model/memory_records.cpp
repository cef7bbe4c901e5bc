#include "engine/analysis/model/memory_records.h"

#include "engine/trace/kineto_schema.h"

namespace profsh {

std::vector<MemoryRecord> MemoryRecordsOf(const Trace& t) {
  std::vector<MemoryRecord> out;
  const auto memory = t.strings.Find(kineto::kMemoryEvent);
  const auto bytes_key = t.strings.Find(kineto::kBytes);
  if (!memory || !bytes_key) return out;
  const auto type_key = t.strings.Find(kineto::kDeviceType);
  const auto id_key = t.strings.Find(kineto::kDeviceId);
  const auto addr_key = t.strings.Find(kineto::kAddr);
  const auto allocated_key = t.strings.Find(kineto::kTotalAllocated);
  const auto reserved_key = t.strings.Find(kineto::kTotalReserved);
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events.name(i) != *memory) continue;
    const auto args = t.args.Get(t.events.args(i));
    ArgValue v;
    if (!args.Find(*bytes_key, &v) || !v.is_number()) continue;
    MemoryRecord r{static_cast<uint32_t>(i), v.AsInt()};
    if (type_key && args.Find(*type_key, &v) && v.is_number()) r.device_type = v.AsInt();
    if (id_key && args.Find(*id_key, &v) && v.is_number()) r.device_id = v.AsInt();
    if (addr_key && args.Find(*addr_key, &v) && v.is_number()) {
      r.has_addr = true;
      r.addr = v.AsInt();
    }
    if (allocated_key && args.Find(*allocated_key, &v) && v.is_number())
      r.total_allocated = v.AsDouble();
    if (reserved_key && args.Find(*reserved_key, &v) && v.is_number())
      r.total_reserved = v.AsDouble();
    out.push_back(r);
  }
  return out;
}

}  // namespace profsh
