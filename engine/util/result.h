// Error values for operations whose failure the caller is expected to handle (bad input files,
// unknown options). Exceptions are reserved for the Lua boundary; the engine returns these.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace profsh {

struct Error {
  std::string message;
};

template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& value() const& { return std::get<T>(state_); }
  const Error& error() const { return std::get<Error>(state_); }

  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Error> state_;
};

// Result for operations that produce nothing but may fail.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), failed_(true) {}  // NOLINT
  static Status Ok() { return Status(); }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& message() const { return error_; }

 private:
  std::string error_;
  bool failed_ = false;
};

}  // namespace profsh
