#pragma once
// Passing an error up unchanged, so that a function reads as its happy
// path: what LLVM writes `if (Error E = f()) return E;`, as two macros.
//
//   StepResult run_mtu(const Params& params, StepContext& ctx) {
//     RXERUN_TRY_ASSIGN(const auto found, ctx.sys().links.get(dev));  // the value, or return the error
//     if (!found) return StepResult::error("no interface " + dev + " (create it first)");
//     RXERUN_TRY(ctx.will_change(args, summary));  // any Result<T>: go on, or return the error
//     RXERUN_TRY(ctx.sys().links.set_mtu(dev, mtu));
//     return StepResult::ok(facts);
//   }
//
// Both work in a function that returns a Result<T> of any T (the error as
// it is) or a StepResult (StepResult::error(e), which adds the errno's text
// when the message lacks it), whatever Result the expression gives. An
// error that is looked at (its errno decides what happens) or given more
// words stays written out by hand.
//
// RXERUN_TRY_ASSIGN declares its variable in the enclosing scope (or, given
// an existing one, `spec.rate`, assigns it): write it as a statement of its
// own, not as the body of an unbraced `if`, one to a line.

#include <utility>

#include "rxerun/kind.h"
#include "rxerun/result.h"

namespace rxerun {

// An error on its way to the caller: it becomes whatever the enclosing
// function returns. Only the macros below make one.
class [[nodiscard]] Propagated {
 public:
  explicit Propagated(Error error) : error_(std::move(error)) {}

  template <class T>
  operator Result<T>() && {
    return Result<T>(std::move(error_));
  }
  operator StepResult() && { return StepResult::error(error_); }

 private:
  Error error_;
};

}  // namespace rxerun

// Evaluates the expression, a Result<T>; on an error, returns it.
#define RXERUN_TRY(...)                                                 \
  do {                                                                  \
    if (auto&& rxerun_try_result_ = (__VA_ARGS__); !rxerun_try_result_) \
      return ::rxerun::Propagated(rxerun_try_result_.error());          \
  } while (false)

// Evaluates the expression, a Result<T>; on an error, returns it; else
// declares `decl` (`const auto found`, `std::string name`) with its value,
// or assigns it to an existing variable.
#define RXERUN_TRY_ASSIGN(decl, ...) RXERUN_TRY_ASSIGN_IMPL_(RXERUN_TRY_NAME_(__LINE__), decl, __VA_ARGS__)

#define RXERUN_TRY_CONCAT_(a, b) a##b
#define RXERUN_TRY_NAME_(line) RXERUN_TRY_CONCAT_(rxerun_try_value_, line)
#define RXERUN_TRY_ASSIGN_IMPL_(tmp, decl, ...)       \
  auto tmp = (__VA_ARGS__);                           \
  if (!tmp) return ::rxerun::Propagated(tmp.error()); \
  decl = std::move(tmp).value()
