#!/usr/bin/env python3
"""A large OpenAPI 3.0 document shaped like GitHub's (for docs/benchmarks.md, "OpenAPI
sources: load once"): OPERATIONS operations over SCHEMAS component schemas that refer to
each other in four layers (no cycles), with long descriptions, path and query parameters, JSON bodies.

    python3 scripts/gen_openapi.py [OPERATIONS=1200] [SCHEMAS=300] > big.json
"""
import json
import random
import sys

operations = int(sys.argv[1]) if len(sys.argv) > 1 else 1200
schema_count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
rng = random.Random(29)
words = "repository owner pull request issue commit branch release asset workflow run job step artifact cache secret variable environment deployment status check suite annotation".split()


def text(n):
    return " ".join(rng.choice(words) for _ in range(n))


# Four layers of schemas: each refers to two of the layer below (as GitHub's refer to a
# user, a repository, a license), so a schema written out whole is a few times its size.
layer = max(1, schema_count // 4)
schemas = {}
for i in range(schema_count):
    below = range(max(0, (i // layer - 1) * layer), (i // layer) * layer)
    props = {}
    for p in range(24):
        kind = rng.random()
        name = f"{rng.choice(words)}_{p}"
        if p < 2 and len(below):
            ref = {"$ref": f"#/components/schemas/S{rng.choice(below)}"}
            props[name] = ref if p == 0 else {"type": "array", "items": ref}
        elif kind < 0.5:
            props[name] = {"type": "string", "description": text(8), "example": text(3)}
        elif kind < 0.7:
            props[name] = {"type": "integer", "minimum": 0}
        elif kind < 0.8:
            props[name] = {"type": "boolean", "nullable": True}
        else:
            props[name] = {"type": "string", "enum": words[:6]}
    schemas[f"S{i}"] = {"title": f"S{i}", "type": "object", "description": text(20),
                        "properties": props, "required": list(props)[:5]}

paths = {}
for i in range(operations):
    path = f"/repos/{{owner}}/{{repo}}/{rng.choice(words)}/{i}/{{id}}"
    item = paths.setdefault(path, {"parameters": [
        {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}, "description": text(12)},
        {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}, "description": text(12)},
        {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
    ]})
    method = "get" if i % 3 else "post"
    schema = {"$ref": f"#/components/schemas/S{rng.randrange(schema_count)}"}
    op = {
        "operationId": f"{rng.choice(words)}/{method}-{i}",
        "summary": text(6),
        "description": text(180),
        "tags": [rng.choice(words)],
        "parameters": [
            {"name": "per_page", "in": "query", "schema": {"type": "integer", "default": 30}, "description": text(10)},
            {"name": "page", "in": "query", "schema": {"type": "integer", "default": 1}},
        ],
        "responses": {
            "200": {"description": "ok", "content": {"application/json": {"schema": (
                {"type": "array", "items": schema} if method == "get" else schema)}}},
            "404": {"description": "not found"},
        },
    }
    if method == "post":
        op["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/S{rng.randrange(schema_count)}"}}}}
    item[method] = op

doc = {"openapi": "3.0.3", "info": {"title": "generated", "version": "1.0.0"},
       "servers": [{"url": "http://127.0.0.1:1"}], "paths": paths,
       "components": {"schemas": schemas}}
json.dump(doc, sys.stdout)
