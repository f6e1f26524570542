"""A reader of Perfetto protobuf traces (.pftrace) for the tests, independent of the writer: the
protobuf wire format by hand and the few field numbers of the public Perfetto schema it needs.
Beside the decoding, it checks the rules a trace reader relies on (rule_problems()): interned ids,
defaults and sequence clocks are a sequence's incremental state, valid from its last
SEQ_INCREMENTAL_STATE_CLEARED packet on, and only packets flagged SEQ_NEEDS_INCREMENTAL_STATE may
use it (a reader that lost the state drops exactly those); tracks used are described; slices nest."""
import struct

# TracePacket
P_CLOCK_SNAPSHOT, P_TIMESTAMP, P_SEQ_ID, P_TRACK_EVENT, P_INTERNED, P_SEQ_FLAGS = 6, 8, 10, 11, 12, 13
P_CLOCK_ID, P_DEFAULTS, P_TRACK_DESCRIPTOR = 58, 59, 60
MONOTONIC_RAW = 5
# TrackEvent
E_CATEGORY_IIDS, E_ANNOTATIONS, E_TYPE, E_NAME_IID, E_TRACK_UUID, E_NAME = 3, 4, 9, 10, 11, 23
E_COUNTER_VALUE, E_FLOW_IDS, E_TERMINATING_FLOW_IDS = 30, 47, 48
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
# TracePacket.SequenceFlags
SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
INTERNED_TABLES = {1: "event category", 2: "event name", 3: "debug annotation name", 29: "debug annotation string value"}


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    """(field number, wire type, value) of each field of one message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif w == 2:
            n, i = varint(b, i)
            v = bytes(b[i:i + n])
            i += n
        elif w == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError(f"unsupported wire type {w}")
        yield f, w, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def message(b):
    """Field number -> list of values."""
    m = {}
    for f, _, v in fields(b):
        m.setdefault(f, []).append(v)
    return m


def one(m, f, default=None):
    return m[f][0] if f in m else default


class Trace:
    """tracks: uuid -> dict(name, pid, tid, process, parent, counter); events: in file order, each
    dict(ts, type, track, cat, name, args, flows, terminating, value, seq_flags). Times are
    absolute: incremental clocks (declared in a sequence's clock snapshot) are summed up.
    incremental / absolute: how many packet times were deltas / absolute CLOCK_MONOTONIC_RAW.
    problems: one line per broken rule of the incremental state, by packet number (see rule_problems)."""

    def __init__(self, path):
        self.tracks = {}
        self.events = []
        self.packets = 0
        self.first_flags = None
        self.incremental = self.absolute = 0
        self.primary_clock = None
        self.problems = []
        interned = {}  # (sequence, field, iid) -> name
        # sequence -> dict(track, clock, clocks: id -> value, inc: set of incremental ids,
        # cleared: the state is valid (a clear was seen), defaults: a packet set the defaults)
        seqs = {}
        used_tracks = {}  # uuid -> packet number of its first use
        data = open(path, "rb").read()

        def problem(what):
            self.problems.append(f"packet {self.packets} (sequence {seq}): {what}")

        def fresh_state(cleared):
            return {"track": None, "clock": None, "clocks": {}, "inc": set(), "cleared": cleared, "defaults": False}

        def lookup(table, iid):
            """An interned string; its use needs the state, and the id defined in it."""
            uses.append(INTERNED_TABLES[table])
            name = interned.get((seq, table, iid))
            if name is None:
                problem(f"{INTERNED_TABLES[table]} iid {iid} used but not defined on the sequence since its last clear")
            return name

        for f, w, pkt in fields(data):
            if f != 1 or w != 2:
                raise ValueError(f"not a Trace.packet field: {f}/{w}")
            self.packets += 1
            p = message(pkt)
            seq = one(p, P_SEQ_ID, 0)
            flags = one(p, P_SEQ_FLAGS, 0)
            uses = []  # what of the sequence's incremental state this packet uses
            if self.first_flags is None:
                self.first_flags = flags
            if flags & SEQ_INCREMENTAL_STATE_CLEARED:
                interned = {k: v for k, v in interned.items() if k[0] != seq}
                seqs[seq] = fresh_state(True)
            st = seqs.setdefault(seq, fresh_state(False))
            # Packets after the defaults rely on them (a track, a clock): a reader that lost the
            # state must drop them, which it knows only by the flag.
            if st["defaults"] and not flags & SEQ_NEEDS_INCREMENTAL_STATE:
                problem("follows the sequence's trace_packet_defaults without SEQ_NEEDS_INCREMENTAL_STATE")
            if flags & SEQ_NEEDS_INCREMENTAL_STATE and not st["cleared"]:
                problem("needs the incremental state, but the sequence was never cleared (a reader drops it)")
            for blob in p.get(P_DEFAULTS, []):
                d = message(blob)
                st["clock"] = one(d, 58, st["clock"])
                if 11 in d:
                    st["track"] = one(message(d[11][0]), 11, st["track"])
                st["defaults"] = True
            for blob in p.get(P_CLOCK_SNAPSHOT, []):
                snap = message(blob)
                if 2 in snap and self.primary_clock is None:
                    self.primary_clock = snap[2][0]
                for c in snap.get(1, []):
                    cm = message(c)
                    cid = one(cm, 1)
                    if cid is not None and cid >= 64:
                        st["clocks"][cid] = one(cm, 2, 0)
                        if one(cm, 3, 0):
                            st["inc"].add(cid)
            ts = one(p, P_TIMESTAMP)
            if ts is not None:
                clock = one(p, P_CLOCK_ID, st["clock"])
                if P_CLOCK_ID not in p and clock is not None:
                    uses.append("the default clock")
                if clock in st["inc"]:
                    uses.append("an incremental clock")
                    st["clocks"][clock] += ts
                    ts = st["clocks"][clock]
                    self.incremental += 1
                elif clock == MONOTONIC_RAW:
                    self.absolute += 1
                else:
                    raise ValueError(f"packet time on clock {clock}, neither incremental nor CLOCK_MONOTONIC_RAW")
            for blob in p.get(P_INTERNED, []):
                for inf, _, entry in fields(blob):
                    e = message(entry)
                    key, text = (seq, inf, one(e, 1)), one(e, 2, b"").decode()
                    if inf in INTERNED_TABLES and interned.get(key, text) != text:
                        problem(f"{INTERNED_TABLES[inf]} iid {key[2]} redefined as {text!r} (was {interned[key]!r})")
                    interned[key] = text
            for blob in p.get(P_TRACK_DESCRIPTOR, []):
                d = message(blob)
                t = {"name": one(d, 2, b"").decode() or None, "parent": one(d, 5), "counter": 8 in d,
                     "process": None, "thread": None}
                if 3 in d:
                    pd = message(d[3][0])
                    t["process"] = {"pid": one(pd, 1), "name": one(pd, 6, b"").decode()}
                if 4 in d:
                    td = message(d[4][0])
                    t["thread"] = {"pid": one(td, 1), "tid": one(td, 2), "name": one(td, 5, b"").decode()}
                    t["name"] = t["thread"]["name"]
                if one(d, 1) in self.tracks:
                    raise ValueError(f"track {one(d, 1)} described twice")
                self.tracks[one(d, 1)] = t
            for blob in p.get(P_TRACK_EVENT, []):
                te = message(blob)
                name = one(te, E_NAME)
                if name is not None:
                    name = name.decode()
                elif E_NAME_IID in te:
                    name = lookup(2, one(te, E_NAME_IID))
                cats = [lookup(1, c) for c in te.get(E_CATEGORY_IIDS, [])]
                args = {}
                for a in te.get(E_ANNOTATIONS, []):
                    am = message(a)
                    key = lookup(3, one(am, 1)) if 1 in am else one(am, 10, b"").decode()
                    if 2 in am:
                        val = bool(am[2][0])
                    elif 3 in am:
                        val = am[3][0]
                    elif 4 in am:
                        val = signed(am[4][0])
                    elif 5 in am:
                        val = struct.unpack("<d", am[5][0].to_bytes(8, "little"))[0]
                    elif 6 in am:
                        val = am[6][0].decode()
                    elif 17 in am:  # string_value_iid: InternedData.debug_annotation_string_values (29)
                        val = lookup(29, am[17][0])
                    else:
                        val = None
                    args[key] = val
                track = one(te, E_TRACK_UUID, st["track"])
                if E_TRACK_UUID not in te:
                    uses.append("the default track")
                if track is None:
                    problem("a track event without a track (no track_uuid, no default)")
                used_tracks.setdefault(track, self.packets)
                self.events.append({
                    "ts": ts, "type": one(te, E_TYPE), "track": track,
                    "cat": cats[0] if cats else None, "name": name, "args": args, "seq_flags": flags,
                    "flows": te.get(E_FLOW_IDS, []), "terminating": te.get(E_TERMINATING_FLOW_IDS, []),
                    "value": signed(one(te, E_COUNTER_VALUE, 0)),
                })
            if uses and not flags & SEQ_NEEDS_INCREMENTAL_STATE:
                problem(f"uses {', '.join(sorted(set(uses)))} without SEQ_NEEDS_INCREMENTAL_STATE")
        for uuid, first in used_tracks.items():
            if uuid is not None and uuid not in self.tracks:
                self.problems.append(f"track {uuid} (first used by packet {first}) has no TrackDescriptor")
        for uuid, t in self.tracks.items():
            if t["parent"] is not None and t["parent"] not in self.tracks:
                self.problems.append(f"track {uuid}: parent track {t['parent']} has no TrackDescriptor")
        # A counter track holds only counter values, and counter values need one.
        for e in self.events:
            t = self.tracks.get(e["track"])
            if t is not None and (e["type"] == COUNTER) != t["counter"]:
                self.problems.append(f"track {e['track']}: a {'counter value' if e['type'] == COUNTER else 'slice or instant'} "
                                     f"on a {'counter' if t['counter'] else 'non-counter'} track")
                break


def slices(trace):
    """The slices of each track as a trace reader sees them: its BEGIN/END events ordered by time,
    equal times in file order (a slice written in a later window of the trace may begin before
    slices written earlier), then matched as a stack. Returns (slices, problems): each slice a
    dict(track, cat, name, ts, dur, args, depth); problems: lines naming an END without a BEGIN or
    slices left open."""
    out, problems = [], []
    by_track = {}
    for n, e in enumerate(trace.events):
        if e["type"] in (BEGIN, END):
            by_track.setdefault(e["track"], []).append((e["ts"], n, e))
    for uuid, evs in by_track.items():
        evs.sort(key=lambda x: (x[0], x[1]))
        stack = []
        for ts, _, e in evs:
            if e["type"] == BEGIN:
                stack.append(e)
            elif not stack:
                problems.append(f"track {uuid}: END without BEGIN at {ts}")
            else:
                b = stack.pop()
                out.append({"track": uuid, "cat": b["cat"], "name": b["name"], "ts": b["ts"], "dur": ts - b["ts"],
                            "args": b["args"], "depth": len(stack)})
        if stack:
            problems.append(f"track {uuid}: {len(stack)} slices left open")
    return out, problems


def rule_problems(trace):
    """Every broken rule of the trace, one line each: the incremental state (interned ids,
    defaults, sequence clocks and their flags), tracks used but not described, BEGIN/END that do
    not pair up on a track in time order. Empty for a trace as Perfetto's docs require it."""
    return trace.problems + slices(trace)[1]
