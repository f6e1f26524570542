#!/usr/bin/env python3
"""How long an HTML report takes to open: loads each page in headless Chromium (a fresh browser per
page, over the DevTools protocol) and prints the time from navigation start to the first
contentful paint and to the end of the report's script (timeline drawn), in ms.

usage: benchmarks/report_open.py PAGE.html...   (run from the repository root)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import chromium_page as cp  # noqa: E402

for page in sys.argv[1:]:
    s = cp.Session()
    try:
        s.open("file://" + os.path.abspath(page), timeout=120)
        s.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 300)))")
        t = s.evaluate("JSON.stringify({fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime,"
                       " drawn: performance.getEntriesByName('kob-report-drawn')[0].startTime})")
        errors = s.errors()
    finally:
        s.close()
    t = json.loads(t)
    print(f"{page}: {os.path.getsize(page) / 1e6:.2f} MB, first contentful paint {t.get('fcp', float('nan')):.0f} ms, "
          f"report drawn {t['drawn']:.0f} ms" + (f", errors: {errors}" if errors else ""))
