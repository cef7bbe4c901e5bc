#include "engine/exporters/exporter.h"

namespace profsh {

ExporterRegistry& ExporterRegistry::Instance() {
  static ExporterRegistry* registry = [] {
    auto* r = new ExporterRegistry();
    r->Register(MakeChromeTraceExporter());
    r->Register(MakeProfshFormatExporter());
    r->Register(MakeStacksExporter());
    r->Register(MakeSqliteExporter());
    return r;
  }();
  return *registry;
}

void ExporterRegistry::Register(std::unique_ptr<Exporter> exporter) {
  exporters_.push_back(std::move(exporter));
}

const Exporter* ExporterRegistry::Find(std::string_view name) const {
  for (const auto& e : exporters_) {
    if (e->name() == name) return e.get();
  }
  return nullptr;
}

std::vector<std::string_view> ExporterRegistry::names() const {
  std::vector<std::string_view> out;
  for (const auto& e : exporters_) out.push_back(e->name());
  return out;
}

Status ExportTrace(const Trace& trace, std::string_view format, const std::string& path,
                   const ExportOptions& options) {
  const Exporter* exporter = ExporterRegistry::Instance().Find(format);
  if (exporter == nullptr) return Error{"unknown export format '" + std::string(format) + "'"};
  auto writer = AtomicWriter::Create(path);
  if (!writer.ok()) return writer.error();
  Status s = exporter->Write(trace, options, *writer.value());
  if (!s.ok()) return s;
  return writer.value()->Commit();
}

}  // namespace profsh
