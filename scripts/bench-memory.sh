#!/usr/bin/env bash
# Peak memory and speed of the `envelope` commands on large single-line documents
# (issue 12, items 9 and 15), against `openssl dgst -sha256` of the same file in the same run.
#
#   scripts/bench-memory.sh [SIZE_MB ...]        (default: 100 500)
#
# For each size it writes, into a temporary folder that is removed at the end:
#   doc.json      a protocol-v1 envelope, one line, whose `data` is {"rows":[…]} of records
#   ops.json      the same payload as an operations envelope (`meta` after `data`)
#   payload.json  the records alone, as {"results":[…]} (the input of `wrap --format ctxo`)
#   tev1.json     the same payload as a tool-envelope-v1 result (base64 in a text block)
#   mcptext.json  an MCP result whose one text block is a long `git log` (a `\n` escape in
#                 every line: the text is escaped in the JSON)
#   mcpsecret.json  the same with a secret every 1,000 entries (a token pair, a bearer
#                 token, a private key block), for `shape --redact`
#   structured.json an MCP result with `structuredContent` (half the size: the records) and
#                 its text mirror (the other half)
#   indented.json   the same with the mirror indented, as the Python SDK writes it
#   twoblocks.json  the `git log` of mcpsecret.json in two text blocks
#   iserror.json    that `git log` as an error result (`isError: true`)
#   noenv.json      an object that is no envelope (the records under `rows`; issue 27)
#   pyops.json      doc.json's payload as an operations envelope written as Python writes
#                   it (`", "`, `": "`, `1.0`; issue 27)
# and runs each command once under `/usr/bin/time -v` (and `convert` from each of them to
# every format), printing its peak resident set size
# (RSS) divided by the input's size, and its throughput divided by openssl's.
#
#   pymcp.json      an MCP result as the Python SDK writes it: structuredContent and its
#                   mirror spelled by json.dumps (`1.0`, `", "`; issue 27)
#   summary.json    structuredContent beside a one-line summary block (issue 27)
#   ctxo.json       a ctxo document, `_meta` after the records (issue 27)
#   dual.json       a tool-envelope-v1 dual emit: the block's document again as
#                   structuredContent (issue 27)
# ONLY=27 runs only the rows of issue 27 (noenv.json … dual.json).
# ENVELOPE=path/to/envelope picks the binary (default: target/release/envelope, built if
# missing). ROUNDS=N repeats every measurement N times (default 1).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${ENVELOPE:-$root/target/release/envelope}"
rounds="${ROUNDS:-1}"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 500)

if [ ! -x "$bin" ]; then
    (cd "$root" && cargo build --release -p envelope-cli)
fi
command -v openssl >/dev/null || { echo "openssl is needed for the baseline" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time (GNU time) is needed" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/envelope-bench-memory.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Writes the three inputs of about $1 MB into $work.
generate() {
    python3 - "$1" "$work" <<'PY'
import sys
target = int(sys.argv[1]) * 1000 * 1000
out = sys.argv[2]
# Keys sorted and numbers as Go and JS write them: the payload is the form the store holds.
rows = []
size = 0
i = 0
while size < target:
    row = '{"id":%d,"name":"row %d","path":"src/module_%d/file_%d.rs","score":%d.25,"tags":["a","b"]}' % (i, i, i % 97, i, i % 1000)
    rows.append(row)
    size += len(row) + 1
    i += 1
payload = '{"rows":[' + ",".join(rows) + ']}'
# The payload `wrap` gets: under `results`, a key ctxo's compat truncation cuts.
with open(out + "/payload.json", "w") as f:
    f.write('{"results":[' + ",".join(rows) + ']}')
with open(out + "/doc.json", "w") as f:
    f.write('{"version":1,"status":"ok","command":"bench/memory","data":' + payload
            + ',"meta":{"ts":"2026-01-01T00:00:00Z","duration_ms":1},"error":{}}')
with open(out + "/ops.json", "w") as f:
    f.write('{"data":' + payload + ',"meta":{"source":"local"}}')
# The same payload in a tool-envelope-v1 result: base64 of {payload, meta} in block 1
# (about 4/3 of the others' size).
import base64
inner = '{"payload":' + payload + ',"meta":{"tool":"bench","ts":"2026-01-01T00:00:00Z","version":1}}'
with open(out + "/tev1.json", "w") as f:
    f.write('{"content":[{"type":"text","text":"bench"},{"type":"text","text":"__ENVELOPE_V1__:'
            + base64.b64encode(inner.encode()).decode() + '"}]}')
# The first half of the records as an MCP result's structuredContent and its text mirror.
records = '{"rows":[' + ",".join(rows[:len(rows) // 2]) + ']}'
import json
with open(out + "/structured.json", "w") as f:
    f.write('{"content":[{"type":"text","text":' + json.dumps(records) + '}],"structuredContent":' + records + '}')
# The Python SDK writes the mirror indented (indent=2): a third of the records, so that the
# result is about the size of the others.
third = '{"rows":[' + ",".join(rows[:len(rows) // 3]) + ']}'
indented = json.dumps(json.loads(third), indent=2)
with open(out + "/indented.json", "w") as f:
    f.write('{"content":[{"type":"text","text":' + json.dumps(indented) + '}],"structuredContent":' + third + '}')
del indented, third
with open(out + "/noenv.json", "w") as f:
    f.write('{"rows":[' + ",".join(rows) + '],"total":%d}' % len(rows))
data = json.loads(payload)
for record in data["rows"]:
    record["weight"] = float(record["id"] % 3)  # 0.0, 1.0, 2.0: JS writes 0, 1, 2
with open(out + "/pyops.json", "w") as f:
    f.write(json.dumps({"data": data, "meta": {"source": "local"}}))
# The Python SDK's MCP result: structuredContent and its mirror as json.dumps writes them
# (half the records each), and the same records beside a one-line summary.
half = {"rows": data["rows"][: len(data["rows"]) // 2]}
py_text = json.dumps(half)
with open(out + "/pymcp.json", "w") as f:
    f.write('{"content": [{"type": "text", "text": ' + json.dumps(py_text) + '}], "structuredContent": ' + py_text + '}')
del py_text, half
with open(out + "/summary.json", "w") as f:
    f.write('{"content":[{"type":"text","text":"Found the rows."}],"structuredContent":' + payload + '}')
# ctxo's own document (`_meta` after the payload), and a tool-envelope-v1 dual emit (the
# block's document again as structuredContent: a third of the records, about the size).
with open(out + "/ctxo.json", "w") as f:
    f.write('{"results":[' + ",".join(rows) + '],"_meta":{"totalItems":%d,"returnedItems":%d,"truncated":false}}' % (len(rows), len(rows)))
third_inner = '{"payload":{"rows":[' + ",".join(rows[: len(rows) * 3 // 7]) + ']},"meta":{"tool":"bench","ts":"2026-01-01T00:00:00Z","version":1}}'
with open(out + "/dual.json", "w") as f:
    f.write('{"content":[{"type":"text","text":"bench"},{"type":"text","text":"__ENVELOPE_V1__:'
            + base64.b64encode(third_inner.encode()).decode() + '"}],"structuredContent":' + third_inner + '}')
del third_inner
del data
del rows, payload, inner, records
# An MCP result holding a long `git log` as one text block, written as JSON escapes it.
entries = []
size = 0
i = 0
while size < target:
    entry = ("commit %040x\nAuthor: Dev <dev@example.com>\nDate: Mon Jan 1 00:00:00 2026\n\n"
             "    change number %d\n\n" % (i, i))
    entries.append(entry)
    size += len(entry) + 6
    i += 1
with open(out + "/mcptext.json", "w") as f:
    f.write('{"content":[{"type":"text","text":' + json.dumps("".join(entries)) + '}]}')
secrets = ["    token: abc123XYZdef%d\n", "    Authorization: Bearer x9Y8z7W6v5U4t%d\n",
           "-----BEGIN RSA PRIVATE KEY-----\nMIIEow%d\n-----END RSA PRIVATE KEY-----\n"]
for n, i in enumerate(range(0, len(entries), 1000)):
    entries[i] += secrets[n % 3] % i
with open(out + "/mcpsecret.json", "w") as f:
    f.write('{"content":[{"type":"text","text":' + json.dumps("".join(entries)) + '}]}')
half = len(entries) // 2
with open(out + "/twoblocks.json", "w") as f:
    f.write('{"content":[{"type":"text","text":' + json.dumps("".join(entries[:half]))
            + '},{"type":"text","text":' + json.dumps("".join(entries[half:])) + '}]}')
with open(out + "/iserror.json", "w") as f:
    f.write('{"content":[{"type":"text","text":' + json.dumps("".join(entries)) + '}],"isError":true}')
del entries
PY
}

# Runs "$@" under GNU time with stdout discarded; sets $rss_kib and $secs.
measure() {
    local log="$work/time.log"
    if ! /usr/bin/time -v "$@" >/dev/null 2>"$log"; then
        echo "FAILED: $*" >&2
        tail -5 "$log" >&2
    fi
    rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log" |
        awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
}

row() { # name input_bytes
    local name="$1" bytes="$2"
    awk -v n="$name" -v r="$rss_kib" -v b="$bytes" -v s="$secs" -v base="$base_mbs" \
        'BEGIN { mbs = b / 1e6 / (s > 0 ? s : 0.001);
                 printf "| %s | %.1f | %.0f | %.2f | %.0f | %.2f |\n",
                        n, s, r / 1024, r * 1024 / b, mbs, mbs / base }'
}

# The rows of an MCP result $work/$1.json: validate, the offloading shape with and without
# redaction, redaction for a limit; with a second argument, convert and unwrap too.
mcp_rows() {
    local name="$1.json" file="$work/$1.json" bytes
    bytes=$(stat -c %s "$file")
    measure "$bin" validate "$file"
    row "validate $name" "$bytes"
    rm -rf "$work/store"
    measure "$bin" shape --store "$work/store" "$file"
    row "shape --store (offload) $name" "$bytes"
    rm -rf "$work/store"
    measure "$bin" shape --redact --store "$work/store" "$file"
    row "shape --redact --store $name" "$bytes"
    measure "$bin" shape --no-offload --limit 65536 "$file"
    row "shape --no-offload --limit 65536 $name" "$bytes"
    measure "$bin" shape --redact --no-offload --limit 65536 "$file"
    row "shape --redact --no-offload --limit 65536 $name" "$bytes"
    if [ $# -gt 1 ]; then
        measure "$bin" convert --to operations "$file"
        row "convert --to operations $name" "$bytes"
        measure "$bin" unwrap "$file"
        row "unwrap $name" "$bytes"
    fi
}

echo "binary: $bin"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for size in "${sizes[@]}"; do
    generate "$size"
    doc="$work/doc.json"
    doc_bytes=$(stat -c %s "$doc")
    payload_bytes=$(stat -c %s "$work/payload.json")
    for round in $(seq 1 "$rounds"); do
        echo
        echo "### ${size} MB (doc.json: $doc_bytes bytes), round $round"
        echo
        measure openssl dgst -sha256 "$doc"
        base_mbs=$(awk -v b="$doc_bytes" -v s="$secs" 'BEGIN { print b / 1e6 / (s > 0 ? s : 0.001) }')
        echo "| command | wall (s) | peak RSS (MiB) | RSS ÷ input | MB/s of input | ÷ openssl MB/s |"
        echo "|---|---|---|---|---|---|"
        row "openssl dgst -sha256 doc.json" "$doc_bytes"
        # Issue 27: a document of no format is refused in one pass; a payload spelled as
        # Python spells it is rewritten, not built.
        for input in noenv pyops pymcp summary ctxo dual; do
            file="$work/$input.json"
            bytes=$(stat -c %s "$file")
            for cmd in "detect" "shape" "shape --no-offload --limit 65536" "convert --to mcp" "unwrap"; do
                # shellcheck disable=SC2086
                measure "$bin" $cmd "$file"
                row "$cmd $input.json" "$bytes"
            done
        done
        [ "${ONLY:-}" = 27 ] && continue
        measure "$bin" detect "$doc"
        row "detect doc.json" "$doc_bytes"
        measure "$bin" detect "$work/ops.json"
        row "detect ops.json" "$doc_bytes"
        measure "$bin" validate "$doc"
        row "validate doc.json" "$doc_bytes"
        measure "$bin" convert --to operations "$doc"
        row "convert --to operations doc.json" "$doc_bytes"
        measure "$bin" unwrap "$doc"
        row "unwrap doc.json" "$doc_bytes"
        rm -rf "$work/store"
        measure "$bin" shape --store "$work/store" "$doc"
        row "shape --store (offload) doc.json" "$doc_bytes"
        measure "$bin" wrap --format ctxo "$work/payload.json"
        row "wrap --format ctxo payload.json" "$payload_bytes"
        # MCP results with long strings: one text block without and with secrets, then other
        # shapes (the whole path, issue 12 item 9's gap), which convert and unwrap too.
        mcp_rows mcptext
        mcp_rows mcpsecret
        for other in structured indented twoblocks iserror tev1; do
            mcp_rows "$other" convert
        done
        # convert to every format, from every kind of input.
        for input in doc tev1 mcptext structured indented twoblocks iserror; do
            file="$work/$input.json"
            for to in operations mcp protocol-v1 ctxo tool-envelope-v1 tool-result-envelope; do
                measure "$bin" convert --to "$to" "$file"
                row "convert --to $to $input.json" "$(stat -c %s "$file")"
            done
        done
    done
    rm -f "$work"/*.json
    rm -rf "$work/store"
done
