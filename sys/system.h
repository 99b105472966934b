#pragma once
// Everything that touches the host, gathered: the engine and the steps reach
// the outside world only through these interfaces (ninja's DiskInterface
// habit). Real implementations act; the recording ones (sys/recording.h)
// only note what would be done, for `rxerun plan`; tests use fakes.

#include <string>
#include <vector>

#include "sys/clock.h"
#include "sys/interrupt.h"
#include "sys/netns.h"

namespace rxerun::sys {

// One action as `plan` shows it: what, and the command a person would type.
struct PlannedAction {
  std::string what;   // "create veth pair vA/vB"
  std::string shell;  // "ip link add vA type veth peer name vB"; empty when it cannot be previewed
};

// Where recording implementations write; null in a real run.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual void record(PlannedAction action) = 0;
};

struct System {
  Clock& clock;
  Netns& netns;
  Interrupt& interrupt;
  Recorder* recorder = nullptr;  // set when planning: a step that cannot preview a read says so here
};

}  // namespace rxerun::sys
