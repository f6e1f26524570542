"""Reads an OTF2 archive through `otf2-print` (Debian otf2-tools, OTF2's own reader), independently
of our writer: the definitions (regions with their canonical names, locations, location groups,
metrics) and every event, per location in file order."""
import re
import subprocess
from collections import defaultdict

REF = re.compile(r'"((?:[^"\\]|\\.)*)" <(\d+)>')


def _run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {p.returncode}: {p.stderr.strip()[:500]}")
    if p.stderr.strip():
        raise RuntimeError(f"{' '.join(args)} printed errors: {p.stderr.strip()[:500]}")
    return p.stdout


def read(anchor, otf2_print="otf2-print"):
    """Returns dict: regions {id: {name, canonical, paradigm, role}}, locations {id: {name, type,
    group, events}}, groups {id: {name, type, creator}}, metrics (member names), clock (dict),
    events {location: [(kind, time, region_or_metric_id, {attr name: value})]}."""
    out = {"regions": {}, "locations": {}, "groups": {}, "metrics": [], "clock": {}, "events": defaultdict(list)}
    for line in _run([otf2_print, "-G", anchor]).splitlines():
        kind = line.split(" ", 1)[0]
        m = re.match(r"(\w+)\s+(\d+)\s+(.*)", line)
        if kind == "CLOCK_PROPERTIES":
            for key, val in re.findall(r"(Ticks per Seconds|Global Offset|Length): (\d+)", line):
                out["clock"][key] = int(val)
        if not m:
            continue
        ident, rest = int(m.group(2)), m.group(3)
        refs = REF.findall(rest)
        if kind == "REGION":
            role = re.search(r"Role: (\w+)", rest)
            para = re.search(r"Paradigm: (\w+)", rest)
            out["regions"][ident] = {"name": refs[0][0], "canonical": refs[1][0],
                                     "role": role.group(1) if role else None,
                                     "paradigm": para.group(1) if para else None}
        elif kind == "LOCATION":
            typ = re.search(r"Type: (\w+)", rest).group(1)
            nev = int(re.search(r"# Events: (\d+)", rest).group(1))
            out["locations"][ident] = {"name": refs[0][0], "type": typ, "group": int(refs[-1][1]), "events": nev}
        elif kind == "LOCATION_GROUP":
            typ = re.search(r"Type: (\w+)", rest).group(1)
            creator = re.search(r"Creator: (?:\"[^\"]*\" <(\d+)>|UNDEFINED)", rest)
            out["groups"][ident] = {"name": refs[0][0], "type": typ,
                                    "creator": int(creator.group(1)) if creator and creator.group(1) else None}
        elif kind == "METRIC_MEMBER":
            out["metrics"].append(refs[0][0])
    current = None
    for line in _run([otf2_print, anchor]).splitlines():
        m = re.match(r"(ENTER|LEAVE|METRIC)\s+(\d+)\s+(\d+)\s+(.*)", line)
        if m:
            kind, loc, t, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
            ref = REF.search(rest)
            ident = int(ref.group(2)) if ref else -1
            current = [kind, t, ident, {}]
            if kind == "METRIC":
                v = re.search(r"; \w+; (-?\d+)\)\s*$", rest)
                current[3]["value"] = int(v.group(1)) if v else None
            out["events"][loc].append(current)
            continue
        if "ADDITIONAL ATTRIBUTES:" in line and current is not None:
            for name, typ, val in re.findall(r'\("((?:[^"\\]|\\.)*)" <\d+>; (\w+); ([^)]*)\)', line):
                if typ.startswith(("UINT", "INT")):
                    current[3][name] = int(val)
                else:
                    q = REF.match(val)
                    current[3][name] = q.group(1) if q else val
        elif line.strip() and not line.startswith(("=", "-", "Event")):
            current = None
    return out
