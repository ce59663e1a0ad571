#!/usr/bin/env bash
# Runs the official MCP conformance suite against tako's conformance client,
# each scenario on its own, and ends with the line "N passed, M failed".
#
#   interop/conformance/run.sh [CLIENT_BINARY]
#
# Three sets, every client scenario of each:
#   - 0.1.16: every client scenario the suite lists (26);
#   - 0.2.0-alpha.12 --requirements 2025-11-25: the required client
#     scenarios and the client scenarios it runs but does not score (25);
#   - 0.2.0-alpha.12 --requirements 2026-07-28: likewise (39).
# Each set runs twice: once through the SDK's own negotiation (the client
# pins no revision: server/discover, then initialize for a legacy server,
# as for any program with default options; label .../negotiated), and once
# with the revision pinned (label .../pinned: the one the 0.2.0-alpha suite
# names, 2025-11-25 for 0.1.16, which names none).
# The lists come from the suites' own `list` command, checked against those
# counts so that a list that silently shrinks fails the run. A requirement
# set cannot be combined with --scenario, so each of its scenarios runs with
# --scenario NAME --spec-version V --force, which is what --requirements V
# does for each (it runs them at V's wire, applicable or not).
#
# A scenario passes when the suite exits 0 (no FAILURE or WARNING check, no
# timeout, no unexpected client error) AND it wrote a checks.json with at
# least one SUCCESS check AND the client made at least one HTTP request to
# the scenario's servers (register.mjs counts them): a skipped scenario, or
# one whose checks all pass vacuously because the client never tried (a
# check that the client did NOT do something passes for a client that
# never starts), does not count.
#
# CONFORMANCE_ONLY, when set, replaces the sets with its own entries, one a
# line: "SUITE|SCENARIO|FLAGS|CLIENT_FLAGS" with SUITE 0.1.16 or
# 0.2.0-alpha.12; CLIENT_FLAGS (optional) are the client's own, such as
# "-protocol negotiate".
# conformance_test.go uses it to check, on a few scenarios, that a client
# that does nothing fails.
#
# Scenarios run $CONFORMANCE_JOBS at a time (default 3). Without an argument
# the script builds interop/cmd/conformance-client into a temporary
# directory. The suites come from the repository's node_modules (package.json
# pins @modelcontextprotocol/conformance 0.1.16 and conformance-next =
# 0.2.0-alpha.12); run `npm ci` in the root first. Results are kept under
# $CONFORMANCE_OUT (default: a temporary directory) by the suite's -o flag.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${CONFORMANCE_OUT:-$tmp/results}
mkdir -p "$out"
jobs=${CONFORMANCE_JOBS:-3}

client=${1:-}
if [ -z "$client" ]; then
  (cd "$root/interop" && go build -o "$tmp/conformance-client" ./cmd/conformance-client) || {
    echo "building the conformance client failed"; echo "0 passed, 1 failed"; exit 1; }
  client=$tmp/conformance-client
fi

stable=$root/node_modules/@modelcontextprotocol/conformance/dist/index.js
next=$root/node_modules/conformance-next/dist/index.js
suite() { (cd "$here" && node --import ./register.mjs "$@"); }

# entries: label|script|scenario|suite flags|client flags
entries=()
add_set() { # label script want "client flags" suite flags... (scenario names on stdin)
  local label=$1 script=$2 want=$3 cflags=$4 n=0 name
  shift 4
  while read -r name; do
    [ -n "$name" ] || continue
    entries+=("$label|$script|$name|$*|$cflags")
    n=$((n + 1))
  done
  if [ "$n" -ne "$want" ]; then
    echo "FAIL  $label: the suite lists $n client scenarios, expected $want"
    listing_failed=1
  fi
}
listing_failed=0
if [ -n "${CONFORMANCE_ONLY:-}" ]; then
  while IFS='|' read -r set name flags cflags; do
    [ -n "$set" ] || continue
    case $set in
      0.1.16) script=$stable ;;
      0.2.0-alpha.12) script=$next ;;
      *) echo "FAIL  CONFORMANCE_ONLY: unknown suite $set"; listing_failed=1; continue ;;
    esac
    entries+=("$set|$script|$name|$flags|$cflags")
  done <<<"$CONFORMANCE_ONLY"
else
  names=$(suite "$stable" list --client | awk '/^  - /{print $2}')
  add_set "0.1.16/negotiated" "$stable" 26 "" <<<"$names"
  add_set "0.1.16/pinned" "$stable" 26 "-protocol 2025-11-25" <<<"$names"
  for rev in 2025-11-25 2026-07-28; do
    want=25; [ "$rev" = 2026-07-28 ] && want=39
    names=$(suite "$next" list --requirements "$rev" |
      awk '/^Client scenarios/{c=1;next} /^$/{c=0} c&&/^  - /{print $2} /\[client\]$/{print $2}')
    add_set "0.2.0-alpha.12/$rev/negotiated" "$next" "$want" "-protocol negotiate" --spec-version "$rev" --force <<<"$names"
    add_set "0.2.0-alpha.12/$rev/pinned" "$next" "$want" "" --spec-version "$rev" --force <<<"$names"
  done
fi

# run_one INDEX ENTRY: runs one scenario, writes "PASS ..." or "FAIL ..."
# (with the failing checks) to $tmp/result.INDEX.
run_one() {
  local i=$1 label script scenario flags cflags dir log rc checks succ bad requests
  IFS='|' read -r label script scenario flags cflags <<<"$2"
  dir=$out/${label//\//_}/${scenario//\//_}
  log=$dir.log
  mkdir -p "$dir"
  # shellcheck disable=SC2086 # flags is a list of words
  TAKO_CONFORMANCE_REQUESTS=$dir.requests \
    suite "$script" client --command "$client${cflags:+ $cflags}" --scenario "$scenario" $flags -o "$dir" >"$log" 2>&1
  rc=$?
  requests=$(cat "$dir.requests" 2>/dev/null || echo 0)
  checks=$(find "$dir" -name checks.json | head -n 1)
  succ=0; bad=0
  if [ -n "$checks" ]; then
    succ=$(grep -c '"status": "SUCCESS"' "$checks")
    bad=$(grep -cE '"status": "(FAILURE|WARNING)"' "$checks")
  fi
  {
    if [ "$rc" -eq 0 ] && [ "$succ" -gt 0 ] && [ "$bad" -eq 0 ] && [ "$requests" -gt 0 ]; then
      echo "PASS  $label  $scenario ($succ checks passed, $requests requests)"
    else
      why="exit $rc"
      [ -z "$checks" ] && why="$why, no checks.json (skipped or did not run)"
      [ -n "$checks" ] && [ "$succ" -eq 0 ] && why="$why, no SUCCESS check"
      [ "$bad" -gt 0 ] && why="$why, $bad FAILURE/WARNING checks"
      [ "$requests" -eq 0 ] && why="$why, the client made no request"
      echo "FAIL  $label  $scenario ($why)"
      grep -E "FAILURE|WARNING|Error|error" "$log" | head -n 20 | sed 's/^/      /'
    fi
  } >"$tmp/result.$i"
}

i=0
for entry in "${entries[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_one "$i" "$entry" &
  i=$((i + 1))
done
wait

passed=0
failed=$listing_failed
for ((j = 0; j < i; j++)); do
  cat "$tmp/result.$j"
  if grep -q '^PASS' "$tmp/result.$j"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
