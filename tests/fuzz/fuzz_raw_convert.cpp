// Fuzz target: a raw trace (.kob) through the whole of `kob convert`: the reader, the timeline,
// the summary and every format (perfetto, chrome, summary text and JSON, html, and otf2 unless
// KOB_FUZZ_NO_OTF2 is set), written into a scratch directory. The reader reads files only, so
// each input is written to one first. Any input must end in files or a refusal: no crash, no
// sanitizer finding, no exception out of the pipeline.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "common/session/run_outputs.hpp"
#include "common/support/log.hpp"
#include "common/timeline/raw_reader.hpp"
#include "kob/run_source.hpp"

namespace {

std::string scratch;  // this process's directory for the input and the outputs
std::uint32_t formats = kob::kFormatAll;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kob::log::set_level(kob::log::Level::Off);
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")) + "/kob-fuzz-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  scratch = dir;
  std::atexit([] {  // a normal end removes it; after a finding it stays, with the input that did it
    std::error_code ignored;
    std::filesystem::remove_all(scratch, ignored);
  });
  if (std::getenv("KOB_FUZZ_NO_OTF2")) formats &= ~kob::kFormatOtf2;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch + "/in.kob";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);

  kob::raw::Reader reader;
  std::string error;
  if (!reader.open(path, error)) return 0;
  const kob::Facts facts = kob::cli::run_facts(reader);
  if (kob::fact_value(facts, kob::fact::kSection, kob::fact::kHelpRun) == "1") return 0;
  const kob::RunData run = kob::cli::prepare_run(reader, facts, true);
  kob::OutputRequest req;
  req.prefix = scratch + "/out";
  req.formats = formats;
  req.print_written = false;
  req.trace_window = 64;  // small windows: more of the windowing code per input
  bool ok = true;
  kob::write_run_outputs(run, facts, req, &ok);
  (void)kob::summarize_run(run, facts);
  return 0;
}
