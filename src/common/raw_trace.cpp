// STUB (replaced by branch raw-rec).
#include "common/raw_trace.hpp"

namespace kob::raw {

bool open(const std::string&) { return false; }
std::string path() { return ""; }
bool rename_to(const std::string&) { return false; }
void add_kv(std::string_view, std::string_view, std::string_view) {}
bool finish() { return false; }
void reset_for_test() {}

}  // namespace kob::raw
