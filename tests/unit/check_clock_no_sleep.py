"""Structural check that the clock calibration cannot sleep: the object file of
src/common/record/clock.cpp in the core library imports no sleeping or waiting function. (A timing
threshold would be flaky; this fails as soon as such a call is compiled in.)"""
import subprocess
import sys

nm, archive = sys.argv[1], sys.argv[2]
WAITS = {"nanosleep", "clock_nanosleep", "usleep", "sleep", "select", "pselect", "poll", "ppoll",
         "sched_yield", "pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait", "syscall"}
out = subprocess.run([nm, "-A", "-u", archive], capture_output=True, text=True, check=True).stdout
clock_lines = [l for l in out.splitlines() if "clock.cpp.o:" in l]
if not clock_lines:
    print(f"FAIL: no undefined symbols listed for clock.cpp.o in {archive}: was it renamed?")
    sys.exit(1)
found = sorted({l.split()[-1].split("@")[0] for l in clock_lines} & WAITS)
if found:
    print(f"FAIL: clock.cpp calls {found}: the calibration must not wait")
    sys.exit(1)
print(f"clock.cpp.o imports none of {sorted(WAITS)}")
