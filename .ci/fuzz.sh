#!/usr/bin/env bash
# Runs every fuzz target of ./fuzz in turn, each for $FUZZTIME (default
# 10s), one `go test -run='^$' -fuzz='^FuzzX$' ./fuzz` per target (Go fuzzes
# one target per invocation), then prints what each reported: its last
# "fuzz: elapsed" line, with the execution count.
#
# Environment:
#   FUZZTIME          -fuzztime per target (default 10s; "1000x" for a count)
#   FUZZMINIMIZETIME  -fuzzminimizetime (default 200x: at most 200 calls of
#                     the target per input minimized). Go's default of 60s
#                     lets the minimization of one new input eat a short run,
#                     and any time limit is worse for the whole-table targets:
#                     Go's minimizer is quadratic in the input length, so on
#                     their inputs of a few KB it always runs out the limit,
#                     and when it does the coordinator's deadline fires with
#                     the worker's and it kills the worker, losing the
#                     worker's count. With 2s, FuzzTable and FuzzRoundTrip
#                     found new inputs faster than that, and spent a 10s run
#                     minimizing them: a few execs/s. A count ends in the
#                     worker, which reports back and fuzzes on.
#   FUZZTARGETS       space-separated targets (default: all of ./fuzz)
#
# A failing input is written to fuzz/testdata/fuzz/FuzzX/; the script goes
# on with the other targets and exits non-zero at the end.
#
# A run that fails with only "context deadline exceeded" (no failing input
# written, no panic) hit a race in Go's fuzzing coordinator at the
# -fuzztime boundary (go.dev/issue/75804, fixed in Go 1.27, present in
# 1.26.x); it is run once more, and only a second failure counts.
set -euo pipefail

cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-10s}
minimizetime=${FUZZMINIMIZETIME:-200x}
if [[ -n ${FUZZTARGETS:-} ]]; then
	read -r -a targets <<<"$FUZZTARGETS"
else
	mapfile -t targets < <(go test -list '^Fuzz' ./fuzz | grep '^Fuzz')
fi
if ((${#targets[@]} == 0)); then
	echo "fuzz.sh: no fuzz targets found in ./fuzz" >&2
	exit 1
fi

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

# Build once up front so the first target's time is not spent compiling.
go test -count=1 -run='^$' ./fuzz >/dev/null

declare -A summary
failed=()
for t in "${targets[@]}"; do
	echo "=== $t (fuzztime $fuzztime)"
	log=$logdir/$t.log
	status=0
	go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimizetime" ./fuzz >"$log" 2>&1 || status=$?
	if ((status != 0)) && grep -q 'context deadline exceeded' "$log" &&
		! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"; then
		echo "$t: fuzzing coordinator deadline race (go.dev/issue/75804), no failing input; running once more"
		status=0
		go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimizetime" ./fuzz >"$log" 2>&1 || status=$?
	fi
	last=$(grep 'fuzz: elapsed' "$log" | tail -n 1 || true)
	summary[$t]=${last:-"(no fuzz: elapsed line)"}
	if ((status != 0)); then
		failed+=("$t")
		cat "$log"
		summary[$t]="FAIL: ${summary[$t]}"
	else
		echo "$last"
	fi
done

echo
echo "=== fuzz summary (fuzztime $fuzztime per target)"
for t in "${targets[@]}"; do
	printf '%-16s %s\n' "$t" "${summary[$t]}"
done
if ((${#failed[@]} > 0)); then
	echo "failed: ${failed[*]}" >&2
	exit 1
fi
