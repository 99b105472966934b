// The capture step against FakeCaptures: what it asks sys::Captures for,
// where its file goes, and how the revert turns the capture's counts into
// facts an `expect` reads.

#include <doctest/doctest.h>

#include "fakes/harness.h"

using namespace rxerun;
using rxerun::fakes::Harness;
using rxerun::fakes::step_named;

TEST_CASE("capture: starts on the interface, revert stops it and reports flat facts") {
  Harness h;
  h.fake.captures.facts = {{"packets", 12},
                           {"bytes", 9000},
                           {"icrc_good", 12},
                           {"icrc_bad", 0},
                           {"opcodes", {{"RC_RDMA_WRITE_ONLY", 6}, {"RC_ACKNOWLEDGE", 6}, {"UD_SEND_ONLY", 0}}},
                           {"qps", {17, 18}},
                           {"frames", 12}};
  auto r = h.run(
      "steps:\n"
      "  - {name: wire, capture: {dev: vB, file: w.pcap}}\n"
      "  - name: stop\n"
      "    revert: wire\n"
      "    expect: {RC_RDMA_WRITE_ONLY: 6, RC_ACKNOWLEDGE: '> 0', RC_SEND_ONLY: 0, icrc_bad: 0, qps: '0x11,0x12',\n"
      "             qp_count: 2}\n");
  CHECK(r.exit_code == 0);
  REQUIRE(h.fake.captures.requests.size() == 1);
  const auto& req = h.fake.captures.requests[0];
  CHECK(req.dev == "vB");
  CHECK(req.filter == "udp port 4791");
  CHECK(req.snaplen == 9216);
  CHECK(req.file == "w.pcap");
  CHECK(req.id == "test/wire");
  CHECK(step_named(r, "wire").facts.at("file") == "w.pcap");
  CHECK(step_named(r, "stop").facts.at("packets") == 12);
  CHECK(step_named(r, "stop").facts.at("UD_SEND_ONLY") == 0);
  CHECK_FALSE(step_named(r, "stop").facts.contains("opcodes"));
  CHECK(h.fake.captures.running.empty());
  // Stopped once, by the revert; cleanup finds it done.
  CHECK(h.fake.captures.stops.size() == 1);
}

TEST_CASE("capture: cleanup stops a capture no step reverted, also after a failure") {
  Harness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: wire, capture: {dev: vB, filter: 'udp', snaplen: 128}}\n"
      "  - {name: fails, sleep: {duration: 1ms}, expect: {outcome: fail}}\n");
  CHECK(r.exit_code == 1);
  REQUIRE(h.fake.captures.requests.size() == 1);
  CHECK(h.fake.captures.requests[0].filter == "udp");
  CHECK(h.fake.captures.requests[0].snaplen == 128);
  // Default file: SCENARIO-STEP.pcap.
  CHECK(h.fake.captures.requests[0].file == "test-wire.pcap");
  CHECK(h.fake.captures.running.empty());
  CHECK(r.cleanup.clean());
}

TEST_CASE("capture: relative files go under the output directory, absolute ones are refused in the lab VM") {
  {
    Harness h;
    RunOptions o;
    o.output_dir = "/tmp/out";
    auto r = h.run("steps:\n  - {name: wire, capture: {dev: vB, file: caps/w.pcap}}\n", o);
    CHECK(r.exit_code == 0);
    CHECK(h.fake.captures.requests.at(0).file == "/tmp/out/caps/w.pcap");
  }
  {
    Harness h;
    RunOptions o;
    o.output_dir = "/share/output";
    o.outputs_return = true;
    auto r = h.run("steps:\n  - {name: wire, capture: {dev: vB, file: /tmp/w.pcap}}\n", o);
    CHECK(r.exit_code == 3);
    CAPTURE(step_named(r, "wire").message);
    CHECK(step_named(r, "wire").message.find("absolute path") != std::string::npos);
    CHECK(step_named(r, "wire").message.find("test.yaml:2:43:") == 0);  // FILE:LINE:COL of `file`
    CHECK(h.fake.captures.requests.empty());
  }
}

TEST_CASE("capture: a capture that ended with its process is no error at cleanup") {
  Harness h;
  REQUIRE(h.run_keep("steps:\n  - {name: wire, capture: {dev: vB}}\n").exit_code == 0);
  h.fake.captures.running.clear();  // the process that ran it is gone
  auto c = h.cleanup();
  CHECK(c.clean());
}

TEST_CASE("capture: a missing interface is an environment error naming it") {
  Harness h;
  h.fake.kernel.fail("captures.start", ENODEV, "", 1, 0, "no such interface");
  auto r = h.run("steps:\n  - netns: {name: b}\n  - {name: wire, netns: b, capture: {dev: vX}}\n");
  CHECK(r.exit_code == 3);
  CAPTURE(step_named(r, "wire").message);
  CHECK(step_named(r, "wire").message.find("no interface vX in netns b") != std::string::npos);
}

TEST_CASE("capture: plan shows the tcpdump command") {
  const std::string text = Harness().plan("steps:\n  - {name: wire, capture: {dev: vB, file: w.pcap}}\n");
  CAPTURE(text);
  CHECK(text.find("tcpdump -i vB -s 9216 -w w.pcap 'udp port 4791' &") != std::string::npos);
}

TEST_CASE("capture: a file that climbs out of --output-dir with '..' is refused at validation") {
  fakes::Harness h;
  for (const char* file : {"../w.pcap", "a/../../w.pcap", "./../w.pcap", "..", "a/b/../../../x"}) {
    CAPTURE(file);
    const std::string d = h.diagnostics(std::string("steps:\n  - capture: {dev: vB, file: '") + file + "'}\n");
    CHECK(d.find("test.yaml:2:30: '") == 0);
    CHECK(d.find("climbs out of --output-dir with '..'") != std::string::npos);
  }
  // Staying inside, and absolute paths, are as before.
  for (const char* file : {"a/../w.pcap", "caps/w.pcap", "/tmp/w.pcap", "..w.pcap", "a..b/w.pcap"}) {
    CAPTURE(file);
    CHECK(h.diagnostics(std::string("steps:\n  - capture: {dev: vB, file: '") + file + "'}\n").empty());
  }
  CHECK(h.diagnostics("vars: {f: ../x.pcap}\nsteps:\n  - capture: {dev: vB, file: '{{f}}'}\n").find("climbs out") !=
        std::string::npos);
}

TEST_CASE("capture: the journal names the temporary file, which cleanup renames into place after a crash") {
  Harness h;
  REQUIRE(h.run_keep("steps:\n  - {name: wire, capture: {dev: vB, file: w.pcap}}\n").exit_code == 0);
  const auto& req = h.fake.captures.requests.at(0);
  CHECK(req.partial.starts_with("w.pcap.rxerun-"));
  h.fake.captures.running.clear();  // the process that ran it is gone
  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(h.fake.captures.recovered.size() == 1);
  CHECK(h.fake.captures.recovered[0] == std::make_pair(req.partial, std::string("w.pcap")));
}
