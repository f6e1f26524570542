#!/usr/bin/env python3
"""Shrinks a raw trace (docs/raw-format.md) into a small fuzzing seed: PAD blocks and free RING
slots (state 0) are left out, and each other RING slot keeps only its records up to the first
empty one (tick 0). What `kob convert` makes of the file stays the same; the 32 KiB slots, mostly
zeros, would otherwise make every seed hundreds of KiB.
    shrink_raw_trace.py IN.kob OUT.kob"""
import struct
import sys

HEADER = 4096
BLOCK = 48
MAGIC = 0x4B4C424B
RING, PAD = 2, 4


def shrink(data):
    out = bytearray(data[:HEADER])
    at = HEADER
    while at + BLOCK <= len(data):
        magic, kind, _flags, _thread, payload = struct.unpack_from("<IHHII", data, at)
        size = (BLOCK + payload + 7) & ~7
        if magic != MAGIC or at + size > len(data):
            break  # a write cut short: kept as it is
        block = bytearray(data[at:at + size])
        at += size
        if kind == PAD:
            continue
        if kind == RING:
            state, committed = struct.unpack_from("<II", block, BLOCK)
            if state == 0:
                continue
            records = 0
            while BLOCK + 16 + (records + 1) * 64 <= len(block):
                tick = struct.unpack_from("<Q", block, BLOCK + 16 + records * 64)[0]
                if tick == 0:
                    break
                records += 1
            records = max(records, min(committed, (len(block) - BLOCK - 16) // 64))
            new_payload = 16 + records * 64
            block = block[:BLOCK + new_payload]
            struct.pack_into("<I", block, 12, new_payload)
        out += block
    out += data[at:]
    return bytes(out)


if __name__ == "__main__":
    src, dst = sys.argv[1:3]
    with open(src, "rb") as f:
        data = f.read()
    small = shrink(data)
    with open(dst, "wb") as f:
        f.write(small)
    print(f"{src}: {len(data)} -> {len(small)} bytes")
