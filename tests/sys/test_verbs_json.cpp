// The verbs check's requests and results as JSON, which carry them from a
// verbs step to its server on another node and back (sys/verbs.h), and the
// rule that makes one result of the two ends'.

#include <doctest/doctest.h>

#include "sys/verbs.h"

using namespace rxerun;
using namespace rxerun::sys;

TEST_CASE("verbs json: a request goes and comes back whole, with its budget") {
  VerbsRequest r;
  r.server = {.addr = "fd00::1", .netns = "a", .to = ""};
  r.client = {.addr = "10.0.0.2", .netns = std::nullopt, .to = "10.0.0.9"};
  r.port = 20000;
  r.ops = {VerbsOp::Read, VerbsOp::Send};
  r.sizes = {1, 8388608};
  r.iterations = 0;
  Duration budget{0};
  auto back = verbs_request_from_json(nlohmann::json::parse(verbs_request_json(r, Duration(65000)).dump()), &budget);
  REQUIRE(back);
  CHECK(budget == Duration(65000));
  CHECK(back->mode == VerbsMode::Cm);
  CHECK(back->server.addr == "fd00::1");
  CHECK(back->server.netns == std::optional<std::string>("a"));
  CHECK_FALSE(back->client.netns);
  CHECK(back->client.to == "10.0.0.9");
  CHECK(back->port == 20000);
  CHECK(back->ops == r.ops);
  CHECK(back->sizes == r.sizes);
  CHECK(back->iterations == 0);
}

TEST_CASE("verbs json: what is not a request is an error that says what is wrong") {
  Duration budget{0};
  const nlohmann::json good = verbs_request_json(VerbsRequest{}, Duration(1000));
  CHECK_FALSE(verbs_request_from_json(nlohmann::json::array(), &budget));
  nlohmann::json no_port = good;
  no_port.erase("port");
  auto r = verbs_request_from_json(no_port, &budget);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("not a verbs request") == 0);
  nlohmann::json bad_op = good;
  bad_op["ops"] = {"send", "atomic"};
  r = verbs_request_from_json(bad_op, &budget);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "no verbs operation 'atomic'");
  nlohmann::json negative = good;
  negative["budget_ms"] = -1;
  CHECK_FALSE(verbs_request_from_json(negative, &budget));
}

TEST_CASE("verbs json: a result and an error come back as they went") {
  VerbsResult v;
  v.status = VerbsStatus::TimedOut;
  v.message = "m";
  v.stage = "connect";
  v.cause = "deadline";
  v.ops_done = {VerbsOp::Write};
  v.bytes_verified = 1ull << 40;
  v.server_device = "rxe0";
  v.gid_index = 1;
  v.sizes = {{.size = 64, .lat_iterations = 10, .lat_min_us = 1.5, .bw_iterations = 100, .bw_mib = 12.25}};
  auto back = verbs_result_from_json(verbs_result_json(v));
  REQUIRE(back);
  CHECK(back->status == VerbsStatus::TimedOut);
  CHECK(back->cause == "deadline");
  CHECK(back->ops_done == v.ops_done);
  CHECK(back->bytes_verified == v.bytes_verified);
  CHECK(back->gid_index == std::optional<unsigned>(1));
  REQUIRE(back->sizes.size() == 1);
  CHECK(back->sizes[0].bw_mib == 12.25);
  auto err = verbs_result_from_json(verbs_result_json(make_error("cannot listen", 99)));
  REQUIRE_FALSE(err);
  CHECK(err.error().message == "cannot listen");
  CHECK(err.error().code == 99);
  nlohmann::json out_of_range = verbs_result_json(v);
  out_of_range["status"] = 17;
  CHECK_FALSE(verbs_result_from_json(out_of_range));
}

TEST_CASE("verbs ends: the server's device and bytes join the client's, its own finding wins, a consequence not") {
  VerbsResult client;
  client.client_device = "rxe0";
  client.bytes_verified = 100;
  VerbsResult server;
  server.server_device = "rxe1";
  server.bytes_verified = 200;
  VerbsResult both = merge_verbs_ends(client, server);
  CHECK(both.status == VerbsStatus::Ok);
  CHECK(both.bytes_verified == 300);
  CHECK(both.server_device == "rxe1");
  CHECK(both.client_device == "rxe0");

  // The client failed first (a completion error); the server only saw it go.
  client.status = VerbsStatus::Failed;
  client.cause = "IBV_WC retry counter exceeded";
  server.status = VerbsStatus::Failed;
  server.cause = "RDMA_CM_EVENT_DISCONNECTED";
  CHECK(merge_verbs_ends(client, server).cause == "IBV_WC retry counter exceeded");
  // The server found a byte wrong: the client saw only the hang-up.
  server.cause = "mismatch";
  server.message = "bytes differ";
  both = merge_verbs_ends(client, server);
  CHECK(both.cause == "mismatch");
  CHECK(both.message == "bytes differ");
  // The client passed, the server did not end well: the check did not pass.
  client.status = VerbsStatus::Ok;
  client.cause.clear();
  server.status = VerbsStatus::TimedOut;
  server.cause = "deadline";
  CHECK(merge_verbs_ends(client, server).status == VerbsStatus::TimedOut);
}
