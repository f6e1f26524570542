"""A runtime that cannot deliver the EMI target callbacks: the library falls back to the 5.0
forms (target, target_data_op, target_submit), reports the registration results in otherData
and records the runtime's ids, data ops and submits as points (dur 0)."""
import argparse
import os

import kob_check as kc

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()
wd = kc.workdir()
prefix = os.path.join(wd, "fallback")
rc, out, err = kc.run([os.path.abspath(a.program), os.path.abspath(a.lib)], {"KOB_ARGS": f"--output={prefix} --quiet {kc.CHROME}"},
                      cwd=wd, unset=("OMP_TOOL_LIBRARIES", "LD_PRELOAD", "KOKKOS_PROFILE_LIBRARY"))
kc.expect_eq((rc, out), (0, "done\n"), f"exit code and stdout (stderr: {err[-1000:]})")
trace, summary = kc.load_outputs(prefix)
kc.validate_trace(trace)
cbs = trace["otherData"].get("ompt_callbacks", {})
kc.expect_eq({k: cbs.get(k) for k in ("target_emi", "target", "target_data_op_emi", "target_data_op",
                                       "target_submit_emi", "target_submit", "device_unload")},
             {"target_emi": "never", "target": "always", "target_data_op_emi": "never", "target_data_op": "always",
              "target_submit_emi": "never", "target_submit": "always", "device_unload": "never"},
             "registration: each EMI callback answered never, its 5.0 form registered instead")
kc.expect_eq(trace["otherData"].get("ompt", {}).get("initial_device_num"), "1", "otherData: initial device number")

targets = kc.events(trace, "omp.target", "X")
kc.expect_eq([(t["name"], t["args"]) for t in targets], [("target", {"target_id": 1000, "device": 0})],
             "the target region, with the runtime's target id")
ops = sorted(kc.events(trace, "omp.target_data", "X"), key=lambda e: e["args"]["host_op_id"])
kc.expect_eq([(o["name"], o["args"]["host_op_id"], o["args"]["src_device"], o["args"]["dst_device"], o["args"]["bytes"],
               o["args"].get("target_id"), o["args"].get("point"), o["dur"]) for o in ops],
             [("alloc", 2000, -1, 0, 256, 1000, True, 0), ("transfer_to_device", 2001, -1, 0, 256, 1000, True, 0),
              ("transfer_from_device", 2003, 0, -1, 256, 1000, True, 0), ("delete", 2004, 0, -1, 0, 1000, True, 0)],
             "data ops as points, the host (1 and -1) as -1")
subs = kc.events(trace, "omp.target_submit", "X")
kc.expect_eq([(s["args"]["host_op_id"], s["args"]["requested_teams"], s["args"].get("target_id"), s["dur"]) for s in subs],
             [(2002, 3, 1000, 0)], "the submit as a point")
for x in ops + subs:
    kc.check(targets and kc.inside(x, targets[0]), f"{x['name']} inside the target region")
names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M" and e.get("name") == "thread_name"}
kc.expect_eq(names.get(1000000), "device 0 (fake-dev)", "device track")
d0 = {d["device"]: d for d in summary["target"]["devices"]}.get(0, {})
kc.expect_eq((d0.get("submits"), d0.get("allocations"), d0.get("deletes"), d0.get("alloc_high_water_bytes"),
              d0.get("alloc_final_bytes")), (1, 1, 1, 256, 0), "summary: device 0")
kc.finish()
