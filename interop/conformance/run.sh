#!/usr/bin/env bash
# Runs the official MCP conformance suite against tako's conformance client,
# each scenario on its own, and ends with the line "N passed, M failed".
#
#   interop/conformance/run.sh [CLIENT_BINARY]
#
# Without an argument it builds interop/cmd/conformance-client into a
# temporary directory. The suites come from the repository's node_modules
# (package.json pins @modelcontextprotocol/conformance 0.1.16 and
# conformance-next = 0.2.0-alpha.12); run `npm ci` in the root first.
# Results of each run are kept under $CONFORMANCE_OUT (default: a temporary
# directory) by the suite's -o flag.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${CONFORMANCE_OUT:-$tmp/results}
mkdir -p "$out"

client=${1:-}
if [ -z "$client" ]; then
  (cd "$root/interop" && go build -o "$tmp/conformance-client" ./cmd/conformance-client) || {
    echo "building the conformance client failed"; echo "0 passed, 1 failed"; exit 1; }
  client=$tmp/conformance-client
fi

stable=$root/node_modules/@modelcontextprotocol/conformance/dist/index.js
next=$root/node_modules/conformance-next/dist/index.js

# suite|scenario|extra flags
scenarios=(
  "stable|initialize|"
  "stable|tools_call|"
  "stable|sse-retry|"
  "stable|elicitation-sep1034-client-defaults|"
  "next|request-metadata|--spec-version 2026-07-28"
  "next|tools_call|--spec-version 2026-07-28"
  "next|http-standard-headers|--spec-version 2026-07-28"
  "next|http-custom-headers|--spec-version 2026-07-28"
  "next|http-invalid-tool-headers|--spec-version 2026-07-28"
  "next|json-schema-ref-no-deref|--spec-version 2026-07-28"
  "next|json-schema-2020-12-preservation|--spec-version 2026-07-28"
  "next|sep-2322-client-request-state|--spec-version 2026-07-28"
)

passed=0
failed=0
for entry in "${scenarios[@]}"; do
  IFS='|' read -r suite scenario flags <<<"$entry"
  if [ "$suite" = stable ]; then script=$stable; label="0.1.16"; else script=$next; label="0.2.0-alpha.12"; fi
  log=$out/$label-${scenario}.log
  # shellcheck disable=SC2086 # flags is a list of words
  (cd "$here" && node --import ./register.mjs "$script" client --command "$client" \
      --scenario "$scenario" $flags -o "$out/$label-$scenario") >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1)); echo "PASS  $label  $scenario $flags"
  else
    failed=$((failed + 1)); echo "FAIL  $label  $scenario $flags (exit $rc)"
    grep -E "FAILURE|WARNING|Error|error" "$log" | head -n 20 | sed 's/^/      /'
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
