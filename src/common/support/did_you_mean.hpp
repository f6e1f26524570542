// "did you mean": the known word nearest to a mistyped one (an option name, a format), by edit
// distance with adjacent transpositions (--fromat is one edit from --format).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kob::text {

// Insertions, deletions, substitutions and swaps of two neighbours needed to turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to word when it is near enough to be what was meant (at most 2 edits, and
// fewer than half the word's length); "" otherwise. Ties: the first candidate.
std::string nearest(std::string_view word, const std::vector<std::string_view>& candidates);

// " (did you mean 'X'?)" for nearest(word, candidates), "" when none is near.
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates, std::string_view prefix = "");

}  // namespace kob::text
