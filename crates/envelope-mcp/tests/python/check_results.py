"""Checks shaped tools/call results the way the Python MCP SDK client does.

Reads JSON lines {"name", "schema", "result"} on stdin; for each, parses the result with the
SDK's own `mcp.types.CallToolResult` and, as `ClientSession.call_tool` does for a result that
is not an error, runs the SDK's own `ClientSession.validate_tool_result` against the schema.
Prints one JSON line per input: {"ok": true} or {"ok": false, "error": "..."}.
"""

import asyncio
import json
import sys
import types as pytypes

from mcp import types
from mcp.client.session import ClientSession


async def check(entry):
    result = types.CallToolResult.model_validate(entry["result"])
    session = pytypes.SimpleNamespace(
        _tool_output_schemas={entry["name"]: entry["schema"]},
        _tool_output_validators={},
    )
    session._output_schema_validator = lambda name, schema: ClientSession._output_schema_validator(
        session, name, schema
    )
    if not result.is_error:
        await ClientSession.validate_tool_result(session, entry["name"], result)


async def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            await check(json.loads(line))
            print(json.dumps({"ok": True}))
        except Exception as e:  # every failure is reported, none stops the run
            print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))


asyncio.run(main())
