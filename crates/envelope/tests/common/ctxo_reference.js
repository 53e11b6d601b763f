// Ctxo's truncation as the shipped code does it (seeds/ctxo-response-envelope.md, the
// shipped code's 13 keys): `wrap(payload, limit, root)` returns the JSON text. The oracle
// of tests/ctxo.rs and the reference timed by benches/common/shaping.rs.
const HINTS = {
  impactedSymbols: 'Use search_symbols to find specific impacted symbols, or get_blast_radius with a confidence filter.',
  importers: 'Use find_importers with edgeKinds filter or maxDepth to narrow results.',
  deadSymbols: 'Use search_symbols with kind filter to find specific dead symbols.',
  unusedExports: 'Use find_importers to check specific symbols.',
  results: 'Use search_symbols or get_ranked_context with a narrower query.',
  rankings: 'Use get_symbol_importance with kind or filePattern filter to narrow results.',
  context: 'Use get_context_for_task with a smaller tokenBudget.',
  hierarchies: 'Use get_class_hierarchy with a specific symbolId.',
  scaffolding: 'Review the scaffolding markers directly in the listed files.',
  deadFiles: 'Use find_dead_code with includeTests to adjust scope.',
  files: 'Use get_changed_symbols with a narrower since ref or smaller maxFiles.',
  clusters: 'Use get_architectural_overlay with mode=communities and layer filter for a focused view.',
  clustersAffected: 'Use get_blast_radius on individual changed symbols for per-cluster impact.',
};
function wrap(payload, limit, root) {
  const totalBytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
  let key = null;
  for (const k of Object.keys(payload)) {
    if (k in HINTS && Array.isArray(payload[k]) && (key === null || payload[k].length > payload[key].length)) key = k;
  }
  const totalItems = key ? payload[key].length : 0;
  const meta = (returnedItems, truncated) => {
    const m = { totalItems, returnedItems, truncated, totalBytes };
    if (truncated) m.hint = HINTS[key];
    if (root) m.workspace = { root };
    return m;
  };
  if (totalBytes <= limit || key === null || totalItems <= 1) return JSON.stringify({ ...payload, _meta: meta(totalItems, false) });
  let lo = 1, hi = totalItems - 1, best = 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = JSON.stringify({ ...payload, [key]: payload[key].slice(0, mid), _meta: meta(mid, true) });
    if (Buffer.byteLength(c, 'utf8') <= limit) { best = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return JSON.stringify({ ...payload, [key]: payload[key].slice(0, best), _meta: meta(best, true) });
}
