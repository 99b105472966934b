#include "steps/common/perftest_output.h"

#include <arpa/inet.h>

#include <charconv>
#include <map>
#include <optional>
#include <sstream>

#include "base/strings.h"

namespace rxerun::steps {

namespace {

// perftest's column names -> fact names.
const std::map<std::string, std::string>& fact_names() {
  static const std::map<std::string, std::string> names = {
      {"#bytes", "bytes"},
      {"#iterations", "iterations"},
      {"BW peak[MB/sec]", "bw_peak_mib_s"},
      {"BW average[MB/sec]", "bw_avg_mib_s"},
      {"MsgRate[Mpps]", "msg_rate_mpps"},
      {"t_min[usec]", "lat_min_us"},
      {"t_max[usec]", "lat_max_us"},
      {"t_typical[usec]", "lat_typical_us"},
      {"t_avg[usec]", "lat_avg_us"},
      {"t_stdev[usec]", "lat_stdev_us"},
      {"99% percentile[usec]", "lat_p99_us"},
      {"99.9% percentile[usec]", "lat_p999_us"},
      {"tps average", "tps_avg"},
  };
  return names;
}

std::optional<double> parse_double(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// " GID: 00:00:...:255:255:10:10:00:02": sixteen decimal bytes.
std::string gid_of(std::string_view line) {
  const auto colon = line.find("GID:");
  if (colon == std::string_view::npos) return "";
  std::string rest(line.substr(colon + 4));
  unsigned char bytes[16];
  int n = 0;
  std::istringstream in(rest);
  for (std::string part; n < 16 && std::getline(in, part, ':'); ++n) {
    const auto w = split_words(part);
    if (w.size() != 1) return "";
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(w[0].data(), w[0].data() + w[0].size(), v);
    if (ec != std::errc() || end != w[0].data() + w[0].size() || v > 255) return "";
    bytes[n] = static_cast<unsigned char>(v);
  }
  if (n != 16) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (!::inet_ntop(AF_INET6, bytes, text, sizeof text)) return "";
  return text;
}

}  // namespace

std::vector<std::string> perftest_columns(std::string_view header) {
  std::vector<std::string> columns;
  std::string pending;
  for (const auto& w : split_words(header)) {
    if (w.front() == '#') {
      if (!pending.empty()) columns.push_back(std::exchange(pending, ""));
      columns.push_back(w);
      continue;
    }
    pending += (pending.empty() ? "" : " ") + w;
    if (w.back() == ']') columns.push_back(std::exchange(pending, ""));
  }
  if (!pending.empty()) columns.push_back(pending);
  return columns;
}

Result<PerftestReport> parse_perftest_output(std::string_view out, std::string_view err) {
  PerftestReport report;
  if (const auto at = err.find("Correlation coefficient"); at != std::string_view::npos) {
    const auto end = err.find('\n', at);
    for (const auto& x : split_words(err.substr(at, end == std::string_view::npos ? end : end - at)))
      report.uncalibrated += (report.uncalibrated.empty() ? "" : " ") + x;
  }
  std::vector<std::string> columns;
  enum { None, Local, Remote } address = None;
  bool found = false;
  std::size_t pos = 0;
  while (pos <= out.size() && !found) {
    auto nl = out.find('\n', pos);
    if (nl == std::string_view::npos) nl = out.size();
    const std::string_view line = out.substr(pos, nl - pos);
    pos = nl + 1;

    if (line.find("local address:") != std::string_view::npos)
      address = Local;
    else if (line.find("remote address:") != std::string_view::npos)
      address = Remote;
    else if (line.find("GID:") != std::string_view::npos && address != None) {
      std::string& gid = address == Local ? report.local_gid : report.remote_gid;
      if (gid.empty()) gid = gid_of(line);  // the first queue pair's
      address = None;
    }

    if (line.find("Correlation coefficient") != std::string_view::npos) {
      const auto w = split_words(line);
      for (const auto& x : w) report.uncalibrated += (report.uncalibrated.empty() ? "" : " ") + x;
      continue;
    }
    if (line.find("#bytes") != std::string_view::npos) {
      columns = perftest_columns(line);
      continue;
    }
    if (columns.empty()) continue;
    const auto values = split_words(line);
    if (values.empty() || !parse_double(values[0])) continue;  // not a result row (yet)
    if (values.size() < columns.size())
      return make_error("perftest's result row has " + std::to_string(values.size()) + " values for " +
                        std::to_string(columns.size()) + " columns: " + std::string(line));
    for (std::size_t i = 0; i < columns.size(); ++i) {
      auto v = parse_double(values[i]);
      if (!v) return make_error("perftest's result row has '" + values[i] + "' under " + columns[i]);
      auto name = fact_names().find(columns[i]);
      if (name == fact_names().end()) continue;
      const bool counted = name->second == "bytes" || name->second == "iterations";
      if (counted || report.uncalibrated.empty()) report.figures.emplace_back(name->second, *v);
    }
    found = true;
  }
  if (!found)
    return make_error(columns.empty() ? "perftest printed no result table" : "perftest's result table has no row");
  return report;
}

}  // namespace rxerun::steps
