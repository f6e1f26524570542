// Numbers with a fixed count of decimals for the text outputs, as printf's "%.Nf" writes them
// (the C locale), by std::to_chars: printf took about 1,800 instructions a number, a quarter of a
// small conversion's summary text.
#pragma once

#include <string>

namespace kob::text {

// v with `decimals` digits after the point, rounded as printf rounds ("%.*f"); with plus, a '+'
// before a value whose sign bit is clear ("%+.*f"). decimals: 0 to 17.
std::string fixed(double v, int decimals, bool plus = false);

// fixed(v, decimals) then suffix ("%.1f%%" is fixed(v, 1) + "%").
std::string fixed(double v, int decimals, const char* suffix);

}  // namespace kob::text
