// NVTX v3 injection: NVTX dlopens NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2 with
// its export-table getter, once per shared object that includes NVTX (every one must be
// served). We fill the CORE and CORE2 callback tables; handles we return (domains, registered
// strings) are our ids in pointer clothing, which NVTX hands back unchanged.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "engine/collector/runtime/process.h"
#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"

namespace profsh::runtime {

namespace {

using stream::kSourceNvtx;

// Whether NUL-terminated `text` equals `cached` (`length` bytes and its NUL). Word compares
// never cross a page boundary of `text`, so a shorter `text` is never read past the page its
// terminator is on.
inline bool SameText(const char* text, const char* cached, uint32_t length) {
  const size_t n = size_t{length} + 1;
  // Most messages are short: one masked word compare (the interned copy is padded with zeros).
  if (n <= 8 && (reinterpret_cast<uintptr_t>(text) & 4095) <= 4088) {
    uint64_t a, b;
    memcpy(&a, text, 8);
    memcpy(&b, cached, 8);
    const uint64_t mask = n == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
    return ((a ^ b) & mask) == 0;
  }
  size_t i = 0;
  while (i + 8 <= n && (reinterpret_cast<uintptr_t>(text + i) & 4095) <= 4088) {
    uint64_t a, b;
    memcpy(&a, text + i, 8);
    memcpy(&b, cached + i, 8);
    if (a != b) return false;
    i += 8;
  }
  for (; i < n; ++i) {
    if (text[i] != cached[i]) return false;
  }
  return true;
}

// Whether `text` is the fast entry `e`'s text: two word compares (the entry was made fast only
// where 16 bytes from `text` stay in its page); on little-endian x86 the bytes past the NUL are
// the high ones, shifted out.
inline bool FastSame(const char* text, const MessageCacheEntry& e) {
  uint64_t a, b;
  memcpy(&a, text, 8);
  memcpy(&b, text + 8, 8);
  return (((a ^ e.word[0]) << e.shift[0]) | (((b ^ e.word[1]) << e.shift[1]) << e.shift[2])) == 0;
}

inline MessageCacheEntry& CacheEntry(ThreadSlot* s, const char* text) {
  return s->cache[(reinterpret_cast<uintptr_t>(text) >> 3) % kMessageCacheSize];
}

// Message text -> string id. The per-thread cache keys on the pointer but always compares the
// text, so a buffer reused with new text is interned anew.
__attribute__((noinline)) uint32_t InternMessageOn(ThreadSlot* s, const char* text) {
  MessageCacheEntry& e = CacheEntry(s, text);
  if (e.pointer == text) {
    if (e.fast) {
      if (FastSame(text, e)) return e.id;
    } else if (const StringNode* n = registry().strings().ById(e.id & kIdMask)) {
      if (SameText(text, n->text, n->length)) return e.id;
    }
  }
  const size_t length = strlen(text);
  StringNode* node = registry().strings().Node(text, length);
  const uint32_t tagged = node->id | node->tags;
  e = MessageCacheEntry{};
  e.pointer = text;
  e.id = tagged;
  // Tagged names (step markers, the capture range) must reach EmitPushOn's slow path anyway.
  const size_t n = size_t{node->length} + 1;  // with the NUL
  if (n <= 16 && (reinterpret_cast<uintptr_t>(text) & 4095) <= 4096 - 16 &&
      (tagged & kTagMask) == 0) {
    unsigned char bytes[16] = {};
    memcpy(bytes, node->text, n);
    memcpy(e.word, bytes, 16);
    e.shift[0] = static_cast<uint8_t>(n >= 8 ? 0 : 8 * (8 - n));
    const size_t second = n > 8 ? n - 8 : 0;  // bytes of the second word that count
    const unsigned total = static_cast<unsigned>(8 * (8 - second));  // 0..64
    e.shift[1] = static_cast<uint8_t>(total > 32 ? 32 : total);
    e.shift[2] = static_cast<uint8_t>(total - e.shift[1]);
    e.fast = true;
  }
  return tagged;
}

uint32_t InternMessage(const char* text) {
  if (text == nullptr) text = "";
  // The thread's cache if it has a slot already; interning is not an event, so it neither
  // claims a slot nor counts the thread's lack of one (the event that follows does).
  if (ThreadSlot* s = t_slot) return InternMessageOn(s, text);
  return registry().strings().InternTagged(text, strlen(text));
}

// wchar_t (UTF-32 on Linux) to UTF-8; texts longer than the buffer are cut.
uint32_t InternWide(const wchar_t* text) {
  char buf[4096];
  size_t n = 0;
  for (const wchar_t* p = text; p && *p && n + 4 < sizeof buf; ++p) {
    uint32_t c = static_cast<uint32_t>(*p);
    if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) c = 0xfffd;
    if (c < 0x80) {
      buf[n++] = static_cast<char>(c);
    } else if (c < 0x800) {
      buf[n++] = static_cast<char>(0xc0 | (c >> 6));
      buf[n++] = static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      buf[n++] = static_cast<char>(0xe0 | (c >> 12));
      buf[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      buf[n++] = static_cast<char>(0x80 | (c & 0x3f));
    } else {
      buf[n++] = static_cast<char>(0xf0 | (c >> 18));
      buf[n++] = static_cast<char>(0x80 | ((c >> 12) & 0x3f));
      buf[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      buf[n++] = static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return registry().strings().InternTagged(buf, n);
}

uint16_t DomainOf(nvtxDomainHandle_t domain) {
  return static_cast<uint16_t>(reinterpret_cast<uintptr_t>(domain));
}

// An event's attributes: the message as a string id, and the optional fields in `ext`.
// Returns the flags byte (stream::AttrFlags | payload type << 3).
uint8_t ReadAttributes(const nvtxEventAttributes_t* a, uint32_t* name, RecordExt* ext) {
  *ext = RecordExt{0, 0, 0};
  if (a == nullptr) {  // NVTX documents no meaning for it; record the event unnamed, as "".
    *name = InternMessage("");
    return 0;
  }
  // Fields past `size` were not written by the caller (an older, shorter struct).
  const size_t size = a->size;
  uint8_t flags = 0;
  if (size >= offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) {
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        *name = InternMessage(a->message.ascii);
        break;
      case NVTX_MESSAGE_TYPE_UNICODE:
        *name = InternWide(a->message.unicode);
        break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        *name = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(a->message.registered) - 1);
        break;
      default:
        *name = InternMessage("");
        break;
    }
  } else {
    *name = InternMessage("");
  }
  if (size >= offsetof(nvtxEventAttributes_t, category) + sizeof(a->category) && a->category != 0) {
    ext->category = a->category;
    flags |= stream::kAttrCategory;
  }
  if (size >= offsetof(nvtxEventAttributes_t, color) + sizeof(a->color) &&
      a->colorType == NVTX_COLOR_ARGB) {
    ext->color = a->color;
    flags |= stream::kAttrColor;
  }
  if (size >= offsetof(nvtxEventAttributes_t, payload) + sizeof(a->payload)) {
    uint64_t bits = 0;
    bool has = true;
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        bits = a->payload.ullValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        bits = static_cast<uint64_t>(a->payload.llValue);
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        memcpy(&bits, &a->payload.dValue, 8);
        break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        bits = a->payload.uiValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT32:
        bits = static_cast<uint64_t>(static_cast<int64_t>(a->payload.iValue));
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT: {
        uint32_t f;
        memcpy(&f, &a->payload.fValue, 4);
        bits = f;
        break;
      }
      default:
        has = false;
        break;
    }
    if (has) {
      ext->value = bits;
      flags |= stream::kAttrPayload | static_cast<uint8_t>(a->payloadType << 3);
    }
  }
  return flags;
}

// --- CORE ---
void NVTX_API MarkEx(const nvtxEventAttributes_t* a) {
  uint32_t name;
  RecordExt ext;
  uint8_t flags = ReadAttributes(a, &name, &ext);
  EmitSimple(stream::kMark, flags, 0, name, flags ? &ext : nullptr);
}
void NVTX_API MarkA(const char* m) {
  EmitSimple(stream::kMark, 0, 0, InternMessage(m), nullptr);
}
void NVTX_API MarkW(const wchar_t* m) {
  EmitSimple(stream::kMark, 0, 0, InternWide(m), nullptr);
}

nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  uint32_t name;
  RecordExt ext;
  uint8_t flags = ReadAttributes(a, &name, &ext);
  return EmitRangeStart(flags, 0, name, &ext);
}
nvtxRangeId_t NVTX_API RangeStartA(const char* m) {
  return EmitRangeStart(0, 0, InternMessage(m), nullptr);
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) {
  return EmitRangeStart(0, 0, InternWide(m), nullptr);
}
void NVTX_API RangeEnd(nvtxRangeId_t id) {
  EmitRangeEnd(id);
}

int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  uint32_t name;
  RecordExt ext;
  uint8_t flags = ReadAttributes(a, &name, &ext);
  return EmitPush(stream::kPush, flags, 0, name, flags ? &ext : nullptr);
}
__attribute__((noinline)) int RangePushASlow(const char* m) {
  ThreadSlot* s = CurrentSlot();
  if (__builtin_expect(s == nullptr, 0)) return -1;  // counted by the claim
  return EmitPushOn(s, stream::kPush, 0, 0, InternMessageOn(s, m ? m : ""), nullptr);
}
// The most common NVTX call: a cache hit on a short message is two word compares before
// EmitPushOn; a miss, a long or tagged message, or a thread without a slot take the slow copy.
int NVTX_API RangePushA(const char* m) {
  ThreadSlot* s = t_slot;
  if (__builtin_expect(s == nullptr || m == nullptr, 0)) return RangePushASlow(m);
  const MessageCacheEntry& e = CacheEntry(s, m);
  if (__builtin_expect(e.pointer != m || !e.fast || !FastSame(m, e), 0)) return RangePushASlow(m);
  return EmitPushOn(s, stream::kPush, 0, 0, e.id, nullptr);
}
int NVTX_API RangePushW(const wchar_t* m) {
  return EmitPush(stream::kPush, 0, 0, InternWide(m), nullptr);
}
int NVTX_API RangePop() {
  return EmitPop(stream::kPop, 0);
}

void NVTX_API NameCategoryA(uint32_t category, const char* name) {
  registry().NameCategory(0, category, InternMessage(name));
}
void NVTX_API NameCategoryW(uint32_t category, const wchar_t* name) {
  registry().NameCategory(0, category, InternWide(name));
}
void NVTX_API NameOsThreadA(uint32_t tid, const char* name) {
  registry().NameOsThread(tid, InternMessage(name));
}
void NVTX_API NameOsThreadW(uint32_t tid, const wchar_t* name) {
  registry().NameOsThread(tid, InternWide(name));
}

// --- CORE2 ---
void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  uint32_t name;
  RecordExt ext;
  uint8_t flags = ReadAttributes(a, &name, &ext);
  EmitSimple(stream::kMark, flags, DomainOf(d), name, flags ? &ext : nullptr);
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  uint32_t name;
  RecordExt ext;
  uint8_t flags = ReadAttributes(a, &name, &ext);
  return EmitRangeStart(flags, DomainOf(d), name, &ext);
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) {
  EmitRangeEnd(id);
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  uint32_t name;
  RecordExt ext;
  uint8_t flags = ReadAttributes(a, &name, &ext);
  return EmitPush(stream::kPush, flags, DomainOf(d), name, flags ? &ext : nullptr);
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) {
  return EmitPop(stream::kPop, DomainOf(d));
}

// Resources (named OS or user objects): a handle is all NVTX needs back; names are not drawn.
nvtxResourceHandle_t NVTX_API DomainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
  static std::atomic<uintptr_t> next{1};
  return reinterpret_cast<nvtxResourceHandle_t>(next.fetch_add(1, std::memory_order_relaxed));
}
void NVTX_API DomainResourceDestroy(nvtxResourceHandle_t) {}

void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) {
  registry().NameCategory(DomainOf(d), category, InternMessage(name));
}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
  registry().NameCategory(DomainOf(d), category, InternWide(name));
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(uintptr_t{InternMessage(s)} + 1);
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return reinterpret_cast<nvtxStringHandle_t>(uintptr_t{InternWide(s)} + 1);
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(
      uintptr_t{registry().Domain(InternMessage(name), kSourceNvtx)});
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(
      uintptr_t{registry().Domain(InternWide(name), kSourceNvtx)});
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t) {}
void NVTX_API Initialize(const void*) {}

template <typename F>
void Install(NvtxFunctionTable table, unsigned size, unsigned id, F handler) {
  if (table != nullptr && id < size && table[id] != nullptr) {
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(handler);
  }
}

bool InstallCore(const NvtxExportTableCallbacks* callbacks) {
  NvtxFunctionTable t = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &size) || t == nullptr)
    return false;
  Install(t, size, NVTX_CBID_CORE_MarkEx, MarkEx);
  Install(t, size, NVTX_CBID_CORE_MarkA, MarkA);
  Install(t, size, NVTX_CBID_CORE_MarkW, MarkW);
  Install(t, size, NVTX_CBID_CORE_RangeStartEx, RangeStartEx);
  Install(t, size, NVTX_CBID_CORE_RangeStartA, RangeStartA);
  Install(t, size, NVTX_CBID_CORE_RangeStartW, RangeStartW);
  Install(t, size, NVTX_CBID_CORE_RangeEnd, RangeEnd);
  Install(t, size, NVTX_CBID_CORE_RangePushEx, RangePushEx);
  Install(t, size, NVTX_CBID_CORE_RangePushA, RangePushA);
  Install(t, size, NVTX_CBID_CORE_RangePushW, RangePushW);
  Install(t, size, NVTX_CBID_CORE_RangePop, RangePop);
  Install(t, size, NVTX_CBID_CORE_NameCategoryA, NameCategoryA);
  Install(t, size, NVTX_CBID_CORE_NameCategoryW, NameCategoryW);
  Install(t, size, NVTX_CBID_CORE_NameOsThreadA, NameOsThreadA);
  Install(t, size, NVTX_CBID_CORE_NameOsThreadW, NameOsThreadW);
  return true;
}

bool InstallCore2(const NvtxExportTableCallbacks* callbacks) {
  NvtxFunctionTable t = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &size) || t == nullptr)
    return false;
  Install(t, size, NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx);
  Install(t, size, NVTX_CBID_CORE2_DomainRangeStartEx, DomainRangeStartEx);
  Install(t, size, NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd);
  Install(t, size, NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx);
  Install(t, size, NVTX_CBID_CORE2_DomainRangePop, DomainRangePop);
  Install(t, size, NVTX_CBID_CORE2_DomainResourceCreate, DomainResourceCreate);
  Install(t, size, NVTX_CBID_CORE2_DomainResourceDestroy, DomainResourceDestroy);
  Install(t, size, NVTX_CBID_CORE2_DomainNameCategoryA, DomainNameCategoryA);
  Install(t, size, NVTX_CBID_CORE2_DomainNameCategoryW, DomainNameCategoryW);
  Install(t, size, NVTX_CBID_CORE2_DomainRegisterStringA, DomainRegisterStringA);
  Install(t, size, NVTX_CBID_CORE2_DomainRegisterStringW, DomainRegisterStringW);
  Install(t, size, NVTX_CBID_CORE2_DomainCreateA, DomainCreateA);
  Install(t, size, NVTX_CBID_CORE2_DomainCreateW, DomainCreateW);
  Install(t, size, NVTX_CBID_CORE2_DomainDestroy, DomainDestroy);
  Install(t, size, NVTX_CBID_CORE2_Initialize, Initialize);
  return true;
}

}  // namespace

}  // namespace profsh::runtime

// Called by NVTX in every shared object that uses it. Returning 0 makes NVTX unload us and
// turn its calls into no-ops; we do that only when no session is being recorded.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_table) {
  using namespace profsh::runtime;
  if (!g.active || !g.nvtx || get_table == nullptr) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  bool core = InstallCore(callbacks);
  bool core2 = InstallCore2(callbacks);
  return core || core2 ? 1 : 0;
}
