#pragma once
// Packet captures that run in the background while later steps send traffic:
// the `capture` step starts one, its undo (at `revert` or cleanup) stops it.
// A capture writes every frame its filter passes to a pcap file and decodes
// it as it arrives (roce/packet.h), counting what it saw (roce/summary.h).
//
// A capture is opened in the network namespace of the calling thread and
// stays there: the packet socket keeps the namespace it was made in. Its
// file is written aside and renamed into place when it stops (base/files.h):
// never through a symbolic link, never seen half-written.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace rxerun::sys {

struct CaptureRequest {
  std::string id;                        // unique within the process: the scenario and the step
  std::string dev;                       // the interface; "any" for all of the namespace's
  std::string filter = "udp port 4791";  // BPF, as tcpdump spells it
  int snaplen = 9216;                    // bytes kept of each frame (and the size of a slot in the kernel's ring)
  std::string file;                      // the pcap file to write; created or replaced when the capture stops
  // The temporary file the capture writes until it stops (then renamed to
  // `file`): base/files.h's temporary_name(file), chosen by the caller so
  // that a journal can name it before it exists; empty: start() picks one.
  std::string partial;
};

class Captures {
 public:
  virtual ~Captures() = default;
  // Starts capturing; returns once the interface is being captured (frames
  // sent after this return are seen). Errors: no such interface (ENODEV), a
  // filter that does not compile (EINVAL), a file that cannot be written.
  virtual Result<void> start(const CaptureRequest& request) = 0;
  // Stops capture `id`: reads what the kernel still holds, closes the file
  // and returns the facts: roce::Summary::facts() plus `frames` (every frame
  // written), `dropped` (frames the kernel dropped because the capture fell
  // behind), `file`, and `error` when reading stopped early (the interface
  // went away). ENOENT when no such capture runs in this process (it ended
  // with the process that started it: recover() keeps what it wrote).
  virtual Result<nlohmann::json> stop(const std::string& id) = 0;
  // For a capture whose process ended without stopping it (SIGKILL, a
  // crash): renames the `partial` file it left to `file`, so that `file`
  // holds what was captured. false when there is no such file.
  virtual Result<bool> recover(const std::string& /*partial*/, const std::string& /*file*/) { return false; }
};

}  // namespace rxerun::sys
