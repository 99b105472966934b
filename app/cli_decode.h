#pragma once
// `rxerun decode FILE`: every RoCEv2 packet of a capture file (pcap or
// pcapng), one line each, then what the capture held (roce::Summary); or,
// with --json, one JSON object per packet (JSON Lines) for programs.

#include <cstdio>
#include <string>

namespace rxerun {

struct DecodeOptions {
  std::string file;
  bool json = false;
  bool summary = false;  // with --json: a last line {"summary": {...}}
};

// Writes to `out`, errors to `err`. Returns kExitOk when the file was read
// to its end (bad ICRCs and malformed frames are shown, not failures),
// kExitFailed when it ends in the middle of a frame (the frames before are
// shown), kExitUsage when it cannot be opened or is not a capture file of a
// link type decode understands, kExitEnvironment when `out` cannot be written.
int cmd_decode(const DecodeOptions& options, std::FILE* out = stdout, std::FILE* err = stderr);

}  // namespace rxerun
