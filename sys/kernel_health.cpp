#include "sys/kernel_health.h"

#include <cstdlib>
#include <string>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

// A gap this long on the kernel's clock ends a report: its trace is
// printed in one go.
constexpr std::uint64_t kKernelReportGapUsec = 5'000'000;
// A report that has not ended by this many lines ends here.
constexpr std::size_t kKernelReportSpan = 200;

std::optional<KernelReportKind> kernel_warning_kind(std::string_view rest) {
  // "WARNING: CPU: 0 PID: 1 at net/core/dev.c:123 f+0x1/0x2", "WARNING: at ...",
  // "WARNING: drivers/x.c:12 at f+0x1/0x2, CPU#0: task/1".
  if (rest.starts_with("CPU: ") || rest.starts_with("at ") || contains(rest, " at ")) {
    if (!contains(rest, "lock")) return KernelReportKind::Warning;
  }
  // Lockdep's: "possible circular locking dependency detected", "possible
  // recursive locking detected", "inconsistent lock state", "suspicious RCU
  // usage", "bad unlock balance detected!", "held lock freed!", ...
  if (contains(rest, "lock") || contains(rest, "RCU") || contains(rest, "IRQ")) return KernelReportKind::Lockdep;
  return std::nullopt;  // "WARNING: " on some note of the kernel's that is no report
}

struct ReportLine {
  std::uint64_t usec = 0;
  std::string message;
  std::string text;  // as shown
};

bool is_report_end(std::string_view m) {
  return m.starts_with("---[ end ");  // "---[ end trace 0000000000000000 ]---", "---[ end Kernel panic - ..."
}

bool is_report_rule(std::string_view m) {
  return m.size() >= 20 && m.find_first_not_of('=') == std::string_view::npos;
}

std::vector<KernelReport> group_kernel_reports(const std::vector<ReportLine>& lines) {
  std::vector<KernelReport> out;
  bool open = false;
  std::size_t seen = 0;  // lines of the open report, kept or not
  std::uint64_t last = 0;
  auto close = [&] {
    if (!open) return;
    open = false;
    auto& r = out.back();
    if (seen > r.lines.size()) r.lines.push_back("... " + std::to_string(seen - r.lines.size()) + " more lines");
  };
  for (const auto& l : lines) {
    if (open && (l.usec > last + kKernelReportGapUsec || seen >= kKernelReportSpan)) close();
    const auto kind = kernel_report_kind(l.message);
    // An oops follows the BUG or fault it tells of: one report.
    const bool follow_on =
        open && kind &&
        (*kind == KernelReportKind::Oops ||
         (*kind == KernelReportKind::GeneralProtection && out.back().kind != KernelReportKind::GeneralProtection));
    if (kind && !follow_on) {
      close();
      out.push_back({*kind, l.usec, {}});
      open = true;
      seen = 0;
    }
    if (!open) continue;
    last = l.usec;
    ++seen;
    if (out.back().lines.size() < kKernelReportLines) out.back().lines.push_back(l.text);
    if (is_report_end(l.message) || (seen > 2 && is_report_rule(l.message))) close();
  }
  close();
  return out;
}

}  // namespace

std::string_view to_string(KernelReportKind kind) {
  switch (kind) {
    case KernelReportKind::Warning: return "WARNING";
    case KernelReportKind::Bug: return "BUG";
    case KernelReportKind::Oops: return "Oops";
    case KernelReportKind::Kasan: return "KASAN";
    case KernelReportKind::Ubsan: return "UBSAN";
    case KernelReportKind::Refcount: return "refcount_t";
    case KernelReportKind::Lockdep: return "lockdep";
    case KernelReportKind::HungTask: return "hung task";
    case KernelReportKind::RcuStall: return "RCU stall";
    case KernelReportKind::GeneralProtection: return "general protection fault";
    case KernelReportKind::Panic: return "kernel panic";
  }
  return "?";
}

std::optional<KernelReportKind> kernel_report_kind(std::string_view m) {
  using K = KernelReportKind;
  if (m.starts_with("Kernel panic - not syncing")) return K::Panic;
  if (m.starts_with("WARNING: ")) return kernel_warning_kind(m.substr(9));
  if (m.starts_with("[ INFO: possible ")) return K::Lockdep;  // lockdep before 4.x
  if (m.starts_with("BUG: KASAN: ")) return K::Kasan;
  if (m.starts_with("BUG: ") || m.starts_with("kernel BUG at ") || m.starts_with("watchdog: BUG: ")) return K::Bug;
  if (m.starts_with("Oops: ") || m.starts_with("Oops - "))
    return contains(m, "general protection fault") ? K::GeneralProtection : K::Oops;
  if (m.starts_with("general protection fault")) return K::GeneralProtection;
  if (m.starts_with("UBSAN: ")) return K::Ubsan;
  if (m.starts_with("refcount_t: ")) return K::Refcount;
  if (m.starts_with("INFO: task ") && contains(m, " blocked for more than ")) return K::HungTask;
  if ((m.starts_with("rcu: INFO: ") || m.starts_with("INFO: rcu") || m.starts_with("rcu_")) &&
      contains(m, "detected stall"))
    return K::RcuStall;
  return std::nullopt;
}

std::vector<KernelReport> find_kernel_reports(const std::vector<KernelRecord>& records) {
  std::vector<ReportLine> lines;
  for (const auto& r : records)
    if (r.from_kernel()) lines.push_back({r.usec, r.message, dmesg_line(r)});
  return group_kernel_reports(lines);
}

std::vector<KernelReport> find_kernel_reports_in_console(const std::vector<std::string>& console) {
  std::vector<ReportLine> lines;
  std::uint64_t usec = 0;
  for (const auto& text : console) {
    std::string_view m = text;
    // "[   12.345678] message"; with CONFIG_PRINTK_CALLER "[   12.345678][ T123] message".
    if (m.starts_with("[")) {
      const auto close = m.find(']');
      if (close != std::string_view::npos) {
        const std::string stamp(m.substr(1, close - 1));
        char* end = nullptr;
        const double secs = std::strtod(stamp.c_str(), &end);
        if (end != stamp.c_str()) {
          usec = static_cast<std::uint64_t>(secs * 1e6 + 0.5);
          m.remove_prefix(close + 1);
          if (m.starts_with("[") && m.find(']') != std::string_view::npos) m.remove_prefix(m.find(']') + 1);
          if (m.starts_with(" ")) m.remove_prefix(1);
        }
      }
    }
    lines.push_back({usec, std::string(m), text});
  }
  return group_kernel_reports(lines);
}

}  // namespace rxerun::sys
