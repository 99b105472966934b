#include "sys/nft_lib.h"

#include <nftables/libnftables.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>

namespace rxerun::sys {

namespace {

struct CtxFree {
  void operator()(nft_ctx* ctx) const { nft_ctx_free(ctx); }
};
using CtxPtr = std::unique_ptr<nft_ctx, CtxFree>;

std::string trim(std::string s) {
  const char* ws = " \t\r\n";
  auto first = s.find_first_not_of(ws);
  if (first == std::string::npos) return "";
  auto last = s.find_last_not_of(ws);
  return s.substr(first, last - first + 1);
}

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
      return make_error("nft '" + command + "': unreadable JSON output from libnftables: " + trim(text).substr(0, 200));
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

Result<nlohmann::json> LibNft::run_once(const std::string& command) {
  CtxPtr ctx(nft_ctx_new(NFT_CTX_DEFAULT));
  if (!ctx) return make_error("libnftables: cannot create a context (out of memory?)", ENOMEM);
  nft_ctx_output_set_flags(ctx.get(), NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_ECHO | NFT_CTX_OUTPUT_HANDLE);
  if (nft_ctx_buffer_output(ctx.get()) != 0 || nft_ctx_buffer_error(ctx.get()) != 0)
    return make_error("libnftables: cannot buffer its output", ENOMEM);

  const int rc = nft_run_cmd_from_buffer(ctx.get(), command.c_str());
  const char* out = nft_ctx_get_output_buffer(ctx.get());
  const char* err = nft_ctx_get_error_buffer(ctx.get());
  const std::string out_text = out ? out : "";
  const std::string err_text = trim(err ? err : "");

  if (rc != 0) {
    std::string message = err_text.empty() ? "nft '" + command + "' failed" : err_text;
    const int code = errno_from_text(message);
    if (code == EPERM || code == EACCES) message = "needs root (CAP_NET_ADMIN): " + message;
    return make_error(std::move(message), code);
  }
  return parse_output(out_text, command);
}

}  // namespace rxerun::sys
