#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 600) on the stable toolchain, seeded with the
# bundled examples and the protocol-v1 fixtures. Logs go to fuzz/logs/<target>.log.
# Usage: bash fuzz/run-all.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
mkdir -p logs
failed=0
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  cp ../examples/*.json "corpus/$target/" 2>/dev/null || true
  find ../../shared/fixtures \( -name '*.json' -o -name '*.ndjson' \) -exec cp {} "corpus/$target/" \; 2>/dev/null || true
  echo "== $target for ${seconds}s"
  cargo fuzz run -s none "$target" "corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=4096 \
    > "logs/$target.log" 2>&1 && echo "   clean: $(grep -E '^Done|#[0-9]+.*DONE' "logs/$target.log" | tail -1)" \
    || { echo "   CRASH: see fuzz/logs/$target.log"; failed=1; }
done
exit $failed
