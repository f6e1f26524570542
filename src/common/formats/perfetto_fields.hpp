// Field numbers of the few Perfetto trace messages the .pftrace writer uses, from the public
// Perfetto protobuf schema (protos/perfetto/trace/...). Numbers are the wire format's facts.
#pragma once

#include <cstdint>

namespace kob::pftrace {

namespace trace { constexpr std::uint32_t packet = 1; }

namespace packet {  // TracePacket
constexpr std::uint32_t clock_snapshot = 6, timestamp = 8, trusted_packet_sequence_id = 10, track_event = 11,
                        interned_data = 12, sequence_flags = 13, timestamp_clock_id = 58, trace_packet_defaults = 59,
                        track_descriptor = 60;
constexpr std::uint32_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;  // SequenceFlags
}  // namespace packet

namespace defaults {  // TracePacketDefaults, TrackEventDefaults
constexpr std::uint32_t timestamp_clock_id = 58, track_event_defaults = 11;
constexpr std::uint32_t track_uuid = 11;
}  // namespace defaults

namespace clock {  // ClockSnapshot, ClockSnapshot.Clock, BuiltinClock
constexpr std::uint32_t clocks = 1, primary_trace_clock = 2;
constexpr std::uint32_t clock_id = 1, timestamp = 2, is_incremental = 3;
constexpr std::uint32_t kMonotonicRaw = 5;
constexpr std::uint32_t kFirstSequenceClock = 64;  // 64..127: clocks of one packet sequence
}  // namespace clock

namespace interned {  // InternedData; EventCategory, EventName, DebugAnnotationName, InternedString
constexpr std::uint32_t event_categories = 1, event_names = 2, debug_annotation_names = 3,
                        debug_annotation_string_values = 29;
constexpr std::uint32_t iid = 1, name = 2;  // InternedString: iid = 1, str = 2 (the same numbers)
}  // namespace interned

namespace track_event {  // TrackEvent
constexpr std::uint32_t category_iids = 3, debug_annotations = 4, type = 9, name_iid = 10, track_uuid = 11,
                        counter_value = 30, flow_ids = 47, terminating_flow_ids = 48;
constexpr std::uint32_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;  // TrackEvent.Type
}  // namespace track_event

namespace annotation {  // DebugAnnotation
constexpr std::uint32_t name_iid = 1, bool_value = 2, uint_value = 3, int_value = 4, double_value = 5, string_value = 6,
                        string_value_iid = 17;
}

namespace track {  // TrackDescriptor
constexpr std::uint32_t uuid = 1, name = 2, process = 3, thread = 4, parent_uuid = 5, counter = 8;
}
namespace process { constexpr std::uint32_t pid = 1, process_name = 6; }
namespace thread { constexpr std::uint32_t pid = 1, tid = 2, thread_name = 5; }

}  // namespace kob::pftrace
