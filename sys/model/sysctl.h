#pragma once
// One namespace's kernel parameters, in memory (sys/model/links.h says why
// sys/model/ exists): a key names a file under /proc/sys, so
// "net.ipv4.ip_forward" and "net/ipv4/ip_forward" are one entry, and a write
// changes a file that is there but cannot make one.

#include <map>
#include <string>

#include "base/result.h"

namespace rxerun::sys {

class SysctlModel {
 public:
  // The value of the entry `key` names, whichever separator it uses; null when none.
  std::string* find(const std::string& key);
  // ENOENT when no such key.
  Result<std::string> value_of(const std::string& key);
  // ENOENT when no such key: /proc/sys has no such file, and writing makes none.
  Result<void> store(const std::string& key, const std::string& value);
  // A key as the host has it, with its value.
  void add_key(const std::string& key, const std::string& value);

  // Open to the tests, which put the host's values here.
  std::map<std::string, std::string> values;
};

}  // namespace rxerun::sys
