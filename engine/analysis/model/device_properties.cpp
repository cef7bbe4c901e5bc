#include "engine/analysis/model/device_properties.h"

#include <charconv>
#include <string_view>

#include "engine/util/json_scan.h"

namespace profsh {

namespace {

// Just enough JSON for a list of flat objects: strings, integers, and any other value skipped.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  char Peek() {
    while (p_ < s_.size() && json::IsSpace(s_[p_])) ++p_;
    return p_ < s_.size() ? s_[p_] : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++p_;
    return true;
  }
  bool AtEnd() { return Peek() == '\0'; }
  std::optional<std::string> String() {
    if (!Consume('"')) return std::nullopt;
    std::string out;
    while (p_ < s_.size() && s_[p_] != '"') {
      if (s_[p_] == '\\' && p_ + 1 < s_.size()) {
        const char e = s_[++p_];
        out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);  // names hold no other escapes
        ++p_;
        continue;
      }
      out.push_back(s_[p_++]);
    }
    if (p_ >= s_.size()) return std::nullopt;
    ++p_;
    return out;
  }
  // A number; nullopt (and the value skipped) for anything else or a fractional number.
  std::optional<int64_t> Int() {
    Peek();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s_.data() + p_, s_.data() + s_.size(), v);
    const size_t used = static_cast<size_t>(end - (s_.data() + p_));
    if (ec != std::errc() ||
        (p_ + used < s_.size() &&
         (s_[p_ + used] == '.' || s_[p_ + used] == 'e' || s_[p_ + used] == 'E'))) {
      Skip();
      return std::nullopt;
    }
    p_ += used;
    return v;
  }
  // Skips one value of any kind; false on text that is not JSON.
  bool Skip() {
    const char c = Peek();
    if (c == '"') return String().has_value();
    if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      ++p_;
      if (Consume(close)) return true;
      do {
        if (close == '}' && (!String() || !Consume(':'))) return false;
        if (!Skip()) return false;
      } while (Consume(','));
      return Consume(close);
    }
    const size_t start = p_;
    while (p_ < s_.size() && s_[p_] != ',' && s_[p_] != ']' && s_[p_] != '}' &&
           !json::IsSpace(s_[p_]))
      ++p_;
    return p_ > start;
  }

 private:
  std::string_view s_;
  size_t p_ = 0;
};

void ReadField(Reader& in, std::string_view key, DeviceProperties* d) {
  if (key == "name") {
    if (in.Peek() == '"') {
      d->name = in.String();
    } else {
      in.Skip();
    }
    return;
  }
  std::optional<int64_t>* field = key == "id"               ? &d->id
                                  : key == "totalGlobalMem" ? &d->total_global_mem
                                  : key == "computeMajor"   ? &d->compute_major
                                  : key == "computeMinor"   ? &d->compute_minor
                                  : key == "numSms"         ? &d->num_sms
                                                            : nullptr;
  if (field == nullptr) {
    in.Skip();
  } else {
    *field = in.Int();
  }
}

}  // namespace

std::vector<DeviceProperties> ParseDeviceProperties(std::string_view json) {
  std::vector<DeviceProperties> devices;
  Reader in(json);
  if (!in.Consume('[') || in.Consume(']')) return devices;
  do {
    DeviceProperties d;
    if (in.Consume('{')) {
      if (!in.Consume('}')) {
        do {
          std::optional<std::string> key = in.String();
          if (!key || !in.Consume(':')) return devices;
          ReadField(in, *key, &d);
        } while (in.Consume(','));
        if (!in.Consume('}')) return devices;
      }
    } else if (!in.Skip()) {
      return devices;
    }
    devices.push_back(std::move(d));
  } while (in.Consume(','));
  return devices;
}

std::vector<DeviceProperties> ReadDeviceProperties(const Trace& trace) {
  const std::string* json = trace.FindMetadata("deviceProperties");
  return json == nullptr ? std::vector<DeviceProperties>{} : ParseDeviceProperties(*json);
}

}  // namespace profsh
