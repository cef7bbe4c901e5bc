// The JSON tokenizer on its own: strings (escapes, surrogate pairs, raw control characters),
// numbers (the grammar, and the text of a number inside a string), what it does where the input
// ends (kNeedMore, then the same value after a refill), and errors that name line and column.
// The importer's tests check the traces built on it; these check the scanner's contract.
#include "engine/importers/json_tokenizer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/unit/test_util.h"

namespace profsh {
namespace {

using testing::TrickleInput;

// A tokenizer over a string held whole in memory, as over a mapped file.
struct Whole {
  std::unique_ptr<InputSource> input;
  std::unique_ptr<JsonTokenizer> json;
  explicit Whole(std::string text) : input(MemoryInput("test.json", std::move(text))) {
    json = std::make_unique<JsonTokenizer>(*input);
    EXPECT_TRUE(json->Open());
  }
  JsonTokenizer* operator->() { return json.get(); }
};

std::string Decoded(const std::string& text) {
  Whole w(text);
  Text t;
  EXPECT_EQ(w->ScanString(&t, true), Step::kOk) << w->error();
  return std::string(w->View(t));
}

TEST(JsonTokenizer, DecodesEscapes) {
  EXPECT_EQ(Decoded(R"("a\"b\\c\/d\b\f\n\r\t")"), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(Decoded(R"("caf\u00e9 \u6ce8")"), "café 注");
  // A surrogate pair is one character, four bytes of UTF-8.
  EXPECT_EQ(Decoded(R"("\ud83d\ude00")"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(Decoded(R"("raw 注意 bytes")"), "raw 注意 bytes");
}

TEST(JsonTokenizer, LeavesStringsWithoutEscapesInTheInput) {
  Whole w(R"("plain" "esc\n")");
  Text plain, escaped;
  ASSERT_EQ(w->ScanString(&plain, true), Step::kOk);
  EXPECT_FALSE(plain.decoded);
  EXPECT_EQ(w->View(plain), "plain");
  ASSERT_EQ(w->SkipWs(), Step::kOk);
  // Not decoded when not asked: the raw text between the quotes.
  ASSERT_EQ(w->ScanString(&escaped, false), Step::kOk);
  EXPECT_EQ(w->View(escaped), "esc\\n");
}

TEST(JsonTokenizer, ScansNumbersByTheGrammar) {
  Whole w("-12 3.25 1e3 0 ");
  const char* begin;
  bool is_integer;
  ASSERT_EQ(w->ScanNumber(&begin, &is_integer), Step::kOk);
  EXPECT_EQ(std::string(begin, w->pos()), "-12");
  EXPECT_TRUE(is_integer);
  ASSERT_EQ(w->SkipWs(), Step::kOk);
  ASSERT_EQ(w->ScanNumber(&begin, &is_integer), Step::kOk);
  EXPECT_EQ(std::string(begin, w->pos()), "3.25");
  EXPECT_FALSE(is_integer);
  ASSERT_EQ(w->SkipWs(), Step::kOk);
  ASSERT_EQ(w->ScanNumber(&begin, &is_integer), Step::kOk);
  EXPECT_FALSE(is_integer);  // an exponent makes a double
  for (const char* bad : {"01", "1.", "1.e5", "-", "1e+", ".5"}) {
    Whole b(std::string(bad) + " ");
    EXPECT_EQ(b->ScanNumber(&begin, &is_integer), Step::kError) << bad;
  }
}

TEST(JsonTokenizer, RecognisesNumbersWrittenAsStrings) {
  // The text between the quotes of "ts": "5.1", which Perfetto reads as the number.
  auto number = [](std::string_view s, bool* is_integer) {
    return IsJsonNumber(s.data(), s.data() + s.size(), is_integer);
  };
  bool is_integer = false;
  EXPECT_TRUE(number("12", &is_integer));
  EXPECT_TRUE(is_integer);
  EXPECT_TRUE(number("-5.1", &is_integer));
  EXPECT_FALSE(is_integer);
  EXPECT_TRUE(number("2e3", &is_integer));
  for (std::string_view no : {"", "-", "01", "5.", "5.1x", " 5", "abc", "0x10"})
    EXPECT_FALSE(number(no, &is_integer)) << no;
}

TEST(JsonTokenizer, MicrosecondsToNanosecondsInOnePass) {
  // The fast path wants 32 bytes ahead; the padding stands for the rest of the event.
  const std::string pad(40, ' ');
  Whole w("1234.5678" + pad);
  int64_t ns = 0;
  ASSERT_TRUE(w->FastMicros(&ns));
  EXPECT_EQ(ns, 1234568);  // rounded below a nanosecond
  Whole exp("1e3" + pad);
  const char* at = exp->pos();
  EXPECT_FALSE(exp->FastMicros(&ns));  // left to the general path, the cursor unmoved
  EXPECT_EQ(exp->pos(), at);
}

TEST(JsonTokenizer, NeedsMoreWhereTheInputEnds) {
  const char* begin;
  bool is_integer;
  Text t;
  Whole cut_string(R"("abc)");
  EXPECT_EQ(cut_string->ScanString(&t, true), Step::kNeedMore);
  Whole cut_escape(R"("a\u00)");
  EXPECT_EQ(cut_escape->ScanString(&t, true), Step::kNeedMore);
  Whole cut_literal("tru");
  EXPECT_EQ(cut_literal->ScanLiteral("true"), Step::kNeedMore);
  Whole cut_array("[1, {\"a\": 2");
  EXPECT_EQ(cut_array->SkipValue(0), Step::kNeedMore);
  // At the end of the whole input a number is complete.
  Whole last("42");
  EXPECT_EQ(last->ScanNumber(&begin, &is_integer), Step::kOk);
}

TEST(JsonTokenizer, RefillKeepsTheUnitAndCountsLines) {
  // A number across the end of the first chunk of a streamed input: more digits may follow, so
  // the scanner asks for more, and after a refill from the number's start reads all of it.
  std::string text(JsonTokenizer::kChunkSize - 3, ' ');
  text[10] = '\n';
  text += "12345 x";
  TrickleInput input(text, 1 << 16);
  JsonTokenizer json(input);
  ASSERT_TRUE(json.Open());
  ASSERT_EQ(json.SkipWs(), Step::kOk);
  const char* unit = json.pos();
  const char* begin;
  bool is_integer;
  ASSERT_EQ(json.ScanNumber(&begin, &is_integer), Step::kNeedMore);
  ASSERT_TRUE(json.Refill(unit));
  ASSERT_EQ(json.ScanNumber(&begin, &is_integer), Step::kOk);
  EXPECT_EQ(std::string(begin, json.pos()), "12345");
  ASSERT_EQ(json.SkipWs(), Step::kOk);
  // Line and byte count what the window moved past.
  EXPECT_EQ(json.Position(json.pos()), "trickle.json:2:" + std::to_string(text.size() - 1 - 10) +
                                           " (byte " + std::to_string(text.size() - 1) + ")");
  EXPECT_FALSE(json.Refill(json.end()));  // nothing left
}

TEST(JsonTokenizer, ErrorsNameLineAndColumn) {
  Whole w("[1,\n  tru3]");
  EXPECT_EQ(w->SkipValue(0), Step::kError);
  EXPECT_EQ(w->error(), "test.json:2:3 (byte 6): invalid literal (expected true)");
  Whole esc("\n\"a\\q\"");
  ASSERT_EQ(esc->SkipWs(), Step::kOk);
  Text t;
  EXPECT_EQ(esc->ScanString(&t, true), Step::kError);
  EXPECT_EQ(esc->error(), "test.json:2:3 (byte 3): invalid escape '\\q' in string");
  Whole utf8("\"a\xff\"");
  EXPECT_EQ(utf8->ScanString(&t, true), Step::kError);
  EXPECT_EQ(utf8->error(), "test.json:1:3 (byte 2): invalid UTF-8 in string");
  Whole hex(R"("\u12g4")");
  EXPECT_EQ(hex->ScanString(&t, true), Step::kError);
  EXPECT_NE(hex->error().find("invalid \\u escape"), std::string::npos) << hex->error();
  std::string deep(JsonTokenizer::kMaxDepth + 2, '[');
  Whole nested(deep + std::string(JsonTokenizer::kMaxDepth + 2, ']'));
  EXPECT_EQ(nested->SkipValue(0), Step::kError);
  EXPECT_NE(nested->error().find("nested too deeply"), std::string::npos);
}

TEST(JsonTokenizer, ControlCharactersAreARepairOrARefusal) {
  // PyTorch writes raw control characters in strings; they are kept and counted.
  Text t;
  Whole w("\"a\tb\x01\"");
  ASSERT_EQ(w->ScanString(&t, true), Step::kOk);
  EXPECT_EQ(w->View(t), "a\tb\x01");
  ASSERT_EQ(w->repairs().repairs().size(), 2u);
  EXPECT_EQ(w->repairs().repairs()[0].kind, Repair::kControlCharacter);
  EXPECT_EQ(w->repairs().repairs()[0].where, 2u);
  // A speculative reading refuses it; a second reading accepts it without counting again.
  Whole refused("\"a\tb\"");
  refused->repairs().set_mode(UnitRepairs::Mode::kRefuse);
  EXPECT_EQ(refused->ScanString(&t, true), Step::kError);
  Whole quiet("\"a\tb\"");
  quiet->repairs().set_mode(UnitRepairs::Mode::kQuiet);
  EXPECT_EQ(quiet->ScanString(&t, true), Step::kOk);
  EXPECT_TRUE(quiet->repairs().empty());
}

TEST(JsonTokenizer, TrailingCommasAreRepairs) {
  Whole w(R"([1, {"a": [2,], "b": 3,},])");
  ASSERT_EQ(w->SkipValue(0), Step::kOk);
  EXPECT_EQ(w->pos(), w->end());
  ASSERT_EQ(w->repairs().repairs().size(), 3u);
  for (const auto& r : w->repairs().repairs()) EXPECT_EQ(r.kind, Repair::kTrailingComma);
  EXPECT_EQ(w->repairs().repairs()[0].where, 13u);  // the ']' after "2,"
  Whole empty_member("[1, ,2]");
  EXPECT_EQ(empty_member->SkipValue(0), Step::kError);
  EXPECT_NE(empty_member->error().find("unexpected character ','"), std::string::npos)
      << empty_member->error();
}

}  // namespace
}  // namespace profsh
