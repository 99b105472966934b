#pragma once
// The model: the one stand-in for every kernel service of sys/ besides the
// real implementation. Each service's model (sys/model/SERVICE.h)
// implements the service's interface directly over kernel state kept in
// memory, with the kernel's rules (a veth's peer namespace must exist, an
// address needs its interface, a subsystem linked by a port cannot go, ...)
// and the kernel's errno when it refuses. What the models share is here:
//
// - where the caller is (the current network namespace);
// - the action log: every change, with the command a person would type for
//   it. `rxerun plan` prints it; the tests read it;
// - the fault script: an operation that fails with a given errno, from a
//   given call on (the tests' way to reach error paths);
// - how much of the world the model holds. A test's world is closed: what
//   the model does not hold does not exist. A plan's is open: it does not
//   read the host, so what the model does not hold (the host's interfaces,
//   sysctls, modules, files) may be there all the same, and acting on it is
//   no refusal.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/system.h"

namespace rxerun::sys {

class ModelKernel final : public Recorder {
 public:
  // One change, as the action log keeps it.
  struct Action {
    std::string service;  // "links", "nvme", ...: the sys/ service it went through
    std::string what;
    std::string shell;  // "" when it has no shell equivalent
    bool read = false;  // it only read (shown by a plan all the same)
  };

  // The network namespace the caller is in: "" is rxerun's own.
  std::string netns;
  // Open world: `plan`'s (see above).
  bool open_world = false;
  // Every change, in order.
  std::vector<Action> actions;

  // Logs a change made in the current namespace (the command then runs
  // under `ip netns exec NS`), or one whose command names its namespace
  // itself or is global (`ip -n NS ...`, `rdma link delete`, configfs).
  void did(std::string_view service, std::string what, std::string shell);
  void did_anywhere(std::string_view service, std::string what, std::string shell);
  // Logs a read a plan shows (a listing, a counter read).
  void looked(std::string_view service, std::string what, std::string shell);
  // Recorder: what the engine and steps note themselves in a plan.
  void record(PlannedAction action) override;
  // The actions since the last take(), as `plan` prints them.
  std::vector<PlannedAction> take();
  // The commands of some services' actions ({"rdma"}, {"modules", "rdma"};
  // their `what` where they have no command), in the order done, for tests.
  std::vector<std::string> commands(std::initializer_list<std::string_view> services) const;
  std::vector<std::string> commands(std::string_view service) const { return commands({service}); }
  // The commands of every change to the kernel's state (no reads, waits,
  // pings, programs, captures or checks), for tests that nothing was changed.
  std::vector<std::string> changes() const;

  // The fault script: the calls of `op` ("links.add_veth", "modules.load")
  // whose argument starts with `arg` fail with `code` from the `at`-th such
  // call (1-based), `times` of them (0: every one from there on). The
  // error's message is `message`, else the errno's text.
  struct Fault {
    std::string op, arg;
    int code = 0;
    int at = 1;
    int times = 0;
    std::string message;
    int seen = 0;  // matching calls so far
  };
  std::vector<Fault> faults;
  void fail(std::string op, int code, std::string arg = {}, int at = 1, int times = 0, std::string message = {});
  // Called by each operation first: the error the script gives this call, if any.
  std::optional<Error> fault(std::string_view op, std::string_view arg = {});

  // Whether the model's answer is a refusal: any error in a closed world;
  // in an open world, not one that only says the model does not hold the
  // object (ENODEV, ENOENT, ESRCH, EADDRNOTAVAIL), which the host may.
  bool refused(const Error& e) const;
  bool refused(const Result<void>& r) const { return !r && refused(r.error()); }

  // A refusal of the kernel's, when `when` holds.
  struct Refusal {
    bool when;
    int code;
    std::string why;
  };
  // One change of a configfs-like service: the fault script for `op` with
  // `arg`, then the first refusal that holds, else `change`; logged under
  // `service` when it went through (or the world is open and the refusal
  // only says the model does not hold the object).
  Result<void> act(std::string_view service, std::string_view op, std::string_view arg,
                   const std::vector<Refusal>& refusals, const std::function<void()>& change, std::string what,
                   std::string shell);

 private:
  std::size_t taken_ = 0;
};

// `echo VALUE > FILE`, as a person writes a configfs or sysfs attribute.
std::string echo_into_attr(const std::string& value, const std::string& file);

// A number as sleep(1), ping -i and tc take it: three decimals at most, no
// trailing zeros ("0.25", "2").
std::string decimal_text(double value);

}  // namespace rxerun::sys
