// Perfetto .pftrace output from a synthetic timeline, read back with protozero's reader.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <tuple>
#include <string>
#include <vector>

#include <protozero/pbf_reader.hpp>

#include "common/formats/perfetto_writer.hpp"
#include "helpers.hpp"

using kob::Timeline;
using kob_test::nm;

namespace {

struct Annotation {
  std::string key;
  int kind = 0;  // 2 bool, 3 uint, 4 int, 5 double, 6 string
  std::uint64_t u = 0;
  std::string s;
};

struct Ev {
  std::uint64_t ts = 0, track = 0;
  std::uint32_t type = 0, flags = 0;
  std::string cat, name;
  std::vector<Annotation> args;
  std::vector<std::uint64_t> flows, terminating;
  std::int64_t value = 0;
};

struct Desc {
  std::string name;
  std::uint64_t parent = 0;
  bool counter = false, process = false, thread = false;
  std::int32_t pid = 0, tid = 0;
};

// The trace decoded: field numbers of the public Perfetto schema, spelled out here on purpose
// (not taken from the writer's header) so that a wrong number there fails this test.
struct Decoded {
  std::vector<std::uint32_t> packet_flags;
  std::map<std::uint64_t, Desc> tracks;
  std::vector<Ev> events;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::string> interned;  // (sequence, table, iid)
  int interned_entries = 0;
  bool duplicate_interning = false;  // an id sent twice on one sequence
  bool duplicate_track = false;
  // Packets that follow their sequence's defaults without SEQ_NEEDS_INCREMENTAL_STATE: a reader
  // that lost the state would read them with none (the clock snapshot after the defaults too).
  int unflagged_after_defaults = 0;
  std::vector<std::uint32_t> clock_snapshot_flags;

  // Per packet sequence: its default track and clock, and its incremental clocks' values.
  struct SeqState {
    std::uint64_t default_track = 0;
    std::uint32_t default_clock = 0;
    std::map<std::uint32_t, std::uint64_t> clocks;  // incremental clock id -> its value
    std::map<std::uint32_t, bool> incremental;
    bool has_defaults = false;
  };
  std::map<std::uint32_t, SeqState> seqs;
  int absolute_packets = 0;     // packets with a time of their own on a builtin clock
  int incremental_packets = 0;  // packets with the time since their sequence's previous one

  explicit Decoded(const std::string& data) {
    protozero::pbf_reader trace(data);
    while (trace.next(1)) {
      protozero::pbf_reader pk = trace.get_message();
      std::uint64_t ts = 0;
      bool has_ts = false;
      std::uint32_t flags = 0, seq_id = 0, clock_id = 0;
      std::string te_blob, td_blob, defaults_blob, snapshot_blob;
      std::vector<std::string> interned_blobs;
      while (pk.next()) {
        switch (pk.tag()) {
          case 8: ts = pk.get_uint64(), has_ts = true; break;
          case 10: seq_id = pk.get_uint32(); break;
          case 13: flags = pk.get_uint32(); break;
          case 58: clock_id = pk.get_uint32(); break;
          case 59: defaults_blob = pk.get_string(); break;
          case 6: snapshot_blob = pk.get_string(); break;
          case 11: te_blob = pk.get_string(); break;
          case 12: interned_blobs.push_back(pk.get_string()); break;
          case 60: td_blob = pk.get_string(); break;
          default: pk.skip();
        }
      }
      packet_flags.push_back(flags);
      if (flags & 1) {
        seqs[seq_id] = SeqState{};
        for (auto it = interned.begin(); it != interned.end();) it = std::get<0>(it->first) == seq_id ? interned.erase(it) : std::next(it);
      }
      SeqState& st = seqs[seq_id];
      if (st.has_defaults && !(flags & 2)) ++unflagged_after_defaults;
      if (!snapshot_blob.empty()) clock_snapshot_flags.push_back(flags);
      if (!defaults_blob.empty()) {
        st.has_defaults = true;
        protozero::pbf_reader dr(defaults_blob);
        while (dr.next()) {
          if (dr.tag() == 58) {
            st.default_clock = dr.get_uint32();
          } else if (dr.tag() == 11) {
            protozero::pbf_reader ted = dr.get_message();
            while (ted.next()) {
              if (ted.tag() == 11) st.default_track = ted.get_uint64();
              else ted.skip();
            }
          } else {
            dr.skip();
          }
        }
      }
      if (!snapshot_blob.empty()) {
        protozero::pbf_reader sr(snapshot_blob);
        while (sr.next()) {
          if (sr.tag() != 1) {
            sr.skip();
            continue;
          }
          protozero::pbf_reader c = sr.get_message();
          std::uint32_t id = 0;
          std::uint64_t value = 0;
          bool inc = false;
          while (c.next()) {
            if (c.tag() == 1) id = c.get_uint32();
            else if (c.tag() == 2) value = c.get_uint64();
            else if (c.tag() == 3) inc = c.get_bool();
            else c.skip();
          }
          if (id >= 64) {
            st.clocks[id] = value;
            st.incremental[id] = inc;
          }
        }
      }
      if (has_ts) {
        const std::uint32_t clock = clock_id ? clock_id : st.default_clock;
        if (clock >= 64 && st.incremental[clock]) {
          ts = st.clocks[clock] += ts;
          ++incremental_packets;
        } else {
          CHECK(clock == 5);  // CLOCK_MONOTONIC_RAW, the Timeline's clock
          ++absolute_packets;
        }
      }
      for (const std::string& b : interned_blobs) {
        protozero::pbf_reader in(b);
        while (in.next()) {
          const std::uint32_t field = in.tag();
          protozero::pbf_reader e = in.get_message();
          std::uint64_t iid = 0;
          std::string name;
          while (e.next()) {
            if (e.tag() == 1) iid = e.get_uint64();
            else if (e.tag() == 2) name = e.get_string();
            else e.skip();
          }
          if (interned.count({seq_id, field, iid})) duplicate_interning = true;
          interned[{seq_id, field, iid}] = name;
          ++interned_entries;
        }
      }
      if (!td_blob.empty()) {
        protozero::pbf_reader td(td_blob);
        std::uint64_t uuid = 0;
        Desc d;
        while (td.next()) {
          switch (td.tag()) {
            case 1: uuid = td.get_uint64(); break;
            case 2: d.name = td.get_string(); break;
            case 5: d.parent = td.get_uint64(); break;
            case 8: d.counter = true; td.skip(); break;
            case 3: {
              d.process = true;
              protozero::pbf_reader p = td.get_message();
              while (p.next()) {
                if (p.tag() == 1) d.pid = p.get_int32();
                else if (p.tag() == 6) d.name = p.get_string();
                else p.skip();
              }
              break;
            }
            case 4: {
              d.thread = true;
              protozero::pbf_reader p = td.get_message();
              while (p.next()) {
                if (p.tag() == 1) d.pid = p.get_int32();
                else if (p.tag() == 2) d.tid = p.get_int32();
                else if (p.tag() == 5) d.name = p.get_string();
                else p.skip();
              }
              break;
            }
            default: td.skip();
          }
        }
        if (tracks.count(uuid)) duplicate_track = true;
        tracks[uuid] = d;
      }
      if (!te_blob.empty()) {
        protozero::pbf_reader te(te_blob);
        Ev ev;
        ev.ts = ts;
        ev.flags = flags;
        ev.track = st.default_track;
        while (te.next()) {
          switch (te.tag()) {
            case 9: ev.type = te.get_uint32(); break;
            case 11: ev.track = te.get_uint64(); break;
            case 3: ev.cat = interned[{seq_id, 1, te.get_uint64()}]; break;
            case 10: ev.name = interned[{seq_id, 2, te.get_uint64()}]; break;
            case 30: ev.value = te.get_int64(); break;
            case 47: ev.flows.push_back(te.get_fixed64()); break;
            case 48: ev.terminating.push_back(te.get_fixed64()); break;
            case 4: {
              protozero::pbf_reader a = te.get_message();
              Annotation an;
              while (a.next()) {
                const std::uint32_t f = a.tag();
                if (f == 1) an.key = interned[{seq_id, 3, a.get_uint64()}];
                else if (f == 2) an.kind = 2, an.u = a.get_bool();
                else if (f == 3) an.kind = 3, an.u = a.get_uint64();
                else if (f == 4) an.kind = 4, an.u = static_cast<std::uint64_t>(a.get_int64());
                else if (f == 6) an.kind = 6, an.s = a.get_string();
                else if (f == 17) an.kind = 6, an.s = interned[{seq_id, 29, a.get_uint64()}];  // string_value_iid
                else a.skip();
              }
              ev.args.push_back(an);
              break;
            }
            default: te.skip();
          }
        }
        events.push_back(ev);
      }
    }
  }

  const Ev* find(std::uint32_t type, const std::string& name) const {
    for (const Ev& e : events)
      if (e.type == type && e.name == name) return &e;
    return nullptr;
  }
  const Annotation* arg(const Ev& e, const std::string& key) const {
    for (const Annotation& a : e.args)
      if (a.key == key) return &a;
    return nullptr;
  }
};

std::string pftrace_bytes(const Timeline& t, bool* ok, std::uint64_t* clipped = nullptr) {
  const std::string path = kob_test::temp_path("trace.pftrace");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "";
  kob::TraceInfo info;
  info.pid = 4242;
  info.process_name = "unit \"proc\"";
  info.other_data_json = "{}";
  *ok = kob::write_perfetto_trace(f, t, info, clipped);
  std::fclose(f);
  std::ifstream in(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return data;
}

using kob_test::span;

}  // namespace

TEST_CASE("perfetto writer: tracks, nested slices, interning, args, counters, sections, flows") {
  Timeline t;
  t.tracks = {kob::Track{0, 1001, 1}, kob::Track{1, 1002, 0}};
  t.t0 = 50;
  t.t_end = 700;
  auto r = span<kob::RegionSpan>(0, 100, 500);
  r.name = nm("pw_region");
  r.path = "pw_region";
  t.regions.push_back(r);
  auto k = span<kob::KernelSpan>(0, 200, 600);  // outlives its region: cut at 500, as in the Chrome trace
  k.name = nm("pw_kernel");
  k.id = 7;
  k.region = "pw_region";
  t.kernels.push_back(k);
  auto k2 = span<kob::KernelSpan>(1, 300, 400);
  k2.name = nm("pw_kernel");  // the same name again: interned once
  k2.id = 8;
  t.kernels.push_back(k2);
  auto p = span<kob::OmpParallelSpan>(0, 250, 450);  // opened by kernel 7: a flow from it
  p.id = 11;
  p.kernel = 7;
  t.omp_parallels.push_back(p);
  auto sec = span<kob::SectionSpan>(0, 60, 650);
  sec.section = 4;
  sec.name = nm("pw_section");
  sec.end_track = 1;
  t.sections.push_back(sec);
  kob::MemoryEvent m;
  m.time = 70;
  m.track = 1;
  m.space = nm("Host");
  m.name = nm("pw_view");
  m.bytes = 128;
  m.space_level = 128;
  t.memory.push_back(m);
  t.events.push_back({90, 0, nm("pw_event")});
  t.events.push_back({80, 0, nm("pw_event_early")});  // out of time order: an absolute time

  bool ok = false;
  std::uint64_t clipped = 99;
  const Decoded d(pftrace_bytes(t, &ok, &clipped));
  CHECK(ok);
  CHECK(clipped == 1);  // the kernel cut at its region's end, counted as the Chrome writer counts it
  REQUIRE(!d.packet_flags.empty());
  CHECK(d.packet_flags[0] == 1);  // SEQ_INCREMENTAL_STATE_CLEARED
  CHECK(d.unflagged_after_defaults == 0);
  REQUIRE(!d.clock_snapshot_flags.empty());
  for (std::uint32_t flags : d.clock_snapshot_flags) CHECK(flags == 2);  // SEQ_NEEDS_INCREMENTAL_STATE
  CHECK_FALSE(d.duplicate_track);

  // Process and thread tracks.
  std::uint64_t proc = 0, th0 = 0, th1 = 0;
  for (const auto& [uuid, desc] : d.tracks) {
    if (desc.process) {
      proc = uuid;
      CHECK(desc.pid == 4242);
      CHECK(desc.name == "unit \"proc\"");
    }
    if (desc.thread && desc.tid == 1001) {
      th0 = uuid;
      CHECK(desc.name == "omp thread 0");
      CHECK(desc.pid == 4242);
    }
    if (desc.thread && desc.tid == 1002) {
      th1 = uuid;
      CHECK(desc.name == "thread 1");
    }
  }
  CHECK(proc != 0);
  CHECK(th0 != 0);
  CHECK(th1 != 0);
  for (const Ev& e : d.events) CHECK(d.tracks.count(e.track) == 1);

  // Track 0: region [100,500] > kernel [200,500] (cut) > parallel [250,450], in time order.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> seq0;
  for (const Ev& e : d.events)
    if (e.track == th0 && (e.type == 1 || e.type == 2)) seq0.push_back({e.type, e.ts});
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> want0 = {{1, 100}, {1, 200}, {1, 250}, {2, 450}, {2, 500}, {2, 500}};
  CHECK(seq0 == want0);
  for (const Ev& e : d.events)
    if (e.type != 2 && e.type != 4 && &e != &d.events.front()) CHECK(e.flags == 2);  // SEQ_NEEDS_INCREMENTAL_STATE

  // Names and categories interned once each.
  int kernel_names = 0;
  for (const auto& [key, name] : d.interned) kernel_names += std::get<1>(key) == 2 && name == "pw_kernel";
  CHECK(kernel_names == 2);  // once on each thread's slice sequence
  CHECK_FALSE(d.duplicate_interning);
  CHECK(d.interned_entries == static_cast<int>(d.interned.size()));

  // Times since the sequence's last packet, but for the one instant earlier than its predecessor.
  CHECK(d.incremental_packets > 10);
  CHECK(d.absolute_packets == 1);
  const Ev* early = d.find(3, "pw_event_early");
  REQUIRE(early != nullptr);
  CHECK(early->ts == 80);
  CHECK(early->track == th0);

  // Args as debug annotations.
  const Ev* kb = d.find(1, "pw_kernel");
  REQUIRE(kb != nullptr);
  CHECK(kb->cat == "kokkos.kernel");
  REQUIRE(d.arg(*kb, "id") != nullptr);
  CHECK(d.arg(*kb, "id")->kind == 3);
  CHECK(d.arg(*kb, "id")->u == 7);
  REQUIRE(d.arg(*kb, "region") != nullptr);
  CHECK(d.arg(*kb, "region")->s == "pw_region");
  CHECK(d.arg(*kb, "kind")->s == "parallel_for");

  // Flow: kernel 7's begin -> the parallel region's begin.
  const Ev* pb = d.find(1, "parallel");
  REQUIRE(pb != nullptr);
  REQUIRE(kb->flows.size() == 1);
  CHECK(pb->terminating == kb->flows);
  CHECK(pb->flows.empty());

  // Counter on a counter track of the process; instant on its thread.
  int counters = 0;
  for (const Ev& e : d.events) {
    if (e.type != 4) continue;
    ++counters;
    CHECK(e.value == 128);
    CHECK(e.ts == 70);
    CHECK(d.tracks.at(e.track).counter);
    CHECK(d.tracks.at(e.track).name == "memory Host");
    CHECK(d.tracks.at(e.track).parent == proc);
  }
  CHECK(counters == 1);
  const Ev* inst = d.find(3, "pw_event");
  REQUIRE(inst != nullptr);
  CHECK(inst->track == th0);
  CHECK(inst->ts == 90);
  const Ev* alloc = d.find(3, "pw_view");
  REQUIRE(alloc != nullptr);
  CHECK(alloc->track == th1);

  // The section: its own track, begin at 60, end at 650.
  const Ev* sb = d.find(1, "pw_section");
  REQUIRE(sb != nullptr);
  CHECK(sb->ts == 60);
  CHECK(sb->track != th0);
  CHECK(d.tracks.at(sb->track).parent == proc);
  int ends = 0;
  for (const Ev& e : d.events) {
    if (e.type != 2 || e.track != sb->track) continue;
    ++ends;
    CHECK(e.ts == 650);
  }
  CHECK(ends == 1);
}

TEST_CASE("perfetto writer: empty timeline is a process track alone") {
  Timeline t;
  bool ok = false;
  const Decoded d(pftrace_bytes(t, &ok));
  CHECK(ok);
  CHECK(d.events.empty());
  REQUIRE(d.tracks.size() == 1);
  CHECK(d.tracks.begin()->second.process);
}

TEST_CASE("perfetto writer: a write error is reported") {
  Timeline t;
  t.tracks = {kob::Track{0, 1001, 1}};
  t.events.push_back({90, 0, nm("pw_event")});
  const std::string path = kob_test::temp_path("ro.pftrace");
  std::ofstream(path) << "";
  std::FILE* f = std::fopen(path.c_str(), "rb");  // not writable
  REQUIRE(f != nullptr);
  kob::TraceInfo info;
  info.other_data_json = "{}";
  CHECK_FALSE(kob::write_perfetto_trace(f, t, info));
  std::fclose(f);
  std::filesystem::remove(path);
}

TEST_CASE("perfetto writer: names and values known by address are the texts given, also when the next process's differ at the same address") {
  const std::string path = kob_test::temp_path("fixed.pftrace");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  {
    auto sink = kob::make_perfetto_sink(f);
    // One buffer for both processes' texts, as a later process's names may sit where the earlier
    // one's were: each process's conversion owns its texts only while it lasts.
    std::string name(64, '\0'), value(64, '\0');
    for (int process = 0; process < 2; ++process) {
      // The same length too: the address and the length are what the writer knows them by.
      name.assign(process == 0 ? "kernel of process 1" : "kernel of process 2");
      value.assign(process == 0 ? "value 1" : "value 2");
      kob_test::feed_fixed_texts(*sink, process, name, value);
      if (process == 1) {  // the first process's name again, from elsewhere, on the same track
        const std::string again = "kernel of process 1";
        kob::trace::Args args;
        args.shared_fixed("where", value);
        kob::trace::Event e;
        e.phase = kob::trace::Phase::Slice;
        e.cat = "kokkos.kernel";
        e.name = again;
        e.track = 0;
        e.ts = 3000;
        e.end = 3050;
        e.args = &args;
        sink->event(e);
      }
      sink->window_end();
    }
    CHECK(sink->finish(""));
  }
  std::fclose(f);
  std::ifstream in(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  const Decoded d(data);
  std::map<std::string, int> names, values;
  for (const Ev& e : d.events) {
    if (e.type != 1) continue;
    ++names[e.name];
    REQUIRE(e.args.size() == 1);
    ++values[e.args[0].s];
  }
  CHECK(names == std::map<std::string, int>{{"kernel of process 1", 4}, {"kernel of process 2", 3}});
  CHECK(values == std::map<std::string, int>{{"value 1", 3}, {"value 2", 4}});
}

// Packets are written in place with one-byte lengths, moved up when the TrackEvent or the packet
// needs a longer one: string arguments and arrow lists of every length around those limits read
// back whole, on the first packet of a sequence (written the general way, its names interned)
// and on the later ones (in place).
TEST_CASE("perfetto writer: packets of 127 bytes and more read back whole") {
  const std::string path = kob_test::temp_path("long.pftrace");
  kob_test::RemoveAtEnd remove{path};
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  const std::vector<std::size_t> lengths = {0, 1, 60, 90, 100, 110, 115, 120, 127, 128, 200, 16383, 16384, 70000};
  std::vector<std::uint64_t> flows(40);
  for (std::size_t i = 0; i < flows.size(); ++i) flows[i] = 1000 + i;
  {
    auto sink = kob::make_perfetto_sink(f);
    sink->process(100, "p", 1000);
    kob::trace::TrackDesc d;
    d.index = 0;
    d.id = 1;
    d.os_tid = 7;
    d.name = "thread";
    sink->track(d);
    std::uint64_t ts = 2000;
    for (const std::size_t n : lengths) {
      for (int again = 0; again < 2; ++again) {
        const std::string text(n, static_cast<char>('a' + n % 26));
        kob::trace::Args args;
        args.u("count", n).s("text", text);
        kob::trace::Event e;
        e.phase = kob::trace::Phase::Slice;
        e.cat = "kokkos.kernel";
        e.name = "long";
        e.track = 0;
        e.ts = ts;
        e.end = ts + 10;
        e.args = &args;
        e.flows_out = std::span<const std::uint64_t>(flows.data(), n % flows.size());
        sink->event(e);
        ts += 100;
      }
    }
    sink->window_end();
    CHECK(sink->finish(""));
  }
  std::fclose(f);
  std::ifstream in(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Decoded d(data);
  std::vector<const Ev*> begins;
  for (const Ev& e : d.events)
    if (e.type == 1) begins.push_back(&e);
  REQUIRE(begins.size() == 2 * lengths.size());
  for (std::size_t i = 0; i < begins.size(); ++i) {
    const std::size_t n = lengths[i / 2];
    CAPTURE(n);
    const Ev& e = *begins[i];
    CHECK(e.name == "long");
    CHECK(e.ts == 2000 + 100 * i);
    REQUIRE(e.args.size() == 2);
    CHECK(e.args[0].key == "count");
    CHECK(e.args[0].u == n);
    CHECK(e.args[1].key == "text");
    CHECK(e.args[1].s == std::string(n, static_cast<char>('a' + n % 26)));
    CHECK(e.flows.size() == n % flows.size());
  }
}
