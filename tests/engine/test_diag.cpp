#include <doctest/doctest.h>

#include "engine/diag.h"

using namespace rxerun;

TEST_CASE("diag: to_string is FILE:LINE:COL: message") {
  Diagnostic d{"a.yaml", {3, 7}, "unknown key 'x'"};
  CHECK(d.to_string() == "a.yaml:3:7: unknown key 'x'");
}

TEST_CASE("diag: suggest finds a close candidate") {
  const std::vector<std::string> kinds{"address", "netns", "revert", "sleep", "veth"};
  CHECK(suggest("slep", kinds) == "sleep");
  CHECK(suggest("sleeep", kinds) == "sleep");
  CHECK(suggest("adress", kinds) == "address");
  CHECK(suggest("reverd", kinds) == "revert");
  CHECK(suggest("vet", kinds) == "veth");
}

TEST_CASE("diag: suggest stays quiet when nothing is close") {
  const std::vector<std::string> kinds{"address", "netns", "revert", "sleep", "veth"};
  CHECK(suggest("frobnicate", kinds) == std::nullopt);
  CHECK(suggest("", kinds) == std::nullopt);
  CHECK(suggest("xyz", kinds) == std::nullopt);
  CHECK(suggest("slep", std::vector<std::string>{}) == std::nullopt);
  // threshold max(1, len/3): two edits are too many for a five-letter word
  CHECK(suggest("slxxp", kinds) == std::nullopt);
  CHECK(suggest(std::string(1000, 'a'), kinds) == std::nullopt);
}

TEST_CASE("diag: suggest prefers the closest candidate") {
  const std::vector<std::string> words{"timeout", "tags", "retries", "delay"};
  CHECK(suggest("tag", words) == "tags");
  CHECK(suggest("timout", words) == "timeout");
  CHECK(suggest("retires", words) == "retries");
}

TEST_CASE("diag: did_you_mean formats the suggestion") {
  const std::vector<std::string> words{"timeout", "tags"};
  CHECK(did_you_mean("timout", words) == " (did you mean 'timeout'?)");
  CHECK(did_you_mean("zzzzzz", words) == "");
}

TEST_CASE("diag: excerpt keeps messages on one short line") {
  CHECK(excerpt("abc") == "abc");
  CHECK(excerpt("a\nb\tc\x01") == "a\\nb\\tc\\x01");
  CHECK(excerpt(std::string(100, 'x'), 10) == std::string(10, 'x') + "...");
  // never cut inside a UTF-8 character
  CHECK(excerpt("aé", 2) == "a...");
}

TEST_CASE("diag: suggest knows the words people write for rxerun's names") {
  const std::vector<std::string> block{"proto", "port", "hook", "dev", "action"};
  CHECK(suggest("protocol", block) == "proto");
  CHECK(suggest("interface", block) == "dev");
  CHECK(suggest("direction", block) == "hook");
  const std::vector<std::string> common{"name", "netns", "node", "expect", "timeout", "retries", "delay", "tags"};
  CHECK(suggest("retry", common) == "retries");
  CHECK(suggest("namespace", common) == "netns");
  // A synonym only names what is there: 'to' is not among these.
  CHECK(suggest("target", common) == std::nullopt);
  CHECK(suggest("target", std::vector<std::string>{"dst", "to"}) == "to");
}

TEST_CASE("diag: suggest names a candidate that holds the word, or that the word holds") {
  const std::vector<std::string> params{"duration", "iterations", "server", "gid_index"};
  CHECK(suggest("dur", params) == "duration");
  CHECK(suggest("server_addr", params) == "server");
  CHECK(suggest("gid", params) == "gid_index");
  CHECK(suggest("xyz", params) == std::nullopt);
  CHECK(suggest("du", params) == std::nullopt);  // two bytes are no evidence
}
