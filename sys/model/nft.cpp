#include "sys/model/nft.h"

#include <algorithm>
#include <cerrno>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

Error nft_enoent(const std::string& command) {
  return make_error("Error: No such file or directory\n" + command, ENOENT);
}

}  // namespace

NftRule* ModelNft::find_rule(const std::string& table, const std::string& comment) {
  auto t = tables.find(table);
  if (t == tables.end()) return nullptr;
  for (auto& r : t->second.rules)
    if (r.comment == comment) return &r;
  return nullptr;
}

Result<ModelNft::Table*> ModelNft::existing(const char* op, const std::string& family, const std::string& name,
                                            const std::string& command) {
  if (auto f = k_.fault(op, command)) return *f;
  if (command.starts_with("list "))
    k_.looked("nft", "nftables: " + command, shell_join({"nft", command}));
  else
    k_.did("nft", "nftables: " + command, shell_join({"nft", command}));
  auto& here = by_netns[k_.netns];
  auto t = here.find(family + " " + name);
  if (t == here.end()) return nft_enoent(command);
  return &t->second;
}

Result<std::optional<NftTable>> ModelNft::table(const std::string& family, const std::string& name) {
  auto t = existing("nft.table", family, name, nft_command::list_table(family, name));
  if (!t) return t.error().code == ENOENT ? Result<std::optional<NftTable>>(std::nullopt) : t.error();
  return std::optional<NftTable>(NftTable{(*t)->chains, (*t)->rules, (*t)->others});
}

Result<void> ModelNft::add_table(const std::string& family, const std::string& name) {
  const std::string command = nft_command::add_table(family, name);
  if (auto f = k_.fault("nft.add_table", command)) return *f;
  k_.did("nft", "nftables: " + command, shell_join({"nft", command}));
  auto [t, fresh] = by_netns[k_.netns].try_emplace(family + " " + name);
  if (fresh) t->second.handle = next_table_handle_++;
  return {};
}

Result<void> ModelNft::add_base_chain(const std::string& family, const std::string& table, const std::string& hook) {
  auto t = existing("nft.add_base_chain", family, table, nft_command::add_base_chain(family, table, hook));
  if (!t) return t.error();
  if (std::find((*t)->chains.begin(), (*t)->chains.end(), hook) == (*t)->chains.end()) {
    (*t)->chains.push_back(hook);
    ++(*t)->next_handle;  // a chain takes a handle of its table, as in the kernel
  }
  return {};
}

Result<std::uint64_t> ModelNft::add_rule(const std::string& family, const std::string& table, const NftRule& rule) {
  auto t = existing("nft.add_rule", family, table, nft_command::add_rule(family, table, rule));
  if (!t) return t.error();
  if (std::find((*t)->chains.begin(), (*t)->chains.end(), rule.chain) == (*t)->chains.end())
    return nft_enoent(nft_command::add_rule(family, table, rule));
  NftRule added = rule;
  added.handle = (*t)->next_handle++;
  added.packets = added.bytes = 0;
  (*t)->rules.push_back(added);
  return added.handle;
}

Result<void> ModelNft::delete_rule(const std::string& family, const std::string& table, const std::string& chain,
                                   std::uint64_t handle) {
  const std::string command = nft_command::delete_rule(family, table, chain, handle);
  auto t = existing("nft.delete_rule", family, table, command);
  if (!t) return t.error();
  if (!std::erase_if((*t)->rules, [&](const NftRule& r) { return r.chain == chain && r.handle == handle; }))
    return nft_enoent(command);
  return {};
}

Result<void> ModelNft::delete_chain(const std::string& family, const std::string& table, const std::string& chain) {
  const std::string command = nft_command::delete_chain(family, table, chain);
  auto t = existing("nft.delete_chain", family, table, command);
  if (!t) return t.error();
  auto& chains = (*t)->chains;
  if (std::find(chains.begin(), chains.end(), chain) == chains.end()) return nft_enoent(command);
  if (std::any_of((*t)->rules.begin(), (*t)->rules.end(), [&](const NftRule& r) { return r.chain == chain; }))
    return make_error("Error: Could not process rule: Device or resource busy", EBUSY);
  std::erase(chains, chain);
  return {};
}

Result<void> ModelNft::delete_table(const std::string& family, const std::string& table) {
  auto t = existing("nft.delete_table", family, table, nft_command::delete_table(family, table));
  if (!t) return t.error();
  by_netns[k_.netns].erase(family + " " + table);
  return {};
}

}  // namespace rxerun::sys
