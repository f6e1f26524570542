// STUB (replaced by branch raw-rec): the raw trace writer's API as agreed in the issue 8 split.
// Every call does nothing; open() and finish() return false, so callers take their fallback path.
#pragma once

#include <string>
#include <string_view>

namespace kob::raw {

bool open(const std::string& path);
std::string path();
bool rename_to(const std::string& new_path);
void add_kv(std::string_view section, std::string_view key, std::string_view value);
bool finish();
void reset_for_test();

}  // namespace kob::raw
