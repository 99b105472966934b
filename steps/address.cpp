// address: an IPv4 or IPv6 address/prefix on an interface. An address that
// is there already is left as it is (changed=false) and no undo is recorded:
// it was not rxerun's to remove. Undo removes the address; an address or
// interface that is gone is success. The journal records the interface's
// index and namespace inode (steps/common/identity.h): an interface made since
// under the name is left alone, its addresses too, and reported.

#include <arpa/inet.h>

#include <algorithm>
#include <optional>

#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_address(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_address(const nlohmann::json& args, UndoContext& ctx);
void picture_address(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind address_kind() {
  KindSpec spec;
  spec.name = "address";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "dev"}};
  spec.summary = "Add an IPv4 or IPv6 address to an interface; undo removes it.";
  spec.params = {
      {.name = "dev", .type = ParamType::IfName, .required = true, .help = "the interface"},
      {.name = "cidr", .type = ParamType::Cidr, .required = true, .help = "address/prefix: 10.10.0.1/24, fd00::1/64"},
  };
  spec.facts = {
      {"changed", "whether the step added the address (false: it was there, and is left there)"},
      {"address", "the address/prefix, as the kernel writes it"},
  };
  spec.example =
      "- veth: {name: vB, peer: vA}\n"
      "- address: {dev: vB, cidr: 10.10.0.2/24}\n";
  Kind kind{std::move(spec), run_address, undo_address};
  kind.picture = picture_address;
  return kind;
}

namespace {

struct Cidr {
  int family = 0;
  std::string address;  // canonical text (inet_ntop)
  int prefix = 0;
  std::string text() const { return address + "/" + std::to_string(prefix); }
};

// "10.0.0.1/24", "fd00::1/64"; no prefix means the full length.
std::optional<Cidr> cidr_of(const std::string& text) {
  const auto slash = text.find('/');
  const std::string addr = text.substr(0, slash);
  unsigned char buf[16];
  Cidr c;
  if (inet_pton(AF_INET, addr.c_str(), buf) == 1)
    c.family = AF_INET;
  else if (inet_pton(AF_INET6, addr.c_str(), buf) == 1)
    c.family = AF_INET6;
  else
    return std::nullopt;
  const int max = c.family == AF_INET ? 32 : 128;
  c.prefix = max;
  if (slash != std::string::npos) {
    const std::string p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3 || !std::all_of(p.begin(), p.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      return std::nullopt;
    c.prefix = std::stoi(p);
    if (c.prefix > max) return std::nullopt;
  }
  char out[INET6_ADDRSTRLEN];
  inet_ntop(c.family, buf, out, sizeof(out));
  c.address = out;
  return c;
}

// The address the step added, on the interface it found (its identity).
struct AddressRecord {
  static constexpr std::string_view kOp = "address";
  std::string dev;
  std::string cidr;
  nlohmann::json identity;  // {"ifindex", "netns_inode"}

  nlohmann::json to_args() const { return {{"op", kOp}, {"dev", dev}, {"cidr", cidr}, {"identity", identity}}; }
  static Result<AddressRecord> read(JournalArgs& a) {
    AddressRecord r{a.ifname("dev"), a.cidr("cidr"), a.identity()};
    if (!a.ok()) return a.error();
    return r;
  }
};

StepResult run_address(const Params& params, StepContext& ctx) {
  const std::string dev = params.str("dev");
  const std::string cidr = params.str("cidr");
  auto wanted = cidr_of(cidr);
  if (!wanted) return StepResult::error(params.where("cidr") + ": '" + cidr + "' is not an address/prefix");
  auto& links = ctx.sys().links;

  int ifindex = 0;  // as the listing found it: adding needs no lookup of its own
  auto present = links.addresses(dev, &ifindex);
  if (!present) {
    if (present.error().code == ENODEV) return StepResult::error("no interface " + dev + " (create it first)");
    return StepResult::error(present.error());
  }
  const nlohmann::json facts_unchanged = {{"changed", false}, {"address", wanted->text()}};
  for (const auto& text : *present) {
    auto have = cidr_of(text);
    if (!have || have->family != wanted->family || have->address != wanted->address) continue;
    if (have->prefix == wanted->prefix) return StepResult::ok(facts_unchanged);
    // IPv6 knows an address once, whatever its prefix.
    if (wanted->family == AF_INET6)
      return StepResult::error(dev + " has " + wanted->address + " already, as " + have->text() +
                               " (not rxerun's): remove it or ask for that prefix");
  }

  RXERUN_TRY_ASSIGN(const std::uint64_t inode, ctx.sys().netns.current_inode());
  const AddressRecord record{dev, wanted->text(), {{"ifindex", ifindex}, {"netns_inode", inode}}};
  RXERUN_TRY(ctx.will_change(record.to_args(), "remove " + wanted->text() + " from " + dev, ctx.on_link(dev)));
  RXERUN_TRY(links.add_address(dev, wanted->text(), ifindex));
  return StepResult::ok({{"changed", true}, {"address", wanted->text()}});
}

Result<nlohmann::json> undo_address(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<AddressRecord>(args, ctx));
  RXERUN_TRY_ASSIGN(const Found found, check_link(ctx.sys(), record.dev, record.identity));
  if (found == Found::Gone) return nlohmann::json::object();
  auto r = ctx.sys().links.remove_address(record.dev, record.cidr);
  if (!r && r.error().code != EADDRNOTAVAIL && r.error().code != ENODEV) return r.error();
  return nlohmann::json::object();
}

}  // namespace

namespace {

void picture_address(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  auto& i = picture.add_interface(place_of(step), picture_param(p, "dev"));
  const std::string cidr = picture_param(p, "cidr");
  if (std::find(i.addresses.begin(), i.addresses.end(), cidr) == i.addresses.end()) i.addresses.push_back(cidr);
}

}  // namespace

}  // namespace rxerun::steps
