#pragma once
// The privileged tests' independent observers and fixtures: `ip`, `ethtool`,
// `sysctl`, `nft` and `tc` run the way a person would run them. Only tests
// shell out; product code never does.

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace rxerun::testing {

// What `cmd` prints, stdout and stderr together, in the C locale, without
// its trailing newlines.
inline std::string command_output(const std::string& cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(("LC_ALL=C " + cmd + " 2>&1").c_str(), "r"), ::pclose);
  REQUIRE(p);
  char buf[4096];
  while (auto n = std::fread(buf, 1, sizeof buf, p.get())) out.append(buf, n);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Runs a fixture command; the test stops when it fails.
inline void sh(const std::string& cmd) {
  REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, cmd);
}

}  // namespace rxerun::testing
