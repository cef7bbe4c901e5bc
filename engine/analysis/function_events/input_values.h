// An operator's recorded inputs ("Input Dims", "Input type", "Concrete Inputs") as typed values,
// the way torch's FunctionEvent holds them as Python objects: lists of dimensions, dtype names,
// the text of scalar inputs. The importer keeps each such argument as JSON text; it is read here
// once per distinct text into a value, and from then on travels as a value id: key_averages
// groups by it, Lua gets tables of integers from it, and only a printed table turns it into
// Python's str() text ("[[2, 3], []]"), which torch's table shows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace profsh {

struct InputValue {
  enum class Type : uint8_t {
    kNone,    // JSON null
    kBool,    // integer: 0 or 1
    kInt,     // integer
    kUInt,    // integer's bits: a JSON integer above int64's range
    kFloat,   // real
    kString,  // text
    kList,    // items
    kDict,    // items: key (a kString), value, key, value, ...
    kText,    // text that is not JSON (a hand-made trace), shown as it is
  };
  Type type = Type::kList;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<InputValue> items;
};

// Reads one JSON value (the importer's compact text, or any JSON). Text that is not one whole
// JSON value, or nests deeper than 64 levels, becomes a kText value holding the text.
InputValue ParseInputValue(std::string_view json);

// Python's str() of the value, as torch prints input shapes: "[[5, 64, 56, 56], []]",
// "['float', 'Scalar']", "[True, None, 1.5]".
std::string PythonRepr(const InputValue& value);

// Distinct values, each stored once; id 0 is the empty list, what events without the argument
// hold (torch's input_shapes is [] then). Two values get one id exactly when Python's str()
// prints them alike, so grouping by id is torch's grouping by str(input_shapes).
class InputValueTable {
 public:
  InputValueTable();
  uint32_t Intern(InputValue value);
  // The value of JSON text, read once per distinct text (by the trace's string id).
  uint32_t InternJson(uint32_t text_id, std::string_view json);
  const InputValue& Get(uint32_t id) const { return values_[id]; }
  size_t size() const { return values_.size(); }

 private:
  std::vector<InputValue> values_;
  std::unordered_map<std::string, uint32_t> id_of_key_;  // by a canonical encoding of the value
  std::unordered_map<uint32_t, uint32_t> id_of_text_;
};

}  // namespace profsh
