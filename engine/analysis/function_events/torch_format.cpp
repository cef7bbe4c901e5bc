#include "engine/analysis/function_events/torch_format.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "engine/analysis/model/operator_args.h"

namespace profsh {

TorchFormat DetectTorchFormat(const Trace& trace) {
  return CarriesTorch2OperatorArguments(trace) ? TorchFormat::k2 : TorchFormat::k113;
}

int64_t TorchTraceStartNs(const Trace& trace) {
  const EventTable& ev = trace.events;
  int64_t earliest = INT64_MAX, span = INT64_MAX;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase(i) != 'X') continue;
    earliest = std::min(earliest, ev.ts(i));
    if (trace.category_name(ev.category(i)) == "Trace" &&
        trace.str(ev.name(i)).starts_with("PyTorch Profiler"))
      span = std::min(span, ev.ts(i));
  }
  return span != INT64_MAX ? span : earliest == INT64_MAX ? 0 : earliest;
}

double PythonDivide1000(int64_t a) {
  // On the magnitude, so that INT64_MIN has one too.
  const uint64_t n = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  double quotient;
  if (n < (uint64_t{1} << 53)) {
    // Both exact as doubles: IEEE division rounds once. (The construction below keeps 53
    // significant bits only when the quotient is at least 1.)
    quotient = static_cast<double>(n) / 1000.0;
  } else if (const uint64_t q = n / 1000, r = n % 1000; q >= (uint64_t{1} << 53)) {
    quotient = static_cast<double>(q);  // r cannot show at that size
  } else {
    int bits = 0;  // the binary digits q needs
    while (bits < 63 && (q >> bits) != 0) ++bits;
    const int m = 53 - bits;  // fractional binary digits a double keeps next to q
    // r / 1000 in units of 2^-m: whole units and a remainder `rem` out of 1000.
    const unsigned __int128 scaled = static_cast<unsigned __int128>(r) << m;
    unsigned __int128 mantissa = (static_cast<unsigned __int128>(q) << m) + scaled / 1000;
    const uint64_t rem = static_cast<uint64_t>(scaled % 1000);
    if (rem > 500 || (rem == 500 && (mantissa & 1))) ++mantissa;
    quotient = std::ldexp(static_cast<double>(mantissa), -m);  // mantissa < 2^54: exact
  }
  return a < 0 ? -quotient : quotient;
}

}  // namespace profsh
