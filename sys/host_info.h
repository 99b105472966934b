#pragma once
// Facts about the machine a run happened on, for reports.

#include <nlohmann/json.hpp>

namespace rxerun::sys {

// kernel (uname release), machine, hostname.
nlohmann::json host_facts();

// True when `fd` is a terminal.
bool is_terminal(int fd);

}  // namespace rxerun::sys
