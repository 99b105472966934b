#include <doctest/doctest.h>

#include "engine/registry.h"

using namespace rxerun;

namespace {
Kind kind(std::string name, std::string plugin = "") {
  Kind k{KindSpec{.name = std::move(name)}, {}, {}};
  k.plugin = std::move(plugin);
  return k;
}
}  // namespace

TEST_CASE("registry: a plugin's kinds join the built-in ones in order of name") {
  Registry r({kind("veth"), kind("address")});
  REQUIRE(r.add({kind("zeta", "/p/a.so"), kind("gadget", "/p/a.so")}));
  CHECK(r.names() == std::vector<std::string>{"address", "gadget", "veth", "zeta"});
  REQUIRE(r.find("gadget"));
  CHECK(r.find("gadget")->plugin == "/p/a.so");
  CHECK(r.find("veth")->plugin.empty());
}

TEST_CASE("registry: a plugin with a taken name is refused whole") {
  Registry r({kind("veth")});
  REQUIRE(r.add({kind("gadget", "/p/a.so")}));
  auto builtin = r.add({kind("fine", "/p/b.so"), kind("veth", "/p/b.so")});
  REQUIRE_FALSE(builtin);
  CHECK(builtin.error().message ==
        "plugin /p/b.so: step kind 'veth' is taken: rxerun has a built-in kind of that name");
  CHECK_FALSE(r.find("fine"));  // none of its kinds
  auto other = r.add({kind("gadget", "/p/c.so")});
  REQUIRE_FALSE(other);
  CHECK(other.error().message == "plugin /p/c.so: step kind 'gadget' is taken: plugin /p/a.so declares it too");
  auto twice = r.add({kind("w", "/p/d.so"), kind("w", "/p/d.so")});
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == "plugin /p/d.so: step kind 'w' is declared twice");
  auto unnamed = r.add({kind("", "/p/e.so")});
  REQUIRE_FALSE(unnamed);
  CHECK(unnamed.error().message == "plugin /p/e.so declares a step kind without a name");
  CHECK(r.names() == std::vector<std::string>{"gadget", "veth"});
}

TEST_CASE("registry: plugins that could not be loaded are remembered with the reason") {
  Registry r({kind("veth")});
  CHECK_FALSE(r.plugin_failure("/p/a.so"));
  r.note_plugin_failure("/p/a.so", "plugin /p/a.so: No such file or directory");
  CHECK(r.plugin_failure("/p/a.so") == std::optional<std::string>("plugin /p/a.so: No such file or directory"));
}
