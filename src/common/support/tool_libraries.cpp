#include "common/support/tool_libraries.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

namespace kob::tool_libraries {

std::vector<std::string> entries(const char* list, char separator) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  std::string item;
  for (const char* p = list;; ++p) {
    if (*p == separator || *p == '\0') {
      if (!item.empty()) out.push_back(item);
      item.clear();
      if (*p == '\0') break;
    } else {
      item += *p;
    }
  }
  return out;
}

bool same_file(const char* a, const char* b) {
  struct stat sa {}, sb {};
  return a != nullptr && b != nullptr && ::stat(a, &sa) == 0 && ::stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

const char* own_path() {
  Dl_info info{};
  return dladdr(reinterpret_cast<void*>(&own_path), &info) != 0 ? info.dli_fname : nullptr;
}

}  // namespace kob::tool_libraries
