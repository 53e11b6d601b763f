// The reference counts for envelope-tokens' loaded tokenizers and its Anthropic estimate, under
// Node (the OpenAI encodings have their own script, js_tiktoken_counts.cjs).
//
// Usage: node reference_counts.cjs REFS_DIR REFERENCE...
//   REFS_DIR is where scripts/install-token-refs.sh installed the npm packages.
//   Each REFERENCE is one of:
//     hf:PATH      npm @huggingface/tokenizers 0.2.0 on the tokenizer.json at PATH (with the
//                  tokenizer_config.json beside it, if there is one, as the library asks):
//                  `encode(text, {add_special_tokens: false}).ids.length`
//     llama3-js    npm llama3-tokenizer-js 1.2.0: `encode(text, {bos: false, eos: false}).length`
//     anthropic    npm @anthropic-ai/tokenizer 0.0.4 (Anthropic's legacy, Claude 2 era
//                  tokenizer): what its `countTokens(text)` returns, with one tokenizer built
//                  for all texts instead of one a text (countTokens builds and frees one a call)
// stdin: one JSON string a line.
// stdout: one JSON array a line, for each input line: the counts in the order of REFERENCE, or
//   the error message as a string where a reference throws on the text.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createRequire } = require("node:module");

const [refs, ...wanted] = process.argv.slice(2);
if (!refs || wanted.length === 0) {
  process.stderr.write("usage: node reference_counts.cjs REFS_DIR REFERENCE...\n");
  process.exit(2);
}
const load = createRequire(path.join(path.resolve(refs), "node_modules", "index.js"));

function reference(spec) {
  if (spec.startsWith("hf:")) {
    const file = spec.slice(3);
    const { Tokenizer } = load("@huggingface/tokenizers");
    const json = JSON.parse(fs.readFileSync(file, "utf8"));
    const configFile = path.join(path.dirname(file), "tokenizer_config.json");
    const config = fs.existsSync(configFile) ? JSON.parse(fs.readFileSync(configFile, "utf8")) : {};
    const tokenizer = new Tokenizer(json, config);
    return (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }
  if (spec === "llama3-js") {
    const { llama3Tokenizer } = load(
      "llama3-tokenizer-js/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs",
    );
    return (text) => llama3Tokenizer.encode(text, { bos: false, eos: false }).length;
  }
  if (spec === "anthropic") {
    const { getTokenizer } = load("@anthropic-ai/tokenizer");
    const tokenizer = getTokenizer();
    // countTokens: `tokenizer.encode(text.normalize('NFKC'), 'all').length`.
    return (text) => tokenizer.encode(text.normalize("NFKC"), "all").length;
  }
  throw new Error(`unknown reference ${spec}`);
}

const counters = wanted.map(reference);
const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const lines = Buffer.concat(chunks)
    .toString("utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line));
  const out = lines.map((text) =>
    JSON.stringify(
      counters.map((count) => {
        try {
          return count(text);
        } catch (e) {
          return String(e && e.message ? e.message : e);
        }
      }),
    ),
  );
  process.stdout.write(out.join("\n") + "\n");
});
