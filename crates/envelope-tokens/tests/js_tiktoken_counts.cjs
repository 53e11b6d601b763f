// The reference counts for crates/envelope-tokens: npm js-tiktoken under Node.
//
// Usage: node js_tiktoken_counts.cjs REFS_DIR [--bench ROUNDS]
//   REFS_DIR is where scripts/install-token-refs.sh installed js-tiktoken.
// stdin: one JSON string a line.
// Without --bench: prints one JSON object a line, for each input line:
//   {"o200k_base": N, "cl100k_base": N, "default_throws": BOOL or null}
// where N is `encode(text, [], []).length` (special-token look-alikes as ordinary text, as
// envelope-tokens counts them) and default_throws tells whether o200k_base's plain
// `encode(text)` refuses the text (it does when the text holds a special token's name); null
// for texts over 1,000 characters.
// With --bench: counts every line with each encoding ROUNDS times after one warm-up round,
// timing only the counting loop (not start-up, not reading or parsing the input), and prints
//   {"bytes": B, "o200k_base": {"tokens": N, "seconds": S}, "cl100k_base": {...}}
// where S is the best round's time.
"use strict";
const path = require("node:path");
const { createRequire } = require("node:module");

const refs = process.argv[2];
if (!refs) {
  process.stderr.write("usage: node js_tiktoken_counts.cjs REFS_DIR [--bench ROUNDS]\n");
  process.exit(2);
}
const load = createRequire(path.join(path.resolve(refs), "node_modules", "index.js"));
const { getEncoding } = load("js-tiktoken");
const encodings = {
  o200k_base: getEncoding("o200k_base"),
  cl100k_base: getEncoding("cl100k_base"),
};

const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const text = Buffer.concat(chunks).toString("utf8");
  const lines = text.split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line));
  if (process.argv[3] === "--bench") {
    bench(lines, Number(process.argv[4] || "3"));
  } else {
    const out = lines.map((line) => {
      // Asked only of texts up to 1,000 characters (null otherwise): a long run costs
      // js-tiktoken seconds an encoding.
      let default_throws = null;
      if (line.length <= 1000) {
        default_throws = false;
        try {
          encodings.o200k_base.encode(line);
        } catch (e) {
          default_throws = true;
        }
      }
      return JSON.stringify({
        o200k_base: encodings.o200k_base.encode(line, [], []).length,
        cl100k_base: encodings.cl100k_base.encode(line, [], []).length,
        default_throws,
      });
    });
    process.stdout.write(out.join("\n") + "\n");
  }
});

function bench(lines, rounds) {
  const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line, "utf8"), 0);
  const result = { bytes };
  for (const [name, encoding] of Object.entries(encodings)) {
    let best = Infinity;
    let tokens = 0;
    for (let round = 0; round <= rounds; round++) {
      const start = process.hrtime.bigint();
      let count = 0;
      for (const line of lines) count += encoding.encode(line, [], []).length;
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      tokens = count;
      // Round 0 warms the JIT up and is not counted.
      if (round > 0 && seconds < best) best = seconds;
    }
    result[name] = { tokens, seconds: best };
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}
