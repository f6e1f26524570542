#include "common/timeline/filter_sink.hpp"

namespace kob {

FilterSink::FilterSink(SpanSink& next, const std::string& include, const std::string& exclude)
    : next_(next), filter_(include, exclude) {}

void FilterSink::kernel(const KernelSpan& k) {
  if (filter_.active() && !filter_.keep(k.name)) {
    ++kernels_;
    return;
  }
  next_.kernel(k);
}

void FilterSink::region(const RegionSpan& r) {
  if (filter_.active() && !filter_.keep(r.name)) {
    ++regions_;
    return;
  }
  next_.region(r);
}

void FilterSink::finish(const Timeline& rest) {
  if (kernels_ == 0 && regions_ == 0) {
    next_.finish(rest);
    return;
  }
  // Only the tail (no spans) is copied: tracks, devices, problems.
  Timeline t = rest;
  t.filtered_kernels += kernels_;
  t.filtered_regions += regions_;
  next_.finish(t);
}

}  // namespace kob
