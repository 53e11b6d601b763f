//! Command-line flags.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "envelope",
    version,
    about = "Read, write, detect and convert the response envelopes that wrap AI tool results",
    long_about = "Read, write, detect and convert the response envelopes that wrap AI tool results.\n\n\
Format ids: tool-envelope-v1, ctxo, operations, protocol-v1, tool-result-envelope, mcp.\n\
Results go to stdout, diagnostics to stderr. Exit 0 success, 1 invalid input, 2 usage or I/O error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Print the format id of an envelope.
    Detect(DetectArgs),
    /// Convert an envelope from one format to another.
    Convert(ConvertArgs),
    /// Wrap a raw JSON payload in an envelope.
    Wrap(WrapArgs),
    /// Print only the payload of an envelope, as compact JSON.
    Unwrap(UnwrapArgs),
    /// Redact secrets, offload large payloads to the store, fit a hard byte budget.
    Shape(ShapeArgs),
    /// Manage the content-addressed artifact store.
    Artifact(ArtifactArgs),
    /// Check an envelope (or an NDJSON stream of them) against its format's rules.
    Validate(ValidateArgs),
    /// Run the main job on the bundled examples (no input needed): detect, unwrap, convert
    /// to every format and back, then shape a generated result (redact, offload, fit 4 KiB).
    Demo(DemoArgs),
    /// Print the shell completion script (bash, zsh, fish, powershell or elvish).
    #[command(
        long_about = "Print the completion script for SHELL to stdout, generated from \
the flags of this very binary.\n\n\
bash: mkdir -p ~/.local/share/bash-completion/completions &&\n\
      envelope completions bash > ~/.local/share/bash-completion/completions/envelope\n\
zsh:  mkdir -p ~/.zfunc && envelope completions zsh > ~/.zfunc/_envelope   (with ~/.zfunc in $fpath)\n\
fish: mkdir -p ~/.config/fish/completions &&\n\
      envelope completions fish > ~/.config/fish/completions/envelope.fish"
    )]
    Completions(CompletionsArgs),
    /// Put the toolkit in front of an MCP server: every tools/call result fits a byte limit,
    /// the full result one read away.
    Proxy(ProxyArgs),
    /// The operations of a registry file (envelope.toml): list them, or serve them to
    /// callers over NATS as a worker.
    Ops(OpsArgs),
    /// Call an operation of a registry file and print its {data, meta} envelope.
    Call(CallArgs),
    /// Serve a registry's operations as one MCP server (stdio or Streamable HTTP) and one
    /// HTTP API, every result within the limit and the full result one read away.
    Serve(ServeArgs),
    /// Put `envelope proxy` in front of every MCP server of a client's configuration file
    /// (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex, Gemini CLI).
    Setup(SetupArgs),
}

#[derive(Args)]
#[command(
    long_about = "Check an envelope, or an NDJSON stream of them, against its format's schema rules and \
semantic rules, and print every finding (rule id, JSON Pointer, line in streams, severity).\n\n\
Profiles: compat (the verdicts of the shipped protocol-v1 validator, which reads with Go's \
json.Unmarshal: a byte-order mark or trailing data is invalid), strict (compat plus unknown \
fields, duplicate keys, invalid UTF-8, lone surrogates), spec (strict plus every MUST of the seed \
documents; the default).\n\n\
Exit 0 valid, 1 invalid, 2 usage or I/O error."
)]
pub struct ValidateArgs {
    /// Format id (detected when absent; for --ndjson, from the first line).
    #[arg(long, value_name = "ID")]
    pub format: Option<String>,
    /// compat, strict or spec.
    #[arg(long, default_value = "spec", value_parser = parse_profile)]
    pub profile: envelope::validate::Profile,
    /// One envelope per line: a protocol-v1 progress stream (seq, pct, one terminal
    /// envelope), a protocol-v1 job-event stream, or envelopes of one other format.
    #[arg(long)]
    pub ndjson: bool,
    /// With --ndjson: the lines are independent envelopes (a log, a batch), each validated
    /// as a document of its own: its own format (detected per line unless --format), no
    /// rules across lines (no seq or pct order, no terminal envelope, formats may differ).
    #[arg(long, requires = "ndjson")]
    pub independent: bool,
    /// With --ndjson: lines longer than this are reported, not read [default: 16777216, 16 MiB].
    #[arg(long, value_name = "BYTES")]
    pub line_cap: Option<usize>,
    /// JSON Schema of the tool's output: operations `data` and MCP `structuredContent` must
    /// match it (no network or file `$ref`s are followed).
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,
    /// MCP revision the result claims (2024-11-05 … 2026-07-28): newer block types are findings.
    #[arg(long, value_name = "REVISION")]
    pub mcp_revision: Option<String>,
    /// Print a machine-readable report.
    #[arg(long, conflicts_with = "emit")]
    pub json: bool,
    /// Print the rule catalogue (id, lowest profile, severity, meaning) and exit; with
    /// --json, one JSON object per rule.
    #[arg(long)]
    pub list_rules: bool,
    /// Print the result as the reference validator does: one protocol-v1 envelope
    /// (an EENVELOPE error, or ok when valid).
    #[arg(long, value_name = "FORMAT", value_parser = ["protocol-v1"])]
    pub emit: Option<String>,
    /// Input file, or - for stdin.
    #[arg(default_value = "-")]
    pub file: PathBuf,
}

fn parse_profile(
    text: &str,
) -> Result<envelope::validate::Profile, envelope::validate::UnknownProfile> {
    text.parse()
}

#[derive(Args)]
pub struct DetectArgs {
    /// Print {"format": ..., "reason": ...} instead of the bare id.
    #[arg(long)]
    pub json: bool,
    /// Input file, or - for stdin.
    #[arg(default_value = "-")]
    pub file: PathBuf,
}

/// A budget in tokens (`--limit-tokens`, `--tokenizer`), beside or instead of `--limit`.
#[derive(Args, Clone, Debug, Default)]
pub struct TokenArgs {
    /// The most tokens the whole output may have, as --tokenizer counts its text (the
    /// newline counted). With --limit too, both hold. Cut as for --limit; the count of the
    /// written output decides.
    #[arg(long, value_name = "TOKENS")]
    pub limit_tokens: Option<usize>,
    /// The tokenizer --limit-tokens counts with: o200k_base (GPT-4o, GPT-4.1, GPT-5, the
    /// o-series), cl100k_base (GPT-4, GPT-3.5), llama3 (installed by
    /// scripts/install-tokenizers.sh), anthropic-estimate (an upper estimate: Anthropic
    /// publishes no tokenizer), or file:PATH (a Hugging Face tokenizer.json) [default:
    /// o200k_base].
    #[arg(long, value_name = "NAME", requires = "limit_tokens")]
    pub tokenizer: Option<String>,
}

/// Choices for writing envelopes, shared by convert and wrap.
#[derive(Args, Clone)]
pub struct EncodeArgs {
    /// Timestamp (RFC 3339) to write where the target needs one and the input has none.
    #[arg(long, value_name = "RFC3339")]
    pub ts: Option<String>,
    /// ctxo byte limit (overrides CTXO_RESPONSE_LIMIT; default 8192).
    #[arg(long, value_name = "BYTES")]
    pub limit: Option<usize>,
    /// tool-envelope-v1: also emit structuredContent = {payload, meta}.
    #[arg(long)]
    pub dual_emit: bool,
    /// tool-result-envelope: indented output (Newtonsoft Formatting.Indented).
    #[arg(long)]
    pub indented: bool,
}

#[derive(Args)]
pub struct ConvertArgs {
    /// Target format id.
    #[arg(long, value_name = "ID")]
    pub to: String,
    /// Source format id (detected when absent).
    #[arg(long, value_name = "ID")]
    pub from: Option<String>,
    /// Write the loss report (what the target cannot hold) to stderr as JSON.
    #[arg(long)]
    pub report: bool,
    /// Read leniently where the reference does (tool-envelope-v1 base64).
    #[arg(long)]
    pub lenient: bool,
    #[command(flatten)]
    pub encode: EncodeArgs,
    /// Input file, or - for stdin.
    #[arg(default_value = "-")]
    pub file: PathBuf,
}

#[derive(Args)]
pub struct WrapArgs {
    /// Target format id.
    #[arg(long, value_name = "ID")]
    pub format: String,
    /// Tool name.
    #[arg(long)]
    pub tool: Option<String>,
    /// Human-readable summary (tool-envelope-v1 block 0, an MCP text block).
    #[arg(long)]
    pub summary: Option<String>,
    /// Canonical metadata, repeatable. Keys: provider, model, toolCallId, contentType
    /// (0-5 or Unknown/Text/List/Object/Image/Binary), payloadPath, command, source
    /// (local, http, mcp), operationId, workspace, durationMs, statusCode.
    #[arg(long = "meta", value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// ctxo: workspace root written as _meta.workspace.root (same as --meta workspace=PATH).
    #[arg(long, value_name = "PATH")]
    pub workspace_root: Option<String>,
    /// Also write the loss report to stderr.
    #[arg(long)]
    pub report: bool,
    #[command(flatten)]
    pub encode: EncodeArgs,
    /// Payload file (raw JSON), or - for stdin.
    #[arg(default_value = "-")]
    pub file: PathBuf,
}

#[derive(Args)]
pub struct UnwrapArgs {
    /// Source format id (detected when absent).
    #[arg(long, value_name = "ID")]
    pub from: Option<String>,
    /// Read leniently where the reference does (tool-envelope-v1 base64).
    #[arg(long)]
    pub lenient: bool,
    /// Input file, or - for stdin.
    #[arg(default_value = "-")]
    pub file: PathBuf,
}

#[derive(Args)]
pub struct ShapeArgs {
    /// Output format id (default: the input's own format).
    #[arg(long, value_name = "ID")]
    pub format: Option<String>,
    /// Input format id (detected when absent).
    #[arg(long, value_name = "ID")]
    pub from: Option<String>,
    /// The most bytes the whole output may have. Arrays at any depth keep a prefix, long
    /// strings are cut at UTF-8 boundaries, and the output says what was cut.
    #[arg(long, value_name = "BYTES")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub tokens: TokenArgs,
    /// Mask secrets (values under secret-like keys, tokens and keys in any text) before
    /// anything is written.
    #[arg(long)]
    pub redact: bool,
    /// Payloads serialized larger than this go to the store and are replaced by a summary
    /// and an artifact reference (exactly this many bytes stay inline) [default: 32768].
    #[arg(long, value_name = "BYTES")]
    pub inline_threshold: Option<usize>,
    /// Payloads larger than this become an EOUTPUT_TOO_LARGE error envelope.
    #[arg(long, value_name = "BYTES")]
    pub max_capture: Option<usize>,
    /// Never offload (keep payloads inline; the budget cuts them instead).
    #[arg(long)]
    pub no_offload: bool,
    /// Store for offloaded payloads: a folder or s3://BUCKET/PREFIX. Default:
    /// $ENVELOPE_STORE, else .envelope/store.
    #[arg(long, value_name = "DIR|s3://BUCKET/PREFIX")]
    pub store: Option<String>,
    /// Read leniently where the reference does (tool-envelope-v1 base64).
    #[arg(long)]
    pub lenient: bool,
    /// Write the report (what was lost, what was redacted) to stderr as JSON.
    #[arg(long)]
    pub report: bool,
    /// Timestamp (RFC 3339) to write where the format needs one and the input has none.
    #[arg(long, value_name = "RFC3339")]
    pub ts: Option<String>,
    /// Input file, or - for stdin.
    #[arg(default_value = "-")]
    pub file: PathBuf,
}

#[derive(Args)]
pub struct ArtifactArgs {
    /// Store location: a folder or s3://BUCKET/PREFIX (credentials and endpoint from the
    /// AWS_* environment). Default: $ENVELOPE_STORE, else .envelope/store.
    #[arg(long, global = true, value_name = "DIR|s3://BUCKET/PREFIX")]
    pub store: Option<String>,
    #[command(subcommand)]
    pub command: ArtifactCommand,
}

#[derive(Subcommand)]
pub enum ArtifactCommand {
    /// Store a file's bytes; prints the digest.
    Put {
        /// Media type recorded in the sidecar.
        #[arg(long, default_value = "application/octet-stream")]
        kind: String,
        /// Tag recorded in the sidecar (repeatable).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Print the sidecar as JSON instead of the digest.
        #[arg(long)]
        json: bool,
        /// File, or - for stdin.
        #[arg(default_value = "-")]
        file: PathBuf,
    },
    /// Write the exact stored bytes to stdout (exit 1 if they fail verification).
    Get {
        /// The artifact: sha256:<hex>, or the envelope://artifact/sha256/<hex> link of
        /// proxy and serve.
        #[arg(value_name = "DIGEST")]
        digest: String,
    },
    /// Check blobs and sidecars (all artifacts when no digest is given).
    Verify {
        /// The artifacts to check (sha256:<hex> or envelope://artifact/sha256/<hex>);
        /// none: every artifact of the store.
        #[arg(value_name = "DIGEST")]
        digests: Vec<String>,
    },
    /// List artifacts: digest, size, kind, creation time (tab-separated; --json for NDJSON).
    Ls {
        /// One JSON object per artifact and line (its sidecar) instead of tab-separated
        /// columns.
        #[arg(long)]
        json: bool,
    },
    /// Remove leftovers of interrupted writes, orphaned sidecars and, with --older-than,
    /// artifacts older than that many seconds; with --ttl, --max-store-bytes and
    /// --max-results, the artifacts unused that long, then the least recently used until
    /// the store is within the caps (a read counts as a use in a local store).
    Gc {
        /// Also remove the artifacts stored (or, in a local store, read) more than SECONDS
        /// ago, owner markers included (0: every artifact).
        #[arg(long, value_name = "SECONDS")]
        older_than: Option<u64>,
        #[command(flatten)]
        limits: StoreLimitsArgs,
    },
}

/// The store's limits on use, the same for `artifact gc` (applied once) and for `proxy` and
/// `serve` (kept while running: see docs/proxy.md, "A store that manages itself").
#[derive(Args, Clone, Debug, Default)]
pub struct StoreLimitsArgs {
    /// Remove the stored results not used for SECONDS (a time to live since the last put or
    /// read; in an S3 store, since the last upload).
    #[arg(long, value_name = "SECONDS")]
    pub ttl: Option<u64>,
    /// Remove the least recently used stored results until their blobs take at most BYTES.
    #[arg(long, value_name = "BYTES")]
    pub max_store_bytes: Option<u64>,
    /// Remove the least recently used stored results until at most N are left (owner
    /// markers are not results: not counted, not removed).
    #[arg(long, value_name = "N")]
    pub max_results: Option<usize>,
}

impl StoreLimitsArgs {
    /// The limits as the store takes them (`older_than` unset).
    pub fn limits(&self) -> envelope_store::GcLimits {
        envelope_store::GcLimits::new()
            .idle(self.ttl.map(std::time::Duration::from_secs))
            .max_bytes(self.max_store_bytes)
            .max_artifacts(self.max_results)
    }

    /// Whether any limit is given.
    pub fn any(&self) -> bool {
        self.ttl.is_some() || self.max_store_bytes.is_some() || self.max_results.is_some()
    }
}

#[derive(Args)]
pub struct DemoArgs {
    /// Print every converted document, not just the summary lines.
    #[arg(long)]
    pub verbose: bool,
}

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args)]
#[command(
    long_about = "Speak MCP to a client on stdin/stdout (or Streamable HTTP with --listen) and relay \
to an upstream MCP server: COMMAND run as a child process over stdio, or --upstream-url.\n\n\
Every message passes through unchanged, except tools/call results: secrets are redacted, a result \
over --limit is stored whole in the store and cut to fit, with a link to the full result. The \
proxy adds the tool envelope_read and resources/read of envelope://artifact/sha256/<hex> URIs to \
read the full result back.\n\n\
Faults: when the upstream exits every pending request gets a JSON-RPC error naming the cause, \
and the next request starts it again (unless --no-restart); non-JSON lines from it are logged, never \
forwarded; when the client goes, the upstream's process group is ended.\n\n\
Example: envelope proxy --limit 16384 -- npx -y @modelcontextprotocol/server-filesystem /data",
    after_help = "Logs are JSON lines on stderr; a summary line is printed on exit."
)]
pub struct ProxyArgs {
    /// The most bytes a shaped tools/call result may have (its `result` object, compact
    /// JSON) [default: 16384, or none with --limit-tokens alone].
    #[arg(long, value_name = "BYTES")]
    pub limit: Option<usize>,
    /// The most tokens a shaped tools/call result may have, as --tokenizer counts its
    /// `result` object's JSON text. With --limit both hold; alone, it decides (no byte
    /// limit; --max-message still caps each message).
    #[arg(long, value_name = "TOKENS")]
    pub limit_tokens: Option<usize>,
    /// The tokenizer --limit-tokens counts with: o200k_base (GPT-4o, GPT-4.1, GPT-5,
    /// o-series) or cl100k_base (GPT-4, GPT-3.5) [default: o200k_base].
    #[arg(long, value_name = "NAME", requires = "limit_tokens")]
    pub tokenizer: Option<String>,
    /// Where full results are stored: a folder or s3://BUCKET/PREFIX (credentials from the
    /// AWS_* environment). Default: $ENVELOPE_STORE, else .envelope/store (relative to the
    /// working directory, as for `envelope shape`; give an absolute path in a client's
    /// configuration, which may start the proxy anywhere).
    #[arg(long, value_name = "DIR|s3://BUCKET/PREFIX")]
    pub store: Option<String>,
    #[command(flatten)]
    pub store_limits: StoreLimitsArgs,
    /// Per-tool settings (TOML: [tools."NAME or glob"] with limit, redact, pass_through,
    /// emit); refused at start with the line and reason when malformed.
    #[arg(long, value_name = "FILE.toml")]
    pub policy: Option<PathBuf>,
    /// The longest message read from a peer (a line over stdio), in bytes: a longer one is
    /// not kept, and its sender's request gets an error (an upstream's oversized answer
    /// becomes an error to the client that asked).
    #[arg(long, value_name = "BYTES", default_value_t = envelope_mcp::transport::lines::DEFAULT_MAX_MESSAGE)]
    pub max_message: usize,
    /// Do not redact secrets in results (redaction is on by default).
    #[arg(long)]
    pub no_redact: bool,
    /// Seconds to wait for the upstream's answer to each request; then the client gets an
    /// error and the upstream a notifications/cancelled [default: wait forever].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Do not start the upstream again after it exits. By default the next request starts
    /// it again and replays the client's initialize (requests pending at the exit still get
    /// an error); a crash in a row waits 0.25 s, 0.5 s, … up to 30 s, and at most 5 restarts
    /// a minute are made.
    #[arg(long)]
    pub no_restart: bool,
    /// Restart is the default now; kept so that older command lines still work.
    #[arg(long, hide = true)]
    pub restart: bool,
    /// off, error, warn, info or debug: how much to log on stderr (JSON lines).
    #[arg(long, value_name = "LEVEL", default_value = "warn")]
    pub log_level: String,
    /// Write the counters as JSON to FILE on exit (calls, bytes_from_upstream,
    /// bytes_to_client, bytes_saved, results_offloaded, redactions, errors, per_tool).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Front a Streamable HTTP MCP server at URL instead of running COMMAND.
    #[arg(long, value_name = "URL")]
    pub upstream_url: Option<String>,
    /// An extra HTTP header for --upstream-url, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "upstream_url")]
    pub headers: Vec<String>,
    /// Serve Streamable HTTP at http://ADDR:PORT/mcp instead of stdio (loopback unless
    /// ENVELOPE_TOKEN is set); each client session gets its own upstream. GET /metrics
    /// gives the --stats counters in the Prometheus text format (the same token).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    #[command(flatten)]
    pub http_limits: HttpLimitsArgs,
    /// The upstream server's command and arguments: after `--`, or simply after the
    /// options (everything from the first argument that is not an option on is the
    /// command's, some launchers drop a `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

/// The MCP clients `envelope setup` knows, each with its configuration file's place and shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Desktop: claude_desktop_config.json, `mcpServers`.
    ClaudeDesktop,
    /// Claude Code: ~/.claude.json (`mcpServers` and each `projects.<path>.mcpServers`) or a
    /// project's .mcp.json.
    ClaudeCode,
    /// Cursor: ~/.cursor/mcp.json or a project's .cursor/mcp.json, `mcpServers`.
    Cursor,
    /// VS Code: .vscode/mcp.json of the current folder (or a profile's mcp.json), `servers`.
    #[value(alias = "vs-code")]
    Vscode,
    /// Windsurf: ~/.codeium/windsurf/mcp_config.json, `mcpServers`.
    Windsurf,
    /// OpenAI Codex CLI: ~/.codex/config.toml (or $CODEX_HOME/config.toml), `[mcp_servers.NAME]`.
    Codex,
    /// Gemini CLI: ~/.gemini/settings.json or a project's .gemini/settings.json, `mcpServers`.
    #[value(alias = "gemini-cli")]
    Gemini,
}

#[derive(Args)]
#[command(
    long_about = "Rewrite a client's MCP configuration file so that every server runs behind \
`envelope proxy`: a command `C ARGS...` becomes `ENVELOPE proxy [PROXY OPTIONS] -- C ARGS...` \
(env, cwd and every other field kept), a Streamable HTTP server (url and headers) becomes \
`ENVELOPE proxy [PROXY OPTIONS] --upstream-url URL --header 'Name: value'...`. SSE servers, \
servers that sign in with OAuth and servers already behind `envelope proxy` are left as they \
are (each is named on stderr with the reason). Every other key of the file and its order are \
kept; running it twice changes nothing the second time.\n\n\
The original is kept in FILE.envelope-backup (written once, on the first change); --undo puts \
it back. See docs/proxy.md, \"envelope setup\", for each client's file.\n\n\
Example: envelope setup claude-desktop -- --limit 16384 --store ~/.cache/envelope/store"
)]
pub struct SetupArgs {
    /// The client: claude-desktop, claude-code, cursor, vscode, windsurf, codex or gemini.
    #[arg(value_enum, value_name = "CLIENT")]
    pub client: Client,
    /// The configuration file to change, instead of the client's usual place (a project's
    /// file: .mcp.json, .cursor/mcp.json, .gemini/settings.json, .codex/config.toml).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Print the change as a unified diff on stdout and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Put back the file kept in FILE.envelope-backup, and remove the backup.
    #[arg(long)]
    pub undo: bool,
    /// The envelope binary the client should run [default: this binary's absolute path].
    #[arg(long, value_name = "PATH")]
    pub envelope: Option<PathBuf>,
    /// Options for `envelope proxy`, after `--` (--limit, --store, --policy, --no-redact…),
    /// written into every entry before the server's own command.
    #[arg(last = true, value_name = "PROXY OPTIONS")]
    pub proxy_options: Vec<String>,
}

#[derive(Args)]
#[command(
    long_about = "Serve the operations of a registry file (see `envelope ops --help`) as one MCP \
server: each operation a tool (its id with every character outside [A-Za-z0-9_-] made _), each \
result a CallToolResult whose structuredContent is the envelope's data, shaped like the proxy's \
(secrets masked, the full result in the store, the rest cut to --limit, a link to the full \
result; envelope_read and resources/read give it back).\n\n\
MCP on stdio by default, or Streamable HTTP at http://ADDR/mcp with --listen; --http ADDR serves \
the HTTP view (alone: no MCP on stdio; with --listen: both): POST /ops/{id} (the input as the JSON body) answers the envelope, GET \
/openapi.json describes every operation. Both bind loopback unless tokens are given \
(--tokens FILE or ENVELOPE_TOKENS, JSON {\"<token>\": {\"id\": ..., \"scopes\": [...]}}); with \
tokens, HTTP requests without a valid bearer token get 401 and each call runs as the token's \
identity (a tool it may not call is not listed). Stdio callers, and HTTP callers when no \
tokens are set, are {id: \"serve\", scopes: --scope...} (no identity without --scope).\n\n\
With --nats, calls go to `envelope ops worker` processes of the same registry over NATS \
instead of running here. See docs/serve.md."
)]
pub struct ServeArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Serve MCP over Streamable HTTP at http://ADDR:PORT/mcp instead of stdio. An address
    /// that is not loopback needs tokens (--tokens or ENVELOPE_TOKENS).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    /// The longest message read from a peer (a line over stdio), in bytes: a longer one is
    /// not kept, and its sender's request gets an error (an upstream's oversized answer
    /// becomes an error to the client that asked).
    #[arg(long, value_name = "BYTES", default_value_t = envelope_mcp::transport::lines::DEFAULT_MAX_MESSAGE)]
    pub max_message: usize,
    /// Serve the HTTP view (POST /ops/{id} with a JSON body, GET /openapi.json, GET
    /// /metrics in the Prometheus text format) at ADDR:PORT: beside --listen, or alone (then no MCP on stdio; it runs until a signal).
    /// An address that is not loopback needs tokens (--tokens or ENVELOPE_TOKENS).
    #[arg(long, value_name = "ADDR:PORT")]
    pub http: Option<String>,
    #[command(flatten)]
    pub http_limits: HttpLimitsArgs,
    /// The most bytes of each result: a tools/call result (compact JSON), an HTTP envelope, a
    /// subscription event [default: 16384, or none with --limit-tokens alone].
    #[arg(long, value_name = "BYTES")]
    pub limit: Option<usize>,
    /// The most tokens of each tools/call result (and envelope_read, envelope_search,
    /// envelope_list answer), as --tokenizer counts its JSON text. With --limit both hold;
    /// alone, it decides (the HTTP view, bounded in bytes, gets 4 bytes a token).
    #[arg(long, value_name = "TOKENS")]
    pub limit_tokens: Option<usize>,
    /// The tokenizer --limit-tokens counts with: o200k_base or cl100k_base [default:
    /// o200k_base].
    #[arg(long, value_name = "NAME", requires = "limit_tokens")]
    pub tokenizer: Option<String>,
    /// Where full results are stored: a folder or s3://BUCKET/PREFIX (shared by several
    /// serve instances and workers). Default: $ENVELOPE_STORE, else .envelope/store.
    #[arg(long, value_name = "DIR|s3://BUCKET/PREFIX")]
    pub store: Option<String>,
    #[command(flatten)]
    pub store_limits: StoreLimitsArgs,
    /// Do not redact secrets in results (redaction is on by default).
    #[arg(long)]
    pub no_redact: bool,
    /// Per-tool settings, the proxy's policy file (TOML: [tools."NAME or glob"] with limit,
    /// redact, pass_through, emit; tool names as served, `git_log`); refused at start with
    /// the line and reason when malformed.
    #[arg(long, value_name = "FILE.toml")]
    pub policy: Option<PathBuf>,
    /// Run calls on `envelope ops worker` processes over this NATS server.
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
    /// With --nats: the subject prefix shared with the workers.
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = "envelope",
        requires = "nats"
    )]
    pub prefix: String,
    /// Bearer tokens and their identities, JSON {"<token>": {"id": "...", "scopes": [...]}}
    /// (or the ENVELOPE_TOKENS environment variable).
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// A scope of the stdio caller (repeatable; also of HTTP callers when no tokens are set).
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// Seconds a call may run before it is stopped with TIMEOUT [default: 120].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Seconds a subscription may go without an event before it is stopped [default: 60].
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<f64>,
    /// off, error, warn, info or debug: how much to log on stderr (JSON lines).
    #[arg(long, value_name = "LEVEL", default_value = "warn")]
    pub log_level: String,
    /// Write the counters as JSON to FILE on exit.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
}

/// What one client may hold of an HTTP server (`--listen`, `--http`), shared by `proxy` and
/// `serve`; unused on stdio.
#[derive(Args, Debug, Clone, Default)]
pub struct HttpLimitsArgs {
    /// HTTP: seconds a connection has to send a request's headers, else it is closed
    /// [default: 10].
    #[arg(long, value_name = "SECS")]
    pub header_timeout: Option<f64>,
    /// HTTP: seconds a request has to send its whole body after its headers, else 408
    /// [default: 60].
    #[arg(long, value_name = "SECS")]
    pub body_timeout: Option<f64>,
    /// HTTP: connections served at once; a new one beyond them is answered 503
    /// [default: 512].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// HTTP: MCP sessions one client IP address may hold at once; an initialize beyond them
    /// gets 429 [default: 16, for remote clients only; given, for local ones too].
    #[arg(long, value_name = "N")]
    pub max_sessions_per_client: Option<usize>,
    /// HTTP: seconds an MCP session may sit unused (no request, no GET stream) before it is
    /// ended with its upstream [default: 1800].
    #[arg(long, value_name = "SECS")]
    pub session_idle_timeout: Option<f64>,
}

/// `--registry`, shared by `ops`, `call` and `serve`.
#[derive(Args)]
pub struct RegistryArgs {
    /// The registry file: TOML, or JSON when it ends in .json (an MCP client configuration
    /// file is one as is).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "envelope.toml",
        global = true
    )]
    pub registry: PathBuf,
}

#[derive(Args)]
#[command(
    long_about = "The operations of a registry file: commands.<ns>.<name> (local programs, argv \
without a shell), mcpServers.<ns> (each tool of an MCP server, stdio or Streamable HTTP; an MCP \
client configuration file is a registry as is) and openapi.<ns> (each path and method of an \
OpenAPI 3.0/3.1 document, JSON or YAML). See docs/operations.md."
)]
pub struct OpsArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(subcommand)]
    pub command: OpsCommand,
}

#[derive(Subcommand)]
pub enum OpsCommand {
    /// One line per operation: id, type, description, input and output schemas
    /// (tab-separated; --json prints one operation spec per line).
    List {
        /// One operation spec (JSON) per line.
        #[arg(long)]
        json: bool,
    },
    /// Serve the registry's operations to callers over NATS until killed: call.requested on
    /// <prefix>.call.<id> (queue group <prefix>-workers), answers to the request's reply
    /// subject, call.aborted on <prefix>.abort.<requestId> (docs/operations.md).
    Worker(WorkerArgs),
}

/// `envelope ops worker`.
#[derive(Args)]
pub struct WorkerArgs {
    /// The NATS server, e.g. nats://127.0.0.1:4222.
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// The subject prefix shared with the callers.
    #[arg(long, value_name = "PREFIX", default_value = "envelope")]
    pub prefix: String,
    /// Fit every envelope sent into BYTES of compact JSON, as `envelope call --limit` does: a
    /// payload over BYTES goes to the store (shared with the callers: a folder they can read,
    /// or S3), the rest is cut. Envelopes over the NATS server's maximum payload (1 MB by
    /// default) are otherwise refused with an error.
    #[arg(long, value_name = "BYTES")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub tokens: TokenArgs,
    /// With --limit: the store for offloaded payloads, a folder or s3://BUCKET/PREFIX.
    /// Default: $ENVELOPE_STORE, else .envelope/store.
    #[arg(long, value_name = "DIR|s3://BUCKET/PREFIX", requires = "limit")]
    pub store: Option<String>,
    /// Mask secrets in every envelope before it is sent.
    #[arg(long)]
    pub redact: bool,
}

#[derive(Args)]
#[command(
    long_about = "Call operation ID of the registry: its input validated, the operation run, its \
result printed as one {data, meta} envelope line (exit 0).\n\n\
A call that fails prints its error as one JSON line {\"code\", \"message\", \"details\"} on stderr \
and exits 1 (OPERATION_NOT_FOUND, ACCESS_DENIED, VALIDATION_ERROR, TIMEOUT, EXECUTION_ERROR…). \
A bad command line, an unreadable input or an invalid registry exits 2."
)]
pub struct CallArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// The operation id, namespace.name.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The input: JSON text, or @FILE (@- for stdin) [default: {}].
    #[arg(long, value_name = "JSON|@FILE")]
    pub input: Option<String>,
    /// A scope of the caller (repeatable): the caller is {id: "cli", scopes}. Without any,
    /// the call has no identity and operations with access rules refuse it.
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// Seconds to wait for the result; then the operation is stopped (a command's process
    /// group killed) and the call fails with TIMEOUT.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Fit the printed envelope, its newline counted, into BYTES, as `envelope shape` does: a
    /// payload larger than BYTES goes to the store (a summary and its artifact digest stay),
    /// what still does not fit is cut, and meta.budget says what was cut.
    #[arg(long, value_name = "BYTES")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub tokens: TokenArgs,
    /// With --limit: never offload (the budget cuts the payload instead).
    #[arg(long, requires = "limit")]
    pub no_offload: bool,
    /// With --limit: the store for offloaded payloads, a folder or s3://BUCKET/PREFIX.
    /// Default: $ENVELOPE_STORE, else .envelope/store.
    #[arg(
        long,
        value_name = "DIR|s3://BUCKET/PREFIX",
        requires = "limit",
        conflicts_with = "no_offload"
    )]
    pub store: Option<String>,
    /// Mask secrets in the envelope (values under secret-like keys, tokens and keys in any
    /// text) before it is printed.
    #[arg(long)]
    pub redact: bool,
    /// Call through the workers (`envelope ops worker`) of this NATS server instead of
    /// running the operation here. Without --timeout the call waits at most 60 s.
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
    /// With --nats: the subject prefix shared with the workers.
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = "envelope",
        requires = "nats"
    )]
    pub prefix: String,
    /// Subscribe: print one envelope per line until the subscription completes (exit 0),
    /// fails (its error on stderr, exit 1) or idles out.
    #[arg(long)]
    pub subscribe: bool,
    /// With --subscribe: the longest wait in seconds between two envelopes (then TIMEOUT).
    #[arg(long, value_name = "SECS", requires = "subscribe")]
    pub idle_timeout: Option<f64>,
    /// An MCP tool's envelope in full: meta.structuredContent and the content blocks that
    /// repeat data are kept (by default they are left out, data is printed once).
    #[arg(long)]
    pub full: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    /// Every argument and subcommand that `--help` lists, with no help text of its own.
    fn without_help(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in command.get_arguments() {
            if arg.is_hide_set() {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path}: argument {}", arg.get_id()));
            }
        }
        for sub in command.get_subcommands() {
            if sub.is_hide_set() {
                continue;
            }
            let sub_path = format!("{path} {}", sub.get_name());
            if sub.get_about().is_none() && sub.get_long_about().is_none() {
                missing.push(format!("{sub_path}: subcommand"));
            }
            without_help(sub, &sub_path, missing);
        }
    }

    #[test]
    fn every_argument_and_subcommand_has_help() {
        let mut command = super::Cli::command();
        // Built as parsing builds it: --help, --version and global flags in every subcommand.
        command.build();
        let mut missing = Vec::new();
        without_help(&command, "envelope", &mut missing);
        assert!(
            missing.is_empty(),
            "no help text ({}):\n{}",
            missing.len(),
            missing.join("\n")
        );
    }

    #[test]
    fn the_walk_finds_an_argument_without_help() {
        let bare = clap::Command::new("x")
            .about("x")
            .arg(clap::Arg::new("quiet").long("quiet"))
            .subcommand(clap::Command::new("sub"));
        let mut missing = Vec::new();
        without_help(&bare, "x", &mut missing);
        assert_eq!(missing, ["x: argument quiet", "x sub: subcommand"]);
    }
}
