#!/usr/bin/env python3
"""Runs commands in a given order and reports each run's wall time and peak RSS.

Used by bench/bench.mjs. Written in Python because Node cannot report a child's resource usage:
os.wait4 gives the peak RSS (ru_maxrss) of exactly the process that ran, and the wall time is
taken around spawn and wait only, with stdout read through a pipe as a script would.

stdin: {"commands": [{"argv": [...], "env": {...}, "input": str | null}], "order": [index, ...]}
stdout: one JSON object per run, in order: {"command": i, "wall_ms": float, "max_rss_kib": int,
        "exit_code": int, "stdout_bytes": int}
"""
import json
import os
import subprocess
import sys
import time


def run(command):
    started = time.perf_counter_ns()
    child = subprocess.Popen(
        command["argv"],
        env=command["env"],
        stdin=subprocess.PIPE if command.get("input") is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if command.get("input") is not None:
        child.stdin.write(command["input"].encode())
        child.stdin.close()
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed_ns = time.perf_counter_ns() - started
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    child.stdout.close()
    return {
        "wall_ms": elapsed_ns / 1e6,
        "max_rss_kib": usage.ru_maxrss,
        "exit_code": child.returncode,
        "stdout_bytes": len(output),
    }


def main():
    spec = json.load(sys.stdin)
    for index in spec["order"]:
        result = run(spec["commands"][index])
        result["command"] = index
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
