#include "common/timeline/function_name.hpp"

#include <array>

namespace kob {

namespace {

// The qualifiers and clone marks that may follow a parameter list.
std::string_view without_trailers(std::string_view s) {
  static constexpr std::array<std::string_view, 6> kTrailers{" const", " volatile", " &&", " &", " noexcept", " "};
  for (bool again = true; again;) {
    again = false;
    if (s.ends_with("]")) {  // " [clone .cold]", " [clone .isra.0]"
      const std::size_t open = s.rfind(" [");
      if (open == std::string_view::npos) return s;
      s = s.substr(0, open);
      again = true;
      continue;
    }
    for (std::string_view t : kTrailers) {
      if (s.ends_with(t)) {
        s.remove_suffix(t.size());
        again = true;
        break;
      }
    }
  }
  return s;
}

// Where the parameter list that closes s opens; npos when its brackets do not balance.
std::size_t parameter_list_at(std::string_view s) {
  int depth = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') {
      ++depth;
    } else if (s[i] == '(') {
      if (--depth == 0) return i;
      if (depth < 0) return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

// A template function's demangled name starts with its return type ("void ns::f<int>"): the
// name is what follows the last space outside brackets. Operators keep their spaces. Empty when
// the brackets do not balance.
std::string_view without_return_type(std::string_view s) {
  if (s.find("operator") != std::string_view::npos) return s;
  int depth = 0;
  std::size_t last_space = std::string_view::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '<' || c == '{' || c == '[') ++depth;
    else if (c == ')' || c == '>' || c == '}' || c == ']') --depth;
    else if (c == ' ' && depth == 0) last_space = i;
    if (depth < 0) return {};
  }
  if (depth != 0) return {};
  if (last_space == std::string_view::npos || last_space + 1 == s.size()) return s;
  return s.substr(last_space + 1);
}

}  // namespace

std::string without_parameters(std::string_view demangled) {
  const std::string_view s = without_trailers(demangled);
  if (s.empty() || s.back() != ')') return std::string(demangled);
  const std::size_t open = parameter_list_at(s);
  if (open == std::string_view::npos || open == 0) return std::string(demangled);
  const std::string_view name = without_return_type(s.substr(0, open));
  return name.empty() ? std::string(demangled) : std::string(name);
}

std::string FunctionLabels::label(const std::string& function, const std::string& where) {
  std::string shown = without_parameters(function) + where;
  auto [it, fresh] = function_of_.try_emplace(shown, function);
  if (!fresh && it->second != function) shown = function + where;
  return shown;
}

}  // namespace kob
