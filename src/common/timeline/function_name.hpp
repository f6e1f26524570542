// How a demangled C++ function is shown to people (tables, slice names, the HTML report): without
// its parameter list and return type, which make most names three times longer and get cut in
// their middle by a table's column. The full signature stays in the JSON and the trace's args.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace kob {

// "ns::C<T>::f(int, char) const" -> "ns::C<T>::f"; "void g<int>(int)" -> "g<int>";
// "main::{lambda(int)#1}::operator()(int) const" -> "main::{lambda(int)#1}::operator()";
// "f() [clone .cold]" -> "f". A name without a parameter list, or one it cannot read (unbalanced
// brackets), comes back whole.
std::string without_parameters(std::string_view demangled);

// Labels of functions at places (" file.cpp:12", "+0x1b9"), each function without its parameters
// unless a different function already has that label: overloads at one place stay apart, the
// later one shown with its parameter list.
class FunctionLabels {
 public:
  std::string label(const std::string& function, const std::string& where);

 private:
  std::unordered_map<std::string, std::string> function_of_;  // label -> the function it names
};

}  // namespace kob
