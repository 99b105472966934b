#include <doctest/doctest.h>

#include "engine/checks.h"

using namespace rxerun;
using nlohmann::json;

namespace {

Matcher parse(const json& written) {
  std::string error;
  auto m = parse_matcher(written, &error);
  REQUIRE_MESSAGE(m.has_value(), error);
  return *m;
}

std::string parse_error(const json& written) {
  std::string error;
  auto m = parse_matcher(written, &error);
  REQUIRE_FALSE(m.has_value());
  return error;
}

bool holds(const json& written, const json& actual) {
  return !parse(written).check(actual).has_value();
}

std::string why(const json& written, const json& actual) {
  auto r = parse(written).check(actual);
  REQUIRE(r.has_value());
  return *r;
}

}  // namespace

TEST_CASE("matcher: parses every operator") {
  CHECK(parse(json(5)).op == Matcher::Op::Eq);
  CHECK(parse(json("ACTIVE")).op == Matcher::Op::Eq);
  CHECK(parse(json(true)).op == Matcher::Op::Eq);
  CHECK(parse(json("== x")).op == Matcher::Op::Eq);
  CHECK(parse(json("!= 0")).op == Matcher::Op::Ne);
  CHECK(parse(json("> 0")).op == Matcher::Op::Gt);
  CHECK(parse(json(">= 100")).op == Matcher::Op::Ge);
  CHECK(parse(json("< 5")).op == Matcher::Op::Lt);
  CHECK(parse(json("<= 5")).op == Matcher::Op::Le);
  CHECK(parse(json("~ ^ACT")).op == Matcher::Op::Match);
  CHECK(parse(json(">0")).operand == json(0));
  CHECK(parse(json(">   1.5")).operand == json(1.5));
  CHECK(parse(json("~^A")).operand == json("^A"));
  CHECK(parse(json("> 0")).text == "> 0");
}

TEST_CASE("matcher: equality of a plain value") {
  CHECK(holds(json(5), json(5)));
  CHECK(holds(json(5), json(5.0)));
  CHECK(holds(json(5), json("5")));
  CHECK(holds(json("5"), json(5)));
  CHECK(holds(json("ACTIVE"), json("ACTIVE")));
  CHECK(holds(json(true), json(true)));
  CHECK(holds(json(true), json("true")));
  CHECK_FALSE(holds(json(5), json(6)));
  CHECK_FALSE(holds(json("ACTIVE"), json("DOWN")));
  CHECK_FALSE(holds(json(true), json(false)));
  CHECK(why(json("ACTIVE"), json("DOWN")) == "\"DOWN\" is not \"ACTIVE\"");
  CHECK(why(json(5), json(6)) == "6 is not 5");
}

TEST_CASE("matcher: == and !=") {
  CHECK(holds(json("== 5"), json(5)));
  CHECK(holds(json("== 5"), json("5.0")));
  CHECK(holds(json("== up"), json("up")));
  CHECK_FALSE(holds(json("== up"), json("down")));
  CHECK(why(json("== up"), json("down")) == "\"down\" is not == up");
  CHECK(holds(json("!= 0"), json(3)));
  CHECK(holds(json("!= 0"), json("abc")));
  CHECK_FALSE(holds(json("!= 0"), json(0)));
  CHECK_FALSE(holds(json("!= 0"), json("0.0")));
  CHECK(why(json("!= 0"), json(0)) == "0 is not != 0");
}

TEST_CASE("matcher: numeric comparisons, true and false") {
  CHECK(holds(json("> 0"), json(1)));
  CHECK_FALSE(holds(json("> 0"), json(0)));
  CHECK(holds(json(">= 100"), json(100)));
  CHECK_FALSE(holds(json(">= 100"), json(99.9)));
  CHECK(holds(json("< 5"), json(4)));
  CHECK_FALSE(holds(json("< 5"), json(5)));
  CHECK(holds(json("<= 5"), json(5)));
  CHECK_FALSE(holds(json("<= 5"), json(6)));
  CHECK(holds(json("> -1"), json(0)));
  CHECK(holds(json("< 1e3"), json(999)));
  CHECK(why(json("> 20"), json(12)) == "12 is not > 20");
  CHECK(why(json("<= 5"), json(6)) == "6 is not <= 5");
}

TEST_CASE("matcher: numeric strings count as numbers") {
  CHECK(holds(json("> 0"), json("12")));
  CHECK(holds(json(">= 1.5"), json("1.50")));
  CHECK_FALSE(holds(json("< 10"), json("10")));
  CHECK(why(json("> 0"), json("abc")) == "\"abc\" is not a number (> 0)");
  CHECK(why(json("> 0"), json(true)) == "true is not a number (> 0)");
  CHECK(why(json("> 0"), json(nullptr)) == "null is not a number (> 0)");
}

TEST_CASE("matcher: large counters compare exactly") {
  CHECK(holds(json(">= 18446744073709551615"), json(18446744073709551615ULL)));
  CHECK_FALSE(holds(json("> 18446744073709551614"), json(18446744073709551614ULL)));
  CHECK(holds(json("== 9007199254740993"), json(9007199254740993LL)));
  CHECK_FALSE(holds(json(9007199254740993LL), json(9007199254740992LL)));
}

TEST_CASE("matcher: regex search") {
  CHECK(holds(json("~ ^ACT"), json("ACTIVE")));
  CHECK(holds(json("~ TIV"), json("ACTIVE")));  // search, not a full match
  CHECK(holds(json("~ ^[0-9]+$"), json(42)));
  CHECK_FALSE(holds(json("~ ^ACT"), json("DOWN")));
  CHECK(why(json("~ ^ACT"), json("DOWN")) == "\"DOWN\" does not match ~ ^ACT");
}

TEST_CASE("matcher: parse errors") {
  CHECK(parse_error(json("~ [a-")).starts_with("invalid regex '[a-'"));
  CHECK(parse_error(json("~ (")).starts_with("invalid regex"));
  CHECK(parse_error(json("> abc")).starts_with("matcher '> abc': '>' needs a number, got 'abc'"));
  CHECK(parse_error(json(">= 1.2.3")).starts_with("matcher '>= 1.2.3'"));
  CHECK(parse_error(json("<none>")).ends_with("(write '== <none>' to compare as text)"));
  CHECK(parse_error(json(">")) == "matcher '>' has no operand");
  CHECK(parse_error(json("~  ")) == "matcher '~' has no operand");
  CHECK(parse_error(json("==")) == "matcher '==' has no operand");
  CHECK(parse_error(json(nullptr)).starts_with("a matcher needs a value"));
  CHECK(parse_error(json::array({1, json::array({2})})).ends_with("got a list in it"));
  CHECK(parse_error(json::array({1, json::object()})).ends_with("got a mapping in it"));
  CHECK(parse_error(json::array({nullptr})).ends_with("got nothing in it"));
  CHECK(parse_error(json::object()).ends_with("got a mapping"));
}

TEST_CASE("matcher: a list fact equals a list, item by item and in order") {
  const json acls = json::array({"10.10.0.1", "fd00:0010:0000:0000:0000:0000:0000:0001"});
  CHECK(holds(acls, acls));
  CHECK(holds(json::array({1, "2"}), json::array({"1", 2})));  // each item as a plain value
  CHECK(holds(json::array(), json::array()));
  CHECK_FALSE(holds(acls, json::array({"10.10.0.1"})));                  // one missing
  CHECK_FALSE(holds(json::array({"a", "b"}), json::array({"b", "a"})));  // order counts
  CHECK_FALSE(holds(json::array({"a"}), json("a")));                     // not a list
  CHECK(why(json::array({"a", "b"}), json::array({"a"})) == "[\"a\"] is not [\"a\",\"b\"]");
}

TEST_CASE("matcher: a pattern past 512 characters is refused, deep or repeated ones compile") {
  CHECK(parse_error(json("~ " + std::string(600, 'a'))).find("too complex: longer than 512") != std::string::npos);
  CHECK(parse(json("~ " + std::string(40, '(') + "a" + std::string(40, ')'))).op == Matcher::Op::Match);
  CHECK(parse(json("~ (a{1000}){1000}")).op == Matcher::Op::Match);
  CHECK(parse(json("~ a{3}")).op == Matcher::Op::Match);
}

TEST_CASE("matcher: a program's whole output is searched without exhausting the stack") {
  // std::regex recursed once per character here and crashed at 64 KiB, the
  // size of exec's stdout fact.
  const std::string output = std::string(64 * 1024, 'x') + "\n3 bytes in 0.01 seconds\n";
  CHECK(holds(json("~ .*bytes in"), json(output)));
  CHECK(holds(json("~ (x|y)*\\n3 bytes"), json(output)));
  CHECK(holds(json("!~ .*error"), json(output)));
  CHECK(why(json("~ .*error"), json(output)).find("does not match ~ .*error") != std::string::npos);
}

TEST_CASE("matcher: catastrophic backtracking stops at the match limit with a reason") {
  const std::string reason = why(json("~ ^(a|a)*$"), json(std::string(40, 'a') + "b"));
  CHECK(reason.find("match limit") != std::string::npos);
}

TEST_CASE("matcher: !~ holds when the pattern matches nowhere") {
  CHECK(parse(json("!~ error")).op == Matcher::Op::NoMatch);
  CHECK(holds(json("!~ error"), json("all good")));
  CHECK_FALSE(holds(json("!~ err"), json("an error")));
  CHECK(why(json("!~ err"), json("an error")) == "\"an error\" matches !~ err");
  CHECK(holds(json("!~ ^4"), json(12)));  // numbers as their JSON text
  CHECK(parse_error(json("!~ [a-")).starts_with("invalid regex '[a-'"));
  CHECK(parse_error(json("!~")) == "matcher '!~' has no operand");
}

TEST_CASE("matcher: a null error pointer is allowed") {
  CHECK_FALSE(parse_matcher(json("~ ("), nullptr).has_value());
}
