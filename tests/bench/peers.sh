#!/bin/sh
# peers.sh - `make bench-peers`: logitlab's fast sampler against llama.cpp's on the
# same row and the same chains (tests/bench/bench_chains.h), side by side.
#
# llama.cpp is the one node-llama-cpp ships (tests/oracle/fetch-llama.sh fetches and
# builds it under build/oracle/, once); peer_llama.cpp is linked against that build.
# Each size runs PAIRS pairs of processes, logitlab's and llama.cpp's in turn, every
# one pinned to the same core, so that a change in the machine's load falls on both;
# each process prints its medians of ROUNDS interleaved rounds (thread CPU time), and
# the table gives the median over the processes.
#
# Usage: tests/bench/peers.sh BENCH_FAST [PAIRS] [ROUNDS]
# (LOGITLAB_VECTOR=avx2 times logitlab's AVX2 build on a CPU that has AVX-512.)
set -eu
FAST=$1
PAIRS=${2:-7}
ROUNDS=${3:-31}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/oracle
LB=$OUT/llama-build
PEER=$OUT/peer_llama
CORE=$(($(nproc) - 1)) # the last core: the first takes the machine's interrupts more often

"$ROOT"/tests/oracle/fetch-llama.sh >&2

if [ ! -x "$PEER" ] || [ "$ROOT"/tests/bench/peer_llama.cpp -nt "$PEER" ] ||
	[ "$ROOT"/tests/bench/bench_chains.h -nt "$PEER" ]; then
	echo "peers: building $PEER" >&2
	${CXX:-g++} -std=c++17 -O2 -Wall -Wextra -Werror \
		-I"$OUT"/llama.cpp/include -I"$OUT"/llama.cpp/ggml/include \
		-I"$ROOT"/src -I"$ROOT"/tests/bench -o "$PEER" "$ROOT"/tests/bench/peer_llama.cpp \
		"$LB"/src/libllama.a "$LB"/ggml/src/libggml.a "$LB"/ggml/src/libggml-cpu.a \
		"$LB"/ggml/src/libggml-base.a -fopenmp -lpthread -ldl -lm
fi

PIN=""
if command -v taskset >/dev/null 2>&1; then
	PIN="taskset -c $CORE"
else
	echo "peers: no taskset: the processes are not pinned" >&2
fi

LINES=$(mktemp)
trap 'rm -f "$LINES"' EXIT
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
MAIN=128256 # Llama 3's vocabulary: the full table; the other sizes give ratios
SIZES=$("$FAST" --sizes)
for V in $SIZES; do
	i=0
	while [ $i -lt "$PAIRS" ]; do
		$PIN "$FAST" --peer "$V" "$ROUNDS" >>"$LINES"
		$PIN "$PEER" "$V" "$ROUNDS" >>"$LINES"
		i=$((i + 1))
	done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "logitlab's fast sampler and llama.cpp's ($(cut -d' ' -f2 "$OUT"/llama-commit.txt), from $(cut -d' ' -f3 "$OUT"/llama-commit.txt))"
echo "machine: ${MODEL:-unknown}, $(nproc) cores; one thread, pinned to core $CORE"
echo "logitlab's vector path: ${LOGITLAB_VECTOR:-the best this CPU runs} (LOGITLAB_VECTOR=avx512, avx2 or baseline forces one)"
echo "load average (1, 5, 15 min): $LOAD_BEFORE before, $LOAD_AFTER after"
echo "us per call: median of $PAIRS interleaved processes, each the median of $ROUNDS rounds;"
echo "ratio: logitlab / llama.cpp on the same chain (below 1.00: logitlab is faster)"
echo

# The chains' names (bench_chains.h's, as bench_fast prints them), then the
# medians over the processes, one line per cell: V LETTER COLUMN MEDIAN.
grep '^chain ' "$LINES" | sort -u | cut -d' ' -f2- >"$LINES.med"
grep '^cell ' "$LINES" | sort -k2,2n -k3,3 -k4,4 -k5,5g | awk '
	{ key = $2 " " $3 " " $4; v[key, ++n[key]] = $5; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key } }
	END { for (i = 1; i <= nk; i++) { k = keys[i]; m = n[k]; print k, v[k, int((m + 1) / 2)] } }
' >>"$LINES.med"
mv "$LINES.med" "$LINES"

awk -v main="$MAIN" -v sizes="$SIZES" '
	NF >= 2 && $1 !~ /^[0-9]+$/ { l = $1; $1 = ""; names[l] = "(" l ")" $0; order[++nl] = l; next }
	{ t[$1, $2, $3] = $4 }
	END {
		V = main
		printf "V = %d\n", V
		printf "%-50s %9s %9s %9s %7s %7s\n", "chain", "lesson", "llamacpp", "llama.cpp", "ratio", "ratio"
		printf "%-50s %9s %9s %9s %7s %7s\n", "", "order", "order", "", "lesson", "l.cpp"
		worst = 0
		for (j = 1; j <= nl; j++) {
			l = order[j]
			p = t[V, l, "peer"]
			r1 = t[V, l, "lesson"] / p; r2 = t[V, l, "llamacpp"] / p
			if (r1 > worst) worst = r1
			if (r2 > worst) worst = r2
			printf "%-50s %9.1f %9.1f %9.1f %7.2f %7.2f\n", names[l], t[V, l, "lesson"], t[V, l, "llamacpp"], p, r1, r2
		}
		am = t[V, "-", "argmax"]
		printf "greedy / bare float argmax (%.1f us): %.2f (lesson order), %.2f (llama.cpp order)\n",
		       am, t[V, "a", "lesson"] / am, t[V, "a", "llamacpp"] / am
		printf "largest ratio at V = %d: %.2f\n\n", V, worst
		ns = split(sizes, sz, /[ \n]+/)
		for (si = 1; si <= ns; si++) {
			V = sz[si] + 0
			if (V == 0 || V == main) continue
			printf "V = %6d, ratios (lesson order / llama.cpp order):", V
			for (j = 1; j <= nl; j++) {
				l = order[j]
				p = t[V, l, "peer"]
				printf " (%s) %.2f/%.2f", l, t[V, l, "lesson"] / p, t[V, l, "llamacpp"] / p
			}
			printf "\n"
		}
	}
' "$LINES"
