"""Runs a command with stdin and/or stderr on a pseudo-terminal (the rest piped) and prints
{"stdout", "stderr", "code"} as JSON: what a user at a terminal sees.

usage: pty_run.py [--stdin-tty] [--stderr-tty] [--pause SECONDS] INPUT_FILE -- COMMAND...

INPUT_FILE is written to stdin (on the terminal: as typed, then Ctrl-D), after waiting
--pause seconds with the line written but not yet ended, so the command works that long.
"""
import json, os, pty, select, subprocess, sys, threading, time

args = sys.argv[1:]
split = args.index("--")
opts, command = args[:split], args[split + 1:]
stdin_tty = "--stdin-tty" in opts
stderr_tty = "--stderr-tty" in opts
pause = float(opts[opts.index("--pause") + 1]) if "--pause" in opts else 0.0
data = open(opts[-1], "rb").read()

def terminal():
    master, slave = pty.openpty()
    return master, slave

stdin_master = stdin_slave = stderr_master = stderr_slave = None
if stdin_tty:
    stdin_master, stdin_slave = terminal()
if stderr_tty:
    stderr_master, stderr_slave = terminal()
child = subprocess.Popen(
    command,
    stdin=stdin_slave if stdin_tty else subprocess.PIPE,
    stdout=subprocess.PIPE,
    stderr=stderr_slave if stderr_tty else subprocess.PIPE,
)
# A command that hangs (waiting for a second Ctrl-D, say) is killed: code -9, not a stuck test.
watchdog = threading.Timer(20, child.kill)
watchdog.start()
for fd in (stdin_slave, stderr_slave):
    if fd is not None:
        os.close(fd)

stderr = bytearray()
def drain(timeout):
    """Reads the terminal's stderr for `timeout` seconds (or until it closes)."""
    if stderr_master is None:
        time.sleep(timeout)
        return
    end = time.time() + timeout
    while True:
        left = end - time.time()
        if left <= 0:
            return
        ready, _, _ = select.select([stderr_master], [], [], left)
        if ready:
            try:
                chunk = os.read(stderr_master, 4096)
            except OSError:
                return
            if not chunk:
                return
            stderr.extend(chunk)

if stdin_tty:
    lines = data.split(b"\n")
    first, rest = lines[0], b"\n".join(lines[1:])
    os.write(stdin_master, first)  # a line typed but not yet ended
    drain(pause)
    os.write(stdin_master, b"\n" + rest)
    if not rest.endswith(b"\n") and rest:
        os.write(stdin_master, b"\n")
    os.write(stdin_master, b"\x04")  # Ctrl-D: end of input
else:
    time.sleep(pause)
    child.stdin.write(data)
    child.stdin.close()

stdout = child.stdout.read()
code = child.wait()
watchdog.cancel()
drain(0.5)
if not stderr_tty:
    stderr.extend(child.stderr.read())
print(json.dumps({"stdout": stdout.decode("utf-8", "replace"),
                  "stderr": stderr.decode("utf-8", "replace"), "code": code}))
