#!/bin/sh
# make bench-model: logitlab's forward pass against llama.cpp's CPU build, same file, same run.
#
#   tests/oracle/bench.sh BENCH_LLAMA GEN_MODEL
#
# Generates a model of Llama 3.2 1B's shapes (16 layers, width 2,048, 32 heads, 8 KV heads,
# FFN 8,192, 128,256 tokens, tied head; random weights) in Q8_0 and Q4_K_M with GEN_MODEL,
# then times on each, one after the other, with the same thread count:
#   llama.cpp's llama-bench: prefill of BENCH_P tokens (pp), decode of BENCH_N tokens (tg);
#   logitlab's BENCH_LLAMA:  the same two, read from its RESULT line;
# and prints ms per token for both, the ratios (logitlab / llama.cpp: above 1 is slower), and
# each program's peak resident memory (the mapped weights it touched included).
# Environment: BENCH_P (64), BENCH_N (16), BENCH_R repetitions (3), BENCH_T threads (2),
# BENCH_TYPES (Q8_0 Q4_K_M), BENCH_LB_ARGS (more llama-bench options).
set -eu
BENCH=${1:-build/bench_llama}
GEN=${2:-build/gen_model}
P=${BENCH_P:-64}
N=${BENCH_N:-16}
R=${BENCH_R:-3}
T=${BENCH_T:-2}
TYPES=${BENCH_TYPES:-Q8_0 Q4_K_M}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/oracle
DIR=$OUT/bench
LB=$OUT/llama-build/bin/llama-bench
cd "$ROOT"
[ -x "$GEN" ] || make --no-print-directory "$GEN"
[ -x "$BENCH" ] || make --no-print-directory "$BENCH"
"$ROOT/tests/oracle/fetch-llama.sh"
mkdir -p "$DIR"

# Both programs spin or block on 2 cores: anything else running distorts the ratios (llama.cpp's
# spinning threads suffer most), so say so.
load() { cut -d' ' -f1 /proc/loadavg; }
if awk -v l="$(load)" 'BEGIN { exit !(l > 0.5) }'; then
	echo "bench.sh: warning: load average $(load) before starting; the figures need a quiet machine"
fi

# Peak resident set of a command run under /usr/bin/time -v, in MiB, from its log.
peak_mib() { awk -F: '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"; }

summary=$DIR/summary.txt
: >"$summary"
for type in $TYPES; do
	name=llama1b-$(echo "$type" | tr '[:upper:]' '[:lower:]')
	f=$DIR/$name.gguf
	# Random weights: which ones does not matter for timing, so a file is made again only when
	# missing or made with other arguments (a Q4_K_M file takes minutes), not for every rebuild
	# of GEN_MODEL.
	args="--arch llama3 --shape 1b --type $type --seed 7"
	if [ ! -f "$f" ] || [ "$(cat "$f.args" 2>/dev/null)" != "$args" ]; then
		echo "== $name: generating"
		start=$(date +%s)
		# shellcheck disable=SC2086 # args is a list of options
		"$GEN" $args -o "$f"
		echo "$args" >"$f.args"
		echo "   $(($(date +%s) - start)) s"
	fi

	echo "== $name: llama.cpp $(cut -c1-12 "$OUT/llama-commit.txt") llama-bench -t $T -p $P -n $N -r $R ${BENCH_LB_ARGS:-}"
	# shellcheck disable=SC2086 # BENCH_LB_ARGS: extra llama-bench options, e.g. --poll 0
	/usr/bin/time -v -o "$DIR/$name.llama.time" \
		"$LB" -m "$f" -t "$T" -p "$P" -n "$N" -r "$R" ${BENCH_LB_ARGS:-} -o csv >"$DIR/$name.llama.csv" \
		2>"$DIR/$name.llama.err" || {
		echo "bench.sh: llama-bench failed on $f (see $DIR/$name.llama.err)" >&2
		exit 1
	}
	# llama-bench's CSV: a header row, then one row per test (n_prompt, n_gen, avg_ts...).
	lb=$(/usr/bin/python3 -c '
import csv, sys
pp = tg = float("nan")
for r in csv.DictReader(open(sys.argv[1])):
    if int(r["n_prompt"]) == int(sys.argv[2]) and int(r["n_gen"]) == 0:
        pp = 1000 / float(r["avg_ts"])
    if int(r["n_gen"]) == int(sys.argv[3]) and int(r["n_prompt"]) == 0:
        tg = 1000 / float(r["avg_ts"])
print("%.3f %.3f" % (pp, tg))' "$DIR/$name.llama.csv" "$P" "$N")
	lb_pp=${lb% *}
	lb_tg=${lb#* }
	lb_mem=$(peak_mib "$DIR/$name.llama.time")
	echo "   prefill $lb_pp ms/token, decode $lb_tg ms/token, peak RSS $lb_mem MiB"

	echo "== $name: logitlab $BENCH -t $T -p $P -n $N -r $R"
	/usr/bin/time -v -o "$DIR/$name.logitlab.time" \
		"$BENCH" "$f" -t "$T" -p "$P" -n "$N" -r "$R" | tee "$DIR/$name.logitlab.txt" | sed 's/^/   /'
	res=$(grep '^RESULT ' "$DIR/$name.logitlab.txt" | tail -n 1)
	ll_pp=$(echo "$res" | sed -n 's/.*prefill_ms_per_token=\([0-9.]*\).*/\1/p')
	ll_tg=$(echo "$res" | sed -n 's/.*decode_ms_per_token=\([0-9.]*\).*/\1/p')
	ll_mem=$(peak_mib "$DIR/$name.logitlab.time")
	echo "$name $lb_pp $ll_pp $lb_tg $ll_tg $lb_mem $ll_mem" >>"$summary"
done

echo
echo "ms per token, $T threads, prefill of $P tokens, decode of $N (ratio: logitlab / llama.cpp)"
awk 'BEGIN { printf "%-16s %10s %10s %6s   %10s %10s %6s   %s\n", "model", "llama.cpp", "logitlab",
		"ratio", "llama.cpp", "logitlab", "ratio", "peak RSS MiB (llama.cpp, logitlab)"
	     printf "%-16s %28s   %28s\n", "", "--------- prefill ---------", "---------- decode ---------" }
	{ printf "%-16s %10.2f %10.2f %5.2fx   %10.2f %10.2f %5.2fx   %s, %s\n", $1, $2, $3, $3 / $2,
		$4, $5, $5 / $4, $6, $7 }' "$summary"
echo "goal: decode within 1.5x of llama.cpp, prefill within 3x; load average at the end $(load)"
