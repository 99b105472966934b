#include "sys/nft_lib.h"

#include <fcntl.h>
#include <nftables/libnftables.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>

#include "base/fd.h"
#include "base/strings.h"
#include "sys/process.h"

namespace rxerun::sys {

namespace {

struct CtxFree {
  void operator()(nft_ctx* ctx) const { nft_ctx_free(ctx); }
};
using CtxPtr = std::unique_ptr<nft_ctx, CtxFree>;

// libnftables reports no errno, only text such as "Error: Could not process
// rule: No such file or directory". The kernel's reasons are strerror()
// strings, so the code is recovered from the text; 0 when none is named (a
// syntax error, say).
int errno_from_text(const std::string& text) {
  static constexpr std::array kCodes{EPERM,  EACCES, ENOENT,   EEXIST, EBUSY,   ENOTEMPTY,    EOPNOTSUPP,
                                     ENOMEM, ENOSPC, ENODEV,   EINVAL, ENOBUFS, EAFNOSUPPORT, EPROTONOSUPPORT,
                                     ERANGE, E2BIG,  EMSGSIZE, ENFILE, EMFILE,  EINTR};
  for (int code : kCodes)
    if (text.find(std::strerror(code)) != std::string::npos) return code;
  return 0;
}

// libnftables prints one JSON document per command; a buffer of several
// commands yields several. They are merged into one {"nftables": [...]}.
Result<nlohmann::json> parse_output(const std::string& text, const std::string& command) {
  if (trim(text).empty()) return nlohmann::json();
  auto whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded()) return whole;
  nlohmann::json merged = {{"nftables", nlohmann::json::array()}};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (trim(line).empty()) continue;
    auto doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("nftables") || !doc["nftables"].is_array())
      return make_error("nft '" + command +
                        "': unreadable JSON output from libnftables: " + std::string(trim(text).substr(0, 200)));
    for (auto& item : doc["nftables"]) merged["nftables"].push_back(std::move(item));
  }
  return merged;
}

}  // namespace

// libnftables talks to the kernel on its own socket and fails a command
// whose send or receive a signal interrupted (EINTR), without saying whether
// the kernel applied it. Commands whose repetition changes nothing more run
// again: listings, and adding a table or chain (`add` leaves an existing one
// as it is). A deletion runs again, and "no such object" then means the first
// one went through. An added rule is for the caller to look for before
// adding it again (steps/block.cpp).
Result<nlohmann::json> LibNft::run(const std::string& command) {
  auto r = run_once(command);
  const bool deletion = command.starts_with("delete ");
  const bool repeatable = command.starts_with("list ") || command.starts_with("add table ") ||
                          command.starts_with("add chain ") || deletion;
  for (int again = 0; !r && r.error().code == EINTR && repeatable && again < 3; ++again) {
    r = run_once(command);
    if (!r && deletion && r.error().code == ENOENT) return nlohmann::json();
  }
  return r;
}

namespace {

// What a worker reports: libnftables' return code, output and error text.
struct NftOutcome {
  int rc = 0;
  std::string out;
  std::string err;
};

NftOutcome run_here(const std::string& command) {
  CtxPtr ctx(nft_ctx_new(NFT_CTX_DEFAULT));
  if (!ctx) return {1, "", "libnftables: cannot create a context (out of memory?)"};
  nft_ctx_output_set_flags(ctx.get(), NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_ECHO | NFT_CTX_OUTPUT_HANDLE);
  if (nft_ctx_buffer_output(ctx.get()) != 0 || nft_ctx_buffer_error(ctx.get()) != 0)
    return {1, "", "libnftables: cannot buffer its output"};
  const int rc = nft_run_cmd_from_buffer(ctx.get(), command.c_str());
  const char* out = nft_ctx_get_output_buffer(ctx.get());
  const char* err = nft_ctx_get_error_buffer(ctx.get());
  return {rc, out ? out : "", err ? err : ""};
}

bool write_fully(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads both pipes to their end (a worker that fills one while rxerun waits
// on the other must not stall).
void drain(int result_fd, int stderr_fd, std::string& result, std::string& stderr_text) {
  pollfd fds[2] = {{result_fd, POLLIN, 0}, {stderr_fd, POLLIN, 0}};
  std::string* into[2] = {&result, &stderr_text};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;
        --open;
      } else {
        into[i]->append(buf, static_cast<std::size_t>(n));
      }
    }
  }
}

}  // namespace

// The command runs in a worker process: libnftables, through libnftnl, ends
// the process with exit(1) when it takes a reply for a broken kernel ABI,
// and an interrupted receive in the middle of a listing is enough for that.
// In rxerun itself that would skip the cleanup. A worker that ends without
// an answer is reported like an interrupted command: it may or may not have
// reached the kernel. Signals are blocked in the worker, so that Ctrl-C
// reaches rxerun, which stops the run after this command.
Result<nlohmann::json> LibNft::run_once(const std::string& command) {
  int result_pipe[2], stderr_pipe[2];
  if (::pipe2(result_pipe, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd result_read(result_pipe[0]), result_write(result_pipe[1]);
  if (::pipe2(stderr_pipe, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd stderr_read(stderr_pipe[0]), stderr_write(stderr_pipe[1]);

  const int keep[] = {result_write.get(), stderr_write.get()};
  auto worker = fork_worker(keep, [&]() -> int {
    sigset_t all;
    sigfillset(&all);
    ::sigprocmask(SIG_BLOCK, &all, nullptr);
    ::dup2(stderr_write.get(), 2);
    const NftOutcome o = run_here(command);
    const nlohmann::json answer = {{"rc", o.rc}, {"out", o.out}, {"err", o.err}};
    return write_fully(result_write.get(), answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) ? 0
                                                                                                                  : 1;
  });
  if (!worker) return worker.error();
  result_write.reset();
  stderr_write.reset();
  std::string result_text, stderr_text;
  drain(result_read.get(), stderr_read.get(), result_text, stderr_text);
  Child child(*worker);
  const ExitStatus status = child.wait();

  const auto answer = nlohmann::json::parse(result_text, nullptr, false);
  if (status.signal || status.code != 0 || !answer.is_object()) {
    std::string said(trim(stderr_text));
    std::replace(said.begin(), said.end(), '\n', ' ');
    return make_error("nft '" + command + "': libnftables ended its process (" + status.describe() + ")" +
                          (said.empty() ? "" : ": " + said) + "; the command may or may not have reached the kernel",
                      EINTR);
  }
  const int rc = answer.value("rc", 1);
  const std::string err_text(trim(answer.value("err", "")));
  if (rc != 0) {
    std::string message = err_text.empty() ? "nft '" + command + "' failed" : err_text;
    const int code = errno_from_text(message);
    if (code == EPERM || code == EACCES) message = "needs root (CAP_NET_ADMIN): " + message;
    return make_error(std::move(message), code);
  }
  return parse_output(answer.value("out", ""), command);
}

namespace {

// The {"nftables": [...]} items of a listing; empty for null output.
const nlohmann::json& nft_items(const nlohmann::json& listing) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (listing.is_object() && listing.contains("nftables") && listing["nftables"].is_array()) return listing["nftables"];
  return kEmpty;
}

NftRule rule_from_json(const nlohmann::json& j) {
  NftRule r{.chain = j.value("chain", ""), .comment = j.value("comment", "")};
  r.handle = j.value("handle", std::uint64_t{0});
  if (j.contains("expr") && j["expr"].is_array())
    for (const auto& e : j["expr"]) {
      if (!e.is_object() || !e.contains("counter") || !e["counter"].is_object()) continue;
      r.packets += e["counter"].value("packets", std::uint64_t{0});
      r.bytes += e["counter"].value("bytes", std::uint64_t{0});
    }
  return r;
}

}  // namespace

NftTable nft_table_from_json(const nlohmann::json& listing) {
  NftTable t;
  for (const auto& item : nft_items(listing)) {
    if (!item.is_object() || item.empty()) continue;
    const std::string what = item.begin().key();
    if (what == "metainfo" || what == "table") continue;
    if (what == "chain") {
      t.chains.push_back(item["chain"].value("name", ""));
    } else if (what == "rule") {
      t.rules.push_back(rule_from_json(item["rule"]));
    } else {
      ++t.others;
    }
  }
  return t;
}

std::uint64_t nft_echoed_handle(const nlohmann::json& echo) {
  for (const auto& item : nft_items(echo)) {
    const nlohmann::json* rule = nullptr;
    if (item.contains("add") && item["add"].contains("rule")) rule = &item["add"]["rule"];
    if (item.contains("rule")) rule = &item["rule"];
    if (rule && rule->contains("handle")) return (*rule)["handle"].get<std::uint64_t>();
  }
  return 0;
}

Result<std::optional<NftTable>> LibNft::table(const std::string& family, const std::string& name) {
  auto listed = run(nft_command::list_table(family, name));
  if (!listed) {
    if (listed.error().code == ENOENT) return std::optional<NftTable>();
    return listed.error();
  }
  return std::optional<NftTable>(nft_table_from_json(*listed));
}

Result<void> LibNft::add_table(const std::string& family, const std::string& name) {
  if (auto r = run(nft_command::add_table(family, name)); !r) return r.error();
  return {};
}

Result<void> LibNft::add_base_chain(const std::string& family, const std::string& table, const std::string& hook) {
  if (auto r = run(nft_command::add_base_chain(family, table, hook)); !r) return r.error();
  return {};
}

Result<std::uint64_t> LibNft::add_rule(const std::string& family, const std::string& table, const NftRule& rule) {
  auto echoed = run(nft_command::add_rule(family, table, rule));
  if (!echoed) return echoed.error();
  return nft_echoed_handle(*echoed);
}

Result<void> LibNft::delete_rule(const std::string& family, const std::string& table, const std::string& chain,
                                 std::uint64_t handle) {
  if (auto r = run(nft_command::delete_rule(family, table, chain, handle)); !r) return r.error();
  return {};
}

Result<void> LibNft::delete_chain(const std::string& family, const std::string& table, const std::string& chain) {
  if (auto r = run(nft_command::delete_chain(family, table, chain)); !r) return r.error();
  return {};
}

Result<void> LibNft::delete_table(const std::string& family, const std::string& table) {
  if (auto r = run(nft_command::delete_table(family, table)); !r) return r.error();
  return {};
}

}  // namespace rxerun::sys
