#include "common/session/run_report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kob::run_report {

void append(long pid, const std::vector<std::string>& files) {
  const char* path = std::getenv(kVariable);
  if (path == nullptr || *path == '\0') return;
  std::string line = std::to_string(pid);
  for (const std::string& f : files) {
    if (f.find_first_of("\t\n") != std::string::npos) continue;  // not representable on the line
    line += '\t' + f;
  }
  line += '\n';
  const int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = write(fd, line.data(), line.size());
  (void)n;
  close(fd);
}

std::vector<Entry> read(const std::string& path) {
  std::vector<Entry> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string field;
    Entry e;
    if (!std::getline(fields, field, '\t')) continue;
    e.pid = std::strtol(field.c_str(), nullptr, 10);
    while (std::getline(fields, field, '\t'))
      if (!field.empty()) e.files.push_back(field);
    out.push_back(e);
  }
  return out;
}

}  // namespace kob::run_report
