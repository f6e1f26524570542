// The small JSON documents (summary.json, kob diff --json, the merged summary, the HTML report's
// data, otherData) are built as nlohmann::ordered_json values: members stay in the order they are
// added. Their text comes from dump() here, which never throws: bytes of names that are not UTF-8
// become U+FFFD, as in the trace writers (common/support/json.hpp).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kob::json {

using Doc = nlohmann::ordered_json;

// The document's text; indent < 0: one line, else that many spaces per level.
std::string dump(const Doc& d, int indent = -1);

// A ratio or rate as the documents show it: 6 significant digits, 0 when not finite.
double figure(double v);

// ns as microseconds (ns / 1000: three decimals at most).
double us(std::uint64_t ns);

// A document made elsewhere as text (otherData): parsed, or null when it is not JSON.
Doc parse_or_null(const std::string& text);

}  // namespace kob::json
