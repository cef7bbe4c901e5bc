// Opening any trace profsh reads: a file in any registered format (detected from its content),
// a collector stream, or a session folder of streams.
#pragma once

#include <memory>
#include <string>

#include "engine/importers/importer.h"
#include "engine/io/input_source.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

// Every reader: the file importers and the session layer's stream importer.
const ImporterRegistry& TraceReaders();

// Opens, detects and imports `path` (a folder is read as a recording session).
Result<std::unique_ptr<Trace>> LoadTrace(const std::string& path);
Result<std::unique_ptr<Trace>> LoadTraceFrom(InputSource& input);

}  // namespace profsh
