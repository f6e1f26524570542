#include "common/record/intern.hpp"

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "common/support/deferred_signal.hpp"
#include "common/support/log.hpp"

namespace kob {

namespace {
struct Storage {
  std::mutex mu;
  std::deque<std::string> texts;  // deque: growth never moves existing strings
  std::vector<const char*> by_id;
  std::unordered_map<std::string_view, std::uint32_t> ids;
  std::uint64_t lookups = 0;
  Storage() {
    texts.emplace_back("<null>");
    by_id.push_back(texts.back().c_str());
    ids.emplace(texts.back(), 0);
  }
};
std::atomic<void (*)(std::uint32_t, std::string_view)> g_listener{nullptr};

Storage& storage() {
  static Storage* s = new Storage();  // never destroyed: writers may run during exit
  return *s;
}
}  // namespace

std::uint32_t InternTable::intern(std::string_view s, const char** stable) {
  Storage& st = storage();
  const deferred_signal::Scope no_term_signal;  // the lock, then the raw trace's file lock
  std::lock_guard<std::mutex> lock(st.mu);
  ++st.lookups;
  auto it = st.ids.find(s);
  if (it != st.ids.end()) {
    if (stable) *stable = st.by_id[it->second];
    return it->second;
  }
  st.texts.emplace_back(s);
  const std::string& text = st.texts.back();
  auto id = static_cast<std::uint32_t>(st.by_id.size());
  st.by_id.push_back(text.c_str());
  st.ids.emplace(std::string_view(text), id);
  if (auto fn = g_listener.load(std::memory_order_acquire)) fn(id, text);
  if (stable) *stable = text.c_str();
  return id;
}

void InternTable::define(std::uint32_t id, std::string_view text) {
  Storage& st = storage();
  std::lock_guard<std::mutex> lock(st.mu);
  while (st.by_id.size() <= id) {  // placeholders are not looked up by text
    st.texts.emplace_back("<name " + std::to_string(st.by_id.size()) + " not in the raw trace>");
    st.by_id.push_back(st.texts.back().c_str());
  }
  if (text == st.by_id[id]) return;
  st.texts.emplace_back(text);
  const std::string& s = st.texts.back();
  auto it = st.ids.find(std::string_view(st.by_id[id]));
  if (it != st.ids.end() && it->second == id) st.ids.erase(it);
  st.by_id[id] = s.c_str();
  st.ids.emplace(std::string_view(s), id);
}

const char* InternTable::str(std::uint32_t id) const {
  Storage& st = storage();
  std::lock_guard<std::mutex> lock(st.mu);
  return id < st.by_id.size() ? st.by_id[id] : "";
}

std::size_t InternTable::size() const {
  Storage& st = storage();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.by_id.size();
}

std::uint64_t InternTable::lookups() const {
  Storage& st = storage();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.lookups;
}

std::vector<std::string_view> InternTable::snapshot() const {
  Storage& st = storage();
  std::lock_guard<std::mutex> lock(st.mu);
  std::vector<std::string_view> out;
  out.reserve(st.by_id.size());
  for (const char* p : st.by_id) out.emplace_back(p);
  return out;
}

InternTable& names() {
  static InternTable t;
  return t;
}

void set_intern_listener(void (*fn)(std::uint32_t, std::string_view)) { g_listener.store(fn, std::memory_order_release); }

void intern_before_fork() { storage().mu.lock(); }
void intern_after_fork() { storage().mu.unlock(); }

std::uint32_t InternCache::null_name() {
  log::warn_once(log::Once::NullName, "a hook passed a null name; it is recorded as \"<null>\"");
  return InternTable::kNullName;
}

std::uint32_t InternCache::miss(const char* s, Slot& slot) {
  std::size_t way = kWays - 1;  // the way the new text takes (the oldest) unless one holds it
  const char* text = nullptr;
  std::uint32_t id = 0;
  if (slot.key == s) {
    for (std::size_t w = 1; w < kWays; ++w) {
      if (slot.text[w] != nullptr && same_text(slot.text[w], s)) {
        way = w;
        text = slot.text[w];
        id = slot.id[w];
        break;
      }
    }
  } else {
    slot = Slot{};
    slot.key = s;
  }
  if (text == nullptr) id = names().intern(s, &text);
  for (std::size_t w = way; w > 0; --w) {
    slot.text[w] = slot.text[w - 1];
    slot.id[w] = slot.id[w - 1];
  }
  slot.text[0] = text;
  slot.id[0] = id;
  return id;
}

}  // namespace kob
