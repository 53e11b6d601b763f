#!/usr/bin/env python3
# The proxy's own peak RSS (VmHWM of its process, not its upstream's) over one big
# tools/call, the catalog's indexing after it included (sampled until the proxy exits).
# usage: scripts/bench-proxy-memory.py ENVELOPE UPSTREAM_BIN MB, where UPSTREAM_BIN is the
# relay bench binary (cargo bench -p envelope-mcp --bench relay_latency --no-run) and its
# --as-upstream-big MB mode answers every tools/call with MB megabytes of log lines.
import json, subprocess, sys, time, tempfile
env_bin, up, mb = sys.argv[1], sys.argv[2], sys.argv[3]
store = tempfile.mkdtemp()
p = subprocess.Popen([env_bin, "proxy", "--store", store, "--", up, "--as-upstream-big", mb], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
p.stdout.readline()
send({"jsonrpc":"2.0","method":"notifications/initialized"})
t = time.time()
send({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{}}})
line = p.stdout.readline()
call = time.time() - t
p.stdin.close()
hwm = 0
while p.poll() is None:
    try:
        for l in open(f"/proc/{p.pid}/status"):
            if l.startswith("VmHWM"):
                hwm = max(hwm, int(l.split()[1]))
    except Exception:
        pass
    time.sleep(0.05)
print(f"{mb} MB: answer {len(line)} bytes, call {call*1000:.0f} ms, proxy peak RSS {hwm//1024} MB ({hwm/1024/int(mb):.2f}x), exit after {time.time()-t:.1f} s")
subprocess.run(["rm", "-rf", store])
