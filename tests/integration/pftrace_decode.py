"""A reader of Perfetto protobuf traces (.pftrace) for the tests, independent of the writer: the
protobuf wire format by hand and the few field numbers of the public Perfetto schema it needs."""
import struct

# TracePacket
P_CLOCK_SNAPSHOT, P_TIMESTAMP, P_SEQ_ID, P_TRACK_EVENT, P_INTERNED, P_SEQ_FLAGS = 6, 8, 10, 11, 12, 13
P_CLOCK_ID, P_DEFAULTS, P_TRACK_DESCRIPTOR = 58, 59, 60
MONOTONIC_RAW = 5
# TrackEvent
E_CATEGORY_IIDS, E_ANNOTATIONS, E_TYPE, E_NAME_IID, E_TRACK_UUID, E_NAME = 3, 4, 9, 10, 11, 23
E_COUNTER_VALUE, E_FLOW_IDS, E_TERMINATING_FLOW_IDS = 30, 47, 48
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4


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
    incremental / absolute: how many packet times were deltas / absolute CLOCK_MONOTONIC_RAW."""

    def __init__(self, path):
        self.tracks = {}
        self.events = []
        self.packets = 0
        self.first_flags = None
        self.incremental = self.absolute = 0
        self.primary_clock = None
        interned = {}  # (sequence, field, iid) -> name
        seqs = {}  # sequence -> dict(track, clock, clocks: id -> value, inc: set of incremental ids)
        data = open(path, "rb").read()
        for f, w, pkt in fields(data):
            if f != 1 or w != 2:
                raise ValueError(f"not a Trace.packet field: {f}/{w}")
            self.packets += 1
            p = message(pkt)
            seq = one(p, P_SEQ_ID, 0)
            flags = one(p, P_SEQ_FLAGS, 0)
            if self.first_flags is None:
                self.first_flags = flags
            if flags & 1:
                interned = {k: v for k, v in interned.items() if k[0] != seq}
                seqs[seq] = {"track": None, "clock": None, "clocks": {}, "inc": set()}
            st = seqs.setdefault(seq, {"track": None, "clock": None, "clocks": {}, "inc": set()})
            for blob in p.get(P_DEFAULTS, []):
                d = message(blob)
                st["clock"] = one(d, 58, st["clock"])
                if 11 in d:
                    st["track"] = one(message(d[11][0]), 11, st["track"])
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
                if clock in st["inc"]:
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
                    interned[(seq, inf, one(e, 1))] = one(e, 2, b"").decode()
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
                name = name.decode() if name is not None else interned.get((seq, 2, one(te, E_NAME_IID)))
                cats = [interned.get((seq, 1, c)) for c in te.get(E_CATEGORY_IIDS, [])]
                args = {}
                for a in te.get(E_ANNOTATIONS, []):
                    am = message(a)
                    key = interned.get((seq, 3, one(am, 1))) if 1 in am else one(am, 10, b"").decode()
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
                        val = interned.get((seq, 29, am[17][0]))
                    else:
                        val = None
                    args[key] = val
                self.events.append({
                    "ts": ts, "type": one(te, E_TYPE), "track": one(te, E_TRACK_UUID, st["track"]),
                    "cat": cats[0] if cats else None, "name": name, "args": args, "seq_flags": flags,
                    "flows": te.get(E_FLOW_IDS, []), "terminating": te.get(E_TERMINATING_FLOW_IDS, []),
                    "value": signed(one(te, E_COUNTER_VALUE, 0)),
                })


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
