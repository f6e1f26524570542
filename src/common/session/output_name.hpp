// The names of the output files: placeholders in --output, the default prefix, and the suffix
// that keeps processes sharing one prefix (MPI ranks, forked children) from overwriting each other.
#pragma once

#include <string>
#include <string_view>

namespace kob::output_name {

// The launchers' variables that hold the MPI rank, in the order they are read.
inline constexpr const char* kRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK",
                                                 "SLURM_PROCID"};

// The rank from the first of kRankVariables that holds a number >= 0, else -1.
int rank_from_environment(const char* (*getenv)(const char*));

// What the placeholders stand for in this process.
struct Context {
  long pid = 0;
  int rank = -1;  // from the launcher's environment; -1 when none names one
  std::string host;
  std::string exe;               // executable name, for the default prefix
  bool forked_child = false;     // a fork() child of the process that started the tool
  const char* (*getenv)(const char*) = nullptr;  // std::getenv unless a test gives its own
};

// Checks the placeholders of an --output value: %p %r %h %q{VAR} %%. On a bad one returns false
// and sets error to one line naming it and what is accepted.
bool check(std::string_view pattern, std::string& error);

// The pattern with its placeholders replaced (%r is 0 when no rank is known, %q{VAR} of an unset
// variable is empty). Assumes check() passed; a bad placeholder is copied as it is.
std::string expand(std::string_view pattern, const Context& ctx);

// kob-<exe>-<pid>[-r<rank>]
std::string default_prefix(const Context& ctx);

struct Resolved {
  std::string prefix;     // the files are prefix + ".trace.json" and so on
  std::string directory;  // the folder to create first (DIR/ of --output=DIR/ or DIR/NAME); "": none named
  std::string note;       // non-empty when a suffix was added: one line to tell the user
};

// The final prefix for --output=pattern (empty: the default). DIR/ gives the default names in
// DIR. A known rank adds -r<rank> unless the pattern has %r, %p or %q{} of a rank variable; a
// forked child adds -<pid> unless the pattern has %p.
Resolved resolve(std::string_view pattern, const Context& ctx);

}  // namespace kob::output_name
