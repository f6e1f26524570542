// Names made fit for a terminal and a text table: control characters escaped, long names cut in
// the middle. The JSON files and the trace keep names whole; only text output goes through here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kob::text {

// Widest name column of the text summary; a table row stays within a fixed width whatever the names.
constexpr std::size_t kNameColumns = 60;

// Length of the valid UTF-8 sequence of 2 to 4 bytes starting at s[i], or 0 if none starts there.
std::size_t utf8_sequence(std::string_view s, std::size_t i);

// s with every character that could drive a terminal written out: tab, CR and LF as \t \r \n,
// other C0 controls, DEL and bytes that are not valid UTF-8 as \xHH, C1 controls as \u00HH.
// Printable ASCII and valid UTF-8 pass unchanged (a backslash too: this is for reading, not
// for parsing back).
std::string escape(std::string_view s);

// escape(s), cut to at most max_columns columns when longer (each character one column): the
// beginning and the end are kept with "..." between them. max_columns below 8 counts as 8.
std::string shorten(std::string_view s, std::size_t max_columns = kNameColumns);

// Columns of a text that is already escaped (UTF-8 characters, each one column).
std::size_t columns(std::string_view s);

}  // namespace kob::text
