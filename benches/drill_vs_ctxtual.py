#!/usr/bin/env python3
"""Drill-in benchmark: `envelope proxy` against `ctxtual wrap` (PyPI ctxtual 0.5.0), same run.

Both proxies front the same upstream MCP server (the Python SDK's MCPServer, formerly
FastMCP, over stdio) with two tools:

  big_text  a 5 MB log text, one text block
  big_rows  12.6 MB of JSON rows (a compact JSON array of objects), one *text* block
            (not structuredContent: both proxies see the same single text)
  page_text the log's first 10,000 characters: a page-sized result neither proxy cuts, whose
            p50 (direct and through each proxy) is the floor under one read

A Python SDK ClientSession (stdio) drives each proxy: it calls the tool (the cut, timed),
pages the stored result back from start to end with the proxy's own read tool (calls and
wall time counted), asserts that what came back equals the original, and times 20 searches
(p50). Each proxy runs with its default limit: envelope `--limit` 16384 bytes (the whole
shaped result, compact JSON), ctxtual `--threshold` 20000 characters (the default; its read
tool answers text pages of 10,000 characters and lists 10 items a page by default).

`--envelope-limit N` (repeatable) adds envelope rows at other limits: 20480 gives windows of
about 10,000 characters, ctxtual's page, for the same number of calls.

Usage: drill_vs_ctxtual.py --envelope PATH --ctxtual PATH [--python PATH] [--json FILE]
                           [--envelope-limit N ...] [--cut-repeats N]
Run it through scripts/bench-drill.sh, which installs ctxtual and picks the interpreters.
"""

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TEXT_BYTES = 5_000_000
ROWS_BYTES = 12_600_000

# The upstream server: serves the two payloads the benchmark wrote beside it, as they are.
UPSTREAM = '''
import os, sys
from mcp.server.mcpserver import MCPServer
from mcp.types import TextContent

HERE = os.path.dirname(os.path.abspath(__file__))
server = MCPServer("drill-bench-upstream")


def _read(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return f.read()


@server.tool(structured_output=False)
def big_text() -> list[TextContent]:
    """A 5 MB application log, one text block."""
    return [TextContent(type="text", text=_read("big_text.txt"))]


@server.tool(structured_output=False)
def big_rows() -> list[TextContent]:
    """12.6 MB of order rows as a JSON array, one text block."""
    return [TextContent(type="text", text=_read("big_rows.json"))]


PAGE = _read("big_text.txt")[:10_000]


@server.tool(structured_output=False)
def page_text() -> list[TextContent]:
    """10,000 characters of the log: a result the size of a page, cut by neither proxy."""
    return [TextContent(type="text", text=PAGE)]


if __name__ == "__main__":
    server.run()
'''

# Words the data is made of; the searches below look for some of them.
SERVICES = ["api", "billing", "search", "auth", "catalog", "checkout", "mailer", "reports"]
WORDS = ("order shipped refund invoice customer warehouse parcel carrier delayed priority "
         "discount coupon payment declined retry timeout upstream cache miss hit replica "
         "failover rollback deploy canary quota throttled backlog batch export import").split()
CITIES = ["Lisbon", "Porto", "Madrid", "Berlin", "Vienna", "Prague", "Warsaw", "Oslo",
          "Dublin", "Lyon", "Turin", "Ghent", "Krakow", "Bergen", "Malmo", "Tallinn"]
QUERIES = [
    "timeout", "payment declined", "failover", "E5031", "Tallinn", "canary deploy",
    "quota throttled", "rollback", "Krakow", "refund invoice", "replica", "E4290",
    "warehouse parcel", "coupon", "Bergen", "backlog batch", "cache miss", "E5002",
    "carrier delayed", "export",
]


def sentence(rng, lo, hi):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def make_text(rng):
    """A log of about TEXT_BYTES bytes (ASCII, one event a line)."""
    lines, size, n = [], 0, 0
    while size < TEXT_BYTES:
        level = rng.choices(["INFO", "WARN", "ERROR", "DEBUG"], [70, 15, 5, 10])[0]
        line = (f"2026-11-{1 + n // 2_000_000:02d}T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:"
                f"{n % 60:02d}.{n % 1000:03d}Z {level:<5} service={rng.choice(SERVICES)} "
                f"req={n:07d} status={rng.choice([200, 200, 200, 201, 404, 429, 500, 503])} "
                f"ms={rng.randint(1, 4000)} city={rng.choice(CITIES)}")
        if level == "ERROR":
            line += f" code=E{rng.choice([4290, 5002, 5031, 5040])}"
        line += " msg=" + sentence(rng, 3, 9)
        lines.append(line)
        size += len(line) + 1
        n += 1
    return "\n".join(lines) + "\n"


def make_rows(rng):
    """A JSON array of about ROWS_BYTES bytes of order rows, about 1,000 bytes each.

    Strings stay under 300 characters and lists under 20 items: ctxtual's read tool cuts
    longer ones in a page of items (LIST_STRING_CHARS, max_items), and the benchmark checks
    that paging gives the rows back whole."""
    rows, size, i = [], 2, 0
    while size < ROWS_BYTES:
        row = {
            "id": i,
            "order_no": f"ORD-{100000 + i}",
            "created_at": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
            "status": rng.choice(["new", "paid", "shipped", "delivered", "refunded", "cancelled"]),
            "customer": {"id": rng.randint(1, 50_000), "name": f"Customer {rng.randint(1, 50_000)}",
                         "city": rng.choice(CITIES), "tier": rng.choice(["free", "pro", "team"])},
            "amount": round(rng.uniform(1, 5000), 2),
            "currency": rng.choice(["EUR", "USD", "GBP"]),
            "items": [{"sku": f"SKU-{rng.randint(1, 9999):04d}", "qty": rng.randint(1, 5),
                       "price": round(rng.uniform(1, 500), 2)} for _ in range(rng.randint(1, 4))],
            "tags": rng.sample(WORDS, rng.randint(1, 5)),
            "title": sentence(rng, 3, 8).capitalize(),
            "note": sentence(rng, 20, 35)[:290],
            "history": sentence(rng, 20, 35)[:290],
        }
        if row["status"] == "refunded":
            row["error"] = f"E{rng.choice([4290, 5002, 5031])} payment declined"
        rows.append(row)
        size += len(json.dumps(row, separators=(",", ":"))) + 1
        i += 1
    return rows


def text_of(result):
    """The text of a CallToolResult's text blocks, joined."""
    return "".join(b.text for b in result.content if b.type == "text")


def describe(answer, window):
    """What one read answer carries: its channels and sizes (compact JSON, UTF-8 bytes)."""
    structured = answer.structured_content
    return {
        "window": window,
        "text_bytes": len(text_of(answer).encode()),
        "structured_bytes": (len(json.dumps(structured, separators=(",", ":")).encode())
                             if structured is not None else None),
    }


def p50_ms(seconds):
    return statistics.median(seconds) * 1000


class Envelope:
    """`envelope proxy`: the cut names the artifact in a resource_link; `envelope_read`
    pages /content/0/text by characters, following next_offset."""

    def __init__(self, binary, store, limit):
        self.binary, self.store, self.limit = binary, store, limit
        self.name = "envelope" if limit == 16384 else f"envelope --limit {limit}"

    def command(self, upstream):
        return [self.binary, "proxy", "--store", self.store, "--limit", str(self.limit),
                "--", *upstream]

    def handle(self, cut):
        links = [b for b in cut.content if b.type == "resource_link"]
        assert links, f"envelope did not cut the result: {text_of(cut)[:300]}"
        return str(links[0].uri)

    async def page_all(self, session, uri, kind):
        parts, calls, offset = [], 0, 0
        while offset is not None:
            answer = await session.call_tool(
                "envelope_read", {"uri": uri, "pointer": "/content/0/text", "offset": offset})
            calls += 1
            assert not answer.is_error, text_of(answer)[:300]
            window = answer.structured_content
            parts.append(window["text"])
            if calls == 1:
                self.first_answer = describe(answer, len(window["text"]))
            offset = window["next_offset"]
        return "".join(parts), calls

    def expected(self, kind, original):
        # Both payloads are read back as the text the upstream sent, character for character.
        return original

    def search_tool(self, tools):
        if "envelope_search" not in tools:
            return None
        # Not in any build yet (issue 28): search this result when the tool takes a `uri`.
        self.search_by_uri = "uri" in (tools["envelope_search"] or {}).get("properties", {})
        return "envelope_search"

    async def search(self, session, tool, handle, query):
        args = {"query": query, **({"uri": handle} if self.search_by_uri else {})}
        answer = await session.call_tool(tool, args)
        assert not answer.is_error, text_of(answer)[:300]
        return answer


class Ctxtual:
    """`ctxtual wrap`: the cut is a notice with a result_id; `result_read` pages a text by
    10,000 characters and a list by `page_size` items (default 10), following has_more."""

    name = "ctxtual"

    def __init__(self, binary):
        self.binary = binary

    def command(self, upstream):
        return [self.binary, "wrap", "--threshold", "20000", "--", *upstream]

    def handle(self, cut):
        notice = json.loads(text_of(cut))
        assert "result_id" in notice, f"ctxtual did not store the result: {text_of(cut)[:300]}"
        return notice["result_id"]

    async def page_all(self, session, result_id, kind):
        parts, calls, page, more = [], 0, 0, True
        while more:
            answer = await session.call_tool("result_read", {"result_id": result_id, "page": page})
            calls += 1
            assert not answer.is_error, text_of(answer)[:300]
            body = json.loads(text_of(answer))
            if kind == "text":
                parts.append(body["text"])
            else:
                parts.extend(entry["item"] for entry in body["items"])
            if calls == 1:
                self.first_answer = describe(
                    answer, len(body["text"]) if kind == "text" else len(body["items"]))
            more = body["has_more"]
            page += 1
        return ("".join(parts) if kind == "text" else parts), calls

    def expected(self, kind, original):
        # ctxtual parses a text that holds JSON and stores the value: rows come back as items.
        return original if kind == "text" else json.loads(original)

    def search_tool(self, tools):
        return "result_search"

    async def search(self, session, tool, handle, query):
        answer = await session.call_tool(tool, {"result_id": handle, "query": query})
        assert not answer.is_error, text_of(answer)[:300]
        return answer


async def measure(proxy, upstream, originals, cut_repeats, relay_calls):
    """Everything for one proxy, in one client session."""
    out = {}
    params = StdioServerParameters(command=proxy.command(upstream)[0],
                                   args=proxy.command(upstream)[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t.input_schema for t in (await session.list_tools()).tools}
            search_tool = proxy.search_tool(tools)
            out["page_text"] = {"relay_p50_ms": await relay_p50(session, relay_calls)}
            for tool, kind in (("big_text", "text"), ("big_rows", "rows")):
                started = time.perf_counter()
                cut = await session.call_tool(tool, {})
                first = time.perf_counter() - started
                cut_text = text_of(cut)
                handle = proxy.handle(cut)
                started = time.perf_counter()
                back, calls = await proxy.page_all(session, handle, kind)
                total = time.perf_counter() - started
                want = proxy.expected(kind, originals[kind])
                assert back == want, f"{proxy.name}: paging {tool} back did not give it whole"
                searches = []
                if search_tool:
                    for query in QUERIES:
                        started = time.perf_counter()
                        await proxy.search(session, search_tool, handle, query)
                        searches.append(time.perf_counter() - started)
                # Later calls of the same tool: the cut again, warm (after the reads: ctxtual
                # stores each call anew and evicts the least recently used past its size cap).
                again = []
                for _ in range(cut_repeats):
                    started = time.perf_counter()
                    await session.call_tool(tool, {})
                    again.append(time.perf_counter() - started)
                out[tool] = {
                    "cut_ms": first * 1000,
                    "cut_again_p50_ms": p50_ms(again) if again else None,
                    "cut_bytes": len(cut_text.encode()),
                    "calls": calls,
                    "total_s": total,
                    "ms_per_call": total * 1000 / calls,
                    "search_tool": search_tool,
                    "search_p50_ms": p50_ms(searches) if searches else None,
                    "first_read": proxy.first_answer,
                    "cut_sample": cut_text[:1500],
                }
    return out


async def relay_p50(session, calls):
    """p50 of `calls` calls of page_text: a 10,000-character answer through this client (and
    the proxy, when there is one) that nothing cuts; the floor under a read of a page."""
    await session.list_tools()
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        answer = await session.call_tool("page_text", {})
        seconds.append(time.perf_counter() - started)
        assert len(text_of(answer)) == 10_000, "page_text was changed on the way"
    return p50_ms(seconds)


async def measure_direct(upstream, relay_calls):
    """The upstream alone, no proxy: what a call of each tool costs the client."""
    out = {}
    params = StdioServerParameters(command=upstream[0], args=upstream[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["page_text"] = {"relay_p50_ms": await relay_p50(session, relay_calls)}
            for tool in ("big_text", "big_rows"):
                started = time.perf_counter()
                await session.call_tool(tool, {})
                out[tool] = {"cut_ms": (time.perf_counter() - started) * 1000}
    return out


def table(results):
    lines = [
        "| proxy | tool | cut (first call) ms | cut again p50 ms | cut bytes | read calls "
        "| paging total s | ms per call | search p50 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, tools in results.items():
        for tool, r in tools.items():
            if tool == "page_text":
                continue
            if name == "direct":
                lines.append(f"| direct (no proxy) | {tool} | {r['cut_ms']:.0f} | | | | | | |")
                continue
            again = f"{r['cut_again_p50_ms']:.0f}" if r["cut_again_p50_ms"] is not None else ""
            search = (f"{r['search_p50_ms']:.1f} ({r['search_tool']})" if r["search_p50_ms"]
                      is not None else "not available in this build")
            lines.append(
                f"| {name} | {tool} | {r['cut_ms']:.0f} | {again} | {r['cut_bytes']:,} "
                f"| {r['calls']:,} | {r['total_s']:.2f} | {r['ms_per_call']:.2f} | {search} |")
    ctx = results.get("ctxtual")
    for name, env in results.items():
        if not name.startswith("envelope") or not ctx:
            continue
        lines.append("")
        lines.append(f"{name} / ctxtual (below 1: envelope is faster):")
        for tool in ("big_text", "big_rows"):
            e, c = env[tool], ctx[tool]
            lines.append(
                f"- {tool}: paging total {e['total_s'] / c['total_s']:.2f}x, "
                f"per call {e['ms_per_call'] / c['ms_per_call']:.2f}x, "
                f"calls {e['calls'] / c['calls']:.2f}x, cut {e['cut_ms'] / c['cut_ms']:.2f}x")
    lines.append("")
    lines.append("a 10,000-character result nothing cuts (page_text), p50: " + ", ".join(
        f"{name} {tools['page_text']['relay_p50_ms']:.2f} ms" for name, tools in results.items()))
    lines.append("")
    lines.append("one read answer (the first page): window, bytes of the text block, "
                 "bytes of structuredContent:")
    for name, tools in results.items():
        for tool, r in tools.items():
            if "first_read" in r:
                f = r["first_read"]
                unit = "items" if name == "ctxtual" and tool == "big_rows" else "chars"
                lines.append(f"- {name} {tool}: {f['window']:,} {unit}, text {f['text_bytes']:,} B, "
                             f"structuredContent {f['structured_bytes'] or 0:,} B")
    return "\n".join(lines)


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envelope", default="target/release/envelope")
    ap.add_argument("--ctxtual", required=True, help="the ctxtual command (its venv's bin/ctxtual)")
    ap.add_argument("--python", default=sys.executable,
                    help="the Python that runs the upstream server (has the mcp package)")
    ap.add_argument("--cut-repeats", type=int, default=5)
    ap.add_argument("--relay-calls", type=int, default=200,
                    help="calls of page_text (a page-sized result nothing cuts) for the floor")
    ap.add_argument("--envelope-limit", type=int, action="append",
                    help="run envelope with this --limit (repeatable; default 16384, its default)")
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args()
    for path in (args.envelope, args.ctxtual, args.python):
        if not os.access(path, os.X_OK):
            sys.exit(f"drill_vs_ctxtual: {path} is not an executable file")

    with tempfile.TemporaryDirectory(prefix="drill-bench-") as tmp:
        rng = random.Random(28)
        text = make_text(rng)
        rows = json.dumps(make_rows(rng), separators=(",", ":"))
        for name, body in (("big_text.txt", text), ("big_rows.json", rows),
                           ("upstream.py", UPSTREAM)):
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(body)
        print(f"payloads: big_text {len(text):,} bytes, big_rows {len(rows):,} bytes "
              f"({len(json.loads(rows)):,} rows)", file=sys.stderr)
        upstream = [args.python, os.path.join(tmp, "upstream.py")]
        originals = {"text": text, "rows": rows}
        results = {"direct": await measure_direct(upstream, args.relay_calls)}
        proxies = [Envelope(args.envelope, os.path.join(tmp, f"envelope-store-{limit}"), limit)
                   for limit in args.envelope_limit or [16384]]
        for proxy in [*proxies, Ctxtual(args.ctxtual)]:
            print(f"measuring {proxy.name} ...", file=sys.stderr)
            results[proxy.name] = await measure(proxy, upstream, originals, args.cut_repeats,
                                                args.relay_calls)
    print(table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    asyncio.run(main())
