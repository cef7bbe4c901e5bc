#!/usr/bin/env python3
"""Bad input must give a clear error naming the file and the position or field, exit status 1,
and never a crash. Each case writes a file, runs `profsh script.lua FILE` (the script only calls
profsh.load), and checks the exit status and the message on stderr.

Usage: check_bad_input.py PROFSH
"""
import gzip
import os
import shutil
import struct
import subprocess
import sys
import tempfile

GOOD = ('{"schemaVersion": 1, "traceEvents": [\n'
        '  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10, "dur": 5},\n'
        '  {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 20, "dur": 5}\n'
        ']}\n')


def write(path, data):
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def main():
    profsh = os.path.abspath(sys.argv[1])
    failures = []
    passed = 0
    work = tempfile.mkdtemp(prefix="profsh_bad_")
    os.chmod(work, 0o755)
    script = os.path.join(work, "load.lua")
    write(script, "local t = profsh.load(arg[1])\nprint(#t)\n")
    try:
        def case(name, expect, data=None, setup=None, runner=None):
            nonlocal passed
            path = os.path.join(work, name)
            if data is not None:
                write(path, data)
            if setup is not None:
                setup(path)
            # The script by its short name: Lua cuts long chunk names ("...k/wt20/...") in
            # messages, and the temporary folder's path can be long.
            cmd = [profsh, "load.lua", path]
            if runner:
                cmd = runner + cmd
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=work)
            problems = []
            if proc.returncode != 1:
                problems.append("exit status %d, expected 1" % proc.returncode)
            if path not in proc.stderr:
                problems.append("the message does not name the file")
            for e in expect:
                if e not in proc.stderr:
                    problems.append("the message lacks %r" % e)
            if "AddressSanitizer" in proc.stderr or "runtime error" in proc.stderr:
                problems.append("sanitizer report")
            if not proc.stderr.startswith("load.lua:1: "):
                problems.append("the message does not start with FILE:LINE:")
            if problems:
                failures.append("%s: %s\n  stderr: %s" % (name, "; ".join(problems), proc.stderr.strip()[:600]))
            else:
                passed += 1
                print("ok   %-28s %s" % (name, proc.stderr.splitlines()[0][len("load.lua") + 4:][:110]))

        case("empty.json", ["file is empty"], data="")
        case("a_directory", ["is a directory"], setup=lambda p: os.mkdir(p))
        case("missing.json", ["cannot open", "No such file"])
        case("cut_before_events.json", ["unexpected end of file", ":1:"], data='{"schemaVersion": 1, "traceEvents"')
        case("wrong_type_ts.json", ["traceEvents[0]", "field 'ts' must be a number, got '<'", ":1:"],
             data='{"traceEvents": [{"ph": "X", "ts": <10>, "dur": 1}]}')
        case("wrong_type_args.json", ["field 'args' must be an object"],
             data='{"traceEvents": [{"ph": "X", "ts": 10, "dur": 1, "args": 5}]}')
        case("wrong_type_events.json", ["\"traceEvents\" must be an array"], data='{"traceEvents": 5}')
        case("no_events.json", ["no \"traceEvents\" array"], data='{"schemaVersion": 1}')
        case("invalid_utf8.json", ["invalid UTF-8", ":2:"],
             data=b'{"traceEvents": [\n{"ph": "X", "name": "caf\xe9", "ts": 1, "dur": 1}]}')
        case("not_json.txt", ["not a trace profsh can read"], data="hello world\n")
        case("binary_garbage.bin", ["not a trace profsh can read"], data=bytes(range(256)) * 4)
        case("garbage_after.json", ["unexpected data after the end of the trace"], data=GOOD + "xyz")
        comp = gzip.compress(GOOD.encode() * 1)
        case("cut_before_data.json.gz", ["gzip stream cut short"], data=comp[:12])
        case("corrupt.json.gz", ["corrupt gzip data"], data=comp[:12] + b"\xff" * 40 + comp[52:])

        # A profsh file with another version: write a real one, then patch the version field.
        good = os.path.join(work, "good.json")
        write(good, GOOD)
        saved = os.path.join(work, "saved.profsh")
        r = subprocess.run([profsh, "-e", "profsh.load(%r):save(%r)" % (good, saved)], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("could not save a profsh trace: " + r.stderr)
        else:
            blob = bytearray(open(saved, "rb").read())
            struct.pack_into("<I", blob, 8, 7)
            case("wrong_version.profsh", ["version 7 is not supported", "reads version 2"], data=bytes(blob))
            blob = open(saved, "rb").read()
            case("truncated.profsh", ["truncated profsh trace"], data=blob[: len(blob) - 40])

        # Streams of the collector, crafted here block by block (engine/stream/stream_format.h).
        def block(kind, payload):
            return struct.pack("<II", kind, len(payload)) + payload

        def varint(v):
            out = b""
            while v >= 0x80:
                out += bytes([(v & 0x7f) | 0x80])
                v >>= 7
            return out + bytes([v])

        def text(s):
            return varint(len(s)) + s

        header = b"PROFSHST" + struct.pack("<II", 1, 16)
        process = block(1, struct.pack("<qqqII", 100, 1, 1700000000000000000, 0, 2) + text(b"app") + text(b"/bin/app")
                        + text(b"host") + varint(0))
        clock = block(2, struct.pack("<Qqq", 1000, 1000, 1700000000000000000))
        thread = block(4, varint(0) + struct.pack("<q", 100) + text(b""))
        name = block(3, varint(1) + text(b"step"))
        events_ok = block(5, varint(0) + struct.pack("<QI", 1000, 2) + varint(5 << 4 | 0) + varint(0) + varint(1)
                          + varint(0) + varint(9 << 4 | 1) + varint(0))
        good_stream = header + process + clock + thread + name + events_ok + clock
        case("wrong_version.pstream", ["stream version 9", "reads version 1"],
             data=b"PROFSHST" + struct.pack("<II", 9, 16) + good_stream[16:])
        case("no_process.pstream", ["no process block"], data=header + clock)
        bad_events = block(5, varint(0) + struct.pack("<QI", 1000, 3) + varint(5 << 4 | 0) + varint(0))
        case("malformed_events.pstream", ["block at byte %d" % (len(header + process + clock + thread + name)),
                                          "malformed event"],
             data=header + process + clock + thread + name + bad_events + clock)
        orphan = block(5, varint(4) + struct.pack("<QI", 1000, 1) + varint(5 << 4 | 1) + varint(0))
        case("events_before_thread.pstream", ["thread slot 4 before its thread block"],
             data=header + process + clock + orphan + clock)
        unknown_kind = block(5, varint(0) + struct.pack("<QI", 1000, 1) + varint(5 << 4 | 15))
        case("unknown_event_kind.pstream", ["unknown event kind 15"], data=header + process + clock + thread + unknown_kind)
        case("empty_session", ["is a directory, and holds no profsh streams"], setup=lambda p: os.mkdir(p))

        # A stream cut in the middle of a block (a killed process) is not an error: it loads,
        # with a warning that says where it ends.
        cut = os.path.join(work, "cut.pstream")
        write(cut, good_stream[:-5])
        r = subprocess.run([profsh, "-e", "local t = profsh.load(%r) print(#t) print(t.warnings[1])" % cut],
                           capture_output=True, text=True)
        if r.returncode == 0 and "ends in a partial block at byte %d" % (len(good_stream) - len(clock)) in r.stdout:
            passed += 1
            print("ok   %-28s loads, with a warning" % "cut.pstream")
        else:
            failures.append("cut.pstream: %d %s %s" % (r.returncode, r.stdout, r.stderr))

        # What other tools read (docs/ANALYSIS.md, "What the JSON reader accepts") loads, each
        # repair with its warning: the events kept, then the warnings.
        def loads(name, data, events, warning):
            nonlocal passed
            path = os.path.join(work, name)
            write(path, data)
            r = subprocess.run([profsh, "-e", "local t = profsh.load(%r) print(#t) "
                                "for _, w in ipairs(t.warnings) do print(w) end" % path],
                               capture_output=True, text=True)
            lines = r.stdout.splitlines()
            if r.returncode == 0 and lines and lines[0] == str(events) and any(warning in w for w in lines[1:]):
                passed += 1
                print("ok   %-28s loads %d events: %s" % (name, events, [w for w in lines[1:] if warning in w][0][:80]))
            else:
                failures.append("%s: exit %d, stdout %r, stderr %r" % (name, r.returncode, r.stdout, r.stderr[:300]))

        loads("truncated.json", GOOD[:150], 1, "trace cut short")
        loads("string_ts.json", '{"traceEvents": [{"ph": "X", "ts": "10", "dur": 1}]}', 1,
              "numbers written as strings")
        loads("missing_ph.json", '{"traceEvents": [{"ph": "i", "ts": 1}, {"name": "x", "ts": 10, "dur": 1}]}', 1,
              "events without a phase ('ph') dropped (first at event 1)")
        loads("cut_short.json.gz", gzip.compress(GOOD.encode())[: len(gzip.compress(GOOD.encode())) // 2], 0,
              "trace cut short")
        loads("missing_dur.json", '{"traceEvents": [{"ph": "X", "name": "x", "ts": 10}]}', 0,
              "complete ('X') events without 'dur' dropped")
        loads("control_character.json", '[{"ph": "i", "name": "a\tb", "ts": 1, "pid": 1, "tid": 1}]', 1,
              "raw control characters inside strings kept (first at byte 23)")

        # An unreadable file. Root reads everything, so drop to nobody when running as root.
        runner = None
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv:
                runner = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        if os.geteuid() != 0 or runner:
            case("unreadable.json", ["cannot open", "Permission denied"], data=GOOD,
                 setup=lambda p: os.chmod(p, 0), runner=runner)
        else:
            print("skip unreadable.json: running as root without setpriv")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    print("bad input: %d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
