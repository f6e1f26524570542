// Demangled names as people read them: no parameter list, no return type, whatever brackets the
// name itself holds; anything unreadable whole.
#include <doctest/doctest.h>

#include "common/timeline/function_name.hpp"

using kob::without_parameters;

TEST_CASE("function names: the parameter list, qualifiers and clone marks go") {
  CHECK(without_parameters("Kokkos::OpenMP::impl_initialize(int)") == "Kokkos::OpenMP::impl_initialize");
  CHECK(without_parameters("Kokkos::Impl::OpenMPExec::resize_thread_data(unsigned long, unsigned long, unsigned long, "
                           "unsigned long)") == "Kokkos::Impl::OpenMPExec::resize_thread_data");
  CHECK(without_parameters("CalcPressureForElems(double*, double*, double, int, int*)") == "CalcPressureForElems");
  CHECK(without_parameters("Kokkos::OpenMP::impl_finalize()") == "Kokkos::OpenMP::impl_finalize");
  CHECK(without_parameters("ns::C<int>::get() const &") == "ns::C<int>::get");
  CHECK(without_parameters("f(int) [clone .cold]") == "f");
  CHECK(without_parameters("g(int) const [clone .isra.0] [clone .cold]") == "g");
  CHECK(without_parameters("apply(void (*)(int), std::function<void (double)>)") == "apply");
}

TEST_CASE("function names: return types of templates go, brackets inside the name stay") {
  CHECK(without_parameters("void Kokkos::Impl::run<Functor, 3>(Functor const&)") == "Kokkos::Impl::run<Functor, 3>");
  CHECK(without_parameters("unsigned long ns::size<std::pair<int, int> >(int)") == "ns::size<std::pair<int, int> >");
  CHECK(without_parameters("(anonymous namespace)::step(double)") == "(anonymous namespace)::step");
  CHECK(without_parameters("main::{lambda(int)#1}::operator()(int) const") == "main::{lambda(int)#1}::operator()");
  CHECK(without_parameters("Foo::operator()()") == "Foo::operator()");
  CHECK(without_parameters("Foo::operator unsigned long() const") == "Foo::operator unsigned long");
  CHECK(without_parameters("Foo::operator new(unsigned long)") == "Foo::operator new");
}

TEST_CASE("function names: no parameter list, or unbalanced brackets, come back whole") {
  CHECK(without_parameters("main") == "main");
  CHECK(without_parameters("main.omp_outlined") == "main.omp_outlined");
  CHECK(without_parameters("ns::f") == "ns::f");
  CHECK(without_parameters("") == "");
  CHECK(without_parameters("f(int))") == "f(int))");
  CHECK(without_parameters("(int)") == "(int)");
  CHECK(without_parameters("broken>(int)") == "broken>(int)");
}

TEST_CASE("function labels: overloads that would read the same at one place keep their parameters") {
  kob::FunctionLabels labels;
  CHECK(labels.label("ns::f(int)", " a.cpp:10") == "ns::f a.cpp:10");
  CHECK(labels.label("ns::f(double)", " a.cpp:20") == "ns::f a.cpp:20");  // another place: apart already
  CHECK(labels.label("ns::f(double)", " a.cpp:10") == "ns::f(double) a.cpp:10");
  CHECK(labels.label("ns::f(int)", " a.cpp:10") == "ns::f a.cpp:10");  // the first keeps its label
  CHECK(labels.label("ns::f(int)", "+0x10") == "ns::f+0x10");
}
