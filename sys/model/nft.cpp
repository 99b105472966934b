#include "sys/model/nft.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

nlohmann::json nft_doc(nlohmann::json items) {
  return {{"nftables", std::move(items)}};
}

}  // namespace

NftModel::Rule* NftModel::find_rule(const std::string& table, const std::string& comment) {
  auto t = tables.find(table);
  if (t == tables.end()) return nullptr;
  for (auto& r : t->second.rules)
    if (r.comment == comment) return &r;
  return nullptr;
}

Result<nlohmann::json> NftModel::apply(const std::string& command) {
  auto enoent = [&] { return make_error("Error: No such file or directory\n" + command, ENOENT); };
  const auto w = split_words(command);
  if (w.size() < 4) return nlohmann::json();
  const std::string& verb = w[0];
  const std::string& what = w[1];
  const std::string family = w[2];
  const std::string key = family + " " + w[3];
  auto t = tables.find(key);
  auto table_json = [&](const Table& tb) {
    return nlohmann::json{{"table", {{"family", family}, {"name", w[3]}, {"handle", tb.handle}}}};
  };
  auto chain_json = [&](const std::string& name, const std::string& hook) {
    nlohmann::json c = {{"family", family}, {"table", w[3]}, {"name", name}};
    if (!hook.empty()) {
      c["type"] = "filter";
      c["hook"] = hook;
      c["prio"] = 0;
      c["policy"] = "accept";
    }
    return nlohmann::json{{"chain", c}};
  };
  auto rule_json = [&](const Rule& r) {
    nlohmann::json j = {{"family", family},
                        {"table", w[3]},
                        {"chain", r.chain},
                        {"handle", r.handle},
                        {"expr", {{{"counter", {{"packets", r.packets}, {"bytes", r.bytes}}}}}}};
    if (!r.comment.empty()) j["comment"] = r.comment;
    return nlohmann::json{{"rule", j}};
  };
  auto has_chain = [&](const Table& tb, const std::string& name) {
    return std::any_of(tb.chains.begin(), tb.chains.end(), [&](const auto& c) { return c.first == name; });
  };

  if (what == "table") {
    if (verb == "list") {
      if (t == tables.end()) return enoent();
      nlohmann::json items = {{{"metainfo", {{"json_schema_version", 1}}}}, table_json(t->second)};
      for (const auto& [name, hook] : t->second.chains) {
        items.push_back(chain_json(name, hook));
        for (const auto& r : t->second.rules)
          if (r.chain == name) items.push_back(rule_json(r));
      }
      return nft_doc(items);
    }
    if (verb == "add") {
      if (t == tables.end()) t = tables.emplace(key, Table{.handle = next_table_handle++}).first;
      return nft_doc({{{"add", table_json(t->second)}}});
    }
    if (verb == "delete") {
      if (t == tables.end()) return enoent();
      tables.erase(t);
      return nlohmann::json();
    }
  }
  if (w.size() < 5) return nlohmann::json();
  const std::string& chain = w[4];
  if (what == "chain") {
    if (t == tables.end()) return enoent();
    if (verb == "add") {
      std::string hook;
      auto pos = std::find(w.begin(), w.end(), "hook");
      if (pos != w.end() && pos + 1 != w.end()) hook = *(pos + 1);
      if (!has_chain(t->second, chain)) {
        t->second.chains.emplace_back(chain, hook);
        ++t->second.next_handle;  // a chain takes a handle of its table, as in the kernel
      }
      return nft_doc({{{"add", chain_json(chain, hook)}}});
    }
    if (verb == "delete") {
      if (!has_chain(t->second, chain)) return enoent();
      for (const auto& r : t->second.rules)
        if (r.chain == chain) return make_error("Error: Could not process rule: Device or resource busy", EBUSY);
      std::erase_if(t->second.chains, [&](const auto& c) { return c.first == chain; });
      return nlohmann::json();
    }
  }
  if (what == "rule") {
    if (t == tables.end() || !has_chain(t->second, chain)) return enoent();
    auto& rules = t->second.rules;
    if (verb == "add") {
      // "add rule FAMILY TABLE CHAIN <text> [comment "C"]"
      const std::string prefix = verb + " " + what + " " + family + " " + w[3] + " " + chain + " ";
      if (command.rfind(prefix, 0) != 0)
        return make_error("Error: syntax error (the model wants single spaces)", EINVAL);
      std::string text = command.substr(prefix.size());
      Rule r{.handle = t->second.next_handle++, .chain = chain};
      auto c = text.find(" comment \"");
      if (c != std::string::npos) {
        r.comment = text.substr(c + 10, text.size() - c - 11);
        text = text.substr(0, c);
      }
      r.text = text;
      rules.push_back(r);
      return nft_doc({{{"add", rule_json(r)}}});
    }
    if (verb == "delete" && w.size() >= 7 && w[5] == "handle") {
      long long handle = 0;
      const auto [end, ec] = std::from_chars(w[6].data(), w[6].data() + w[6].size(), handle);
      if (ec != std::errc() || end != w[6].data() + w[6].size())
        return make_error("Error: syntax error, unexpected " + w[6] + "\n" + command, EINVAL);
      auto n = std::erase_if(rules, [&](const Rule& r) { return r.chain == chain && r.handle == handle; });
      if (n == 0) return enoent();
      return nlohmann::json();
    }
  }
  return nlohmann::json();
}

}  // namespace rxerun::sys
