#include "engine/trace/args.h"

#include <gtest/gtest.h>

#include <cstring>

#include "engine/trace/trace_builder.h"

namespace profsh {
namespace {

SchemaField Field(uint32_t key, ArgType type, bool inline_value, int64_t i = 0) {
  SchemaField f;
  f.key = key;
  f.inline_value = inline_value;
  f.value.type = type;
  f.value.int_value = i;
  return f;
}

TEST(ArgStore, SchemasAreInterned) {
  ArgStore store;
  SchemaField a[] = {Field(1, ArgType::kInt, true), Field(2, ArgType::kString, false)};
  a[1].value.str = 7;
  uint32_t s1 = store.AddSchema(a);
  uint32_t s2 = store.AddSchema(a);
  EXPECT_EQ(s1, s2);
  a[1].value.str = 8;
  EXPECT_NE(store.AddSchema(a), s1);
}

TEST(ArgStore, InlineValuesUseOneOrTwoWords) {
  ArgValue small;
  small.type = ArgType::kInt;
  small.int_value = -5;
  EXPECT_EQ(ArgStore::InlineWords(small), 1u);
  ArgValue big = small;
  big.int_value = int64_t{1} << 40;
  EXPECT_EQ(ArgStore::InlineWords(big), 2u);
  ArgValue dbl;
  dbl.type = ArgType::kDouble;
  EXPECT_EQ(ArgStore::InlineWords(dbl), 2u);
}

TEST(ArgStore, ViewResolvesInlineAndSchemaValues) {
  ArgStore store;
  SchemaField fields[] = {Field(10, ArgType::kInt, true, -7), Field(11, ArgType::kInt, false, 99),
                          Field(12, ArgType::kInt, true, int64_t{1} << 40),
                          Field(13, ArgType::kDouble, true)};
  fields[3].top_level = true;
  uint32_t schema = store.AddSchema(fields);
  uint64_t big = uint64_t{1} << 40;
  double d = 2.5;
  uint64_t dbits;
  std::memcpy(&dbits, &d, 8);
  uint32_t words[] = {static_cast<uint32_t>(-7), static_cast<uint32_t>(big),
                      static_cast<uint32_t>(big >> 32), static_cast<uint32_t>(dbits),
                      static_cast<uint32_t>(dbits >> 32)};
  ArgRef ref = store.Append(schema, words);
  auto view = store.Get(ref);
  ASSERT_EQ(view.size(), 4u);
  std::vector<ArgStore::View::Item> items;
  for (auto item : view) items.push_back(item);
  EXPECT_EQ(items[0].value.int_value, -7);
  EXPECT_EQ(items[1].value.int_value, 99);
  EXPECT_EQ(items[2].value.int_value, int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(items[3].value.double_value, 2.5);
  EXPECT_TRUE(items[3].top_level);
  ArgValue v;
  EXPECT_TRUE(view.Find(12, &v));
  EXPECT_EQ(v.int_value, int64_t{1} << 40);
  EXPECT_FALSE(view.Find(13, &v));  // a top-level field is not among the args
  EXPECT_TRUE(view.Find(13, &v, /*top_level=*/true));
  EXPECT_FALSE(view.Find(99, &v));
}

TEST(ArgStore, EmptyReferenceHasNoFields) {
  ArgStore store;
  EXPECT_TRUE(store.Get(ArgRef{}).empty());
}

// The typed calls' inline fields: AddInlineInt32Arg one word, AddInlineArg two whatever the
// value; fixed strings and JSON live in the schema and take none.
TEST(TraceBuilder, TypedArgumentCalls) {
  Trace t;
  TraceBuilder b(t);
  b.BeginArgs();
  b.AddInlineInt32Arg("small");
  b.AddInlineArg("wide", ArgType::kInt);
  b.AddStringArg("text", "x");
  b.AddJsonArg("json", "[1, 2]");
  b.AddIntArg("fixed", 7);
  b.AddInlineInt32Arg("id", TraceBuilder::Place::kTopLevel);
  const uint32_t schema = b.BuildSchema();
  EventFields e;
  e.name = "op";
  const uint32_t words[] = {5, 0xffffffffu, 0x7fffffffu, 9};
  b.AddEvent(e, schema, words);
  ASSERT_TRUE(b.Finish().ok());
  EXPECT_EQ(t.args.arena_words(), 4u);

  auto view = t.args.Get(t.events.args(0));
  auto key = [&](std::string_view k) { return *t.strings.Find(k); };
  ArgValue v;
  ASSERT_TRUE(view.Find(key("small"), &v));
  EXPECT_EQ(v.int_value, 5);
  ASSERT_TRUE(view.Find(key("wide"), &v));
  EXPECT_EQ(v.int_value, INT64_MAX);
  ASSERT_TRUE(view.Find(key("text"), &v));
  EXPECT_EQ(t.str(v.str), "x");
  ASSERT_TRUE(view.Find(key("json"), &v));
  EXPECT_EQ(v.type, ArgType::kJson);
  EXPECT_EQ(t.str(v.str), "[1,2]");
  ASSERT_TRUE(view.Find(key("fixed"), &v));
  EXPECT_EQ(v.int_value, 7);
  EXPECT_FALSE(view.Find(key("id"), &v));
  ASSERT_TRUE(view.Find(key("id"), &v, true));
  EXPECT_EQ(v.int_value, 9);
}

}  // namespace
}  // namespace profsh
