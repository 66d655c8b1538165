#!/bin/sh
# make bench-model: logitlab's forward pass against llama.cpp's CPU build, same file, same run.
#
#   tests/oracle/bench.sh BENCH_LLAMA GEN_MODEL
#
# Generates models of Llama 3.2 1B's and 3B's shapes (1B: 16 layers, width 2,048, 32 heads;
# 3B: 28 layers, width 3,072, 24 heads; both 8 KV heads, FFN 8,192, 128,256 tokens, tied head;
# random weights) in Q8_0, Q4_K_M and Q3_K_M with GEN_MODEL, then times on each, one program
# after the other, with the same thread count:
#   llama.cpp's llama-bench: prefill of each BENCH_P length (pp), decode of BENCH_N tokens (tg);
#   logitlab's BENCH_LLAMA:  the same, read from its RESULT lines;
# and prints ms per token for both and the ratios (logitlab / llama.cpp: above 1 is slower),
# where a decode step's time goes, and each program's peak resident memory (the mapped weights
# it touched included).
#
# Where llama.cpp's decode time goes: it has no timer of its own per part, so each model is also
# made with one layer (the same widths, the same head) and decoded alone; a layer costs
# (t_L - t_1) / (L - 1), and what is not the layers (the head, the embedding, the graph's set-up)
# is t_1 less one layer. logitlab times its parts itself (matmuls, attention, the rest, head).
# Environment: BENCH_P (16,128), BENCH_N (16), BENCH_R repetitions (3), BENCH_T threads (2),
# BENCH_SHAPES (1b 3b), BENCH_TYPES (Q8_0 Q4_K_M Q3_K_M), BENCH_LB_ARGS (more llama-bench
# options).
set -eu
BENCH=${1:-build/bench_llama}
GEN=${2:-build/gen_model}
P=${BENCH_P:-16,128}
N=${BENCH_N:-16}
R=${BENCH_R:-3}
T=${BENCH_T:-2}
SHAPES=${BENCH_SHAPES:-1b 3b}
TYPES=${BENCH_TYPES:-Q8_0 Q4_K_M Q3_K_M}
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

# model FILE ARGS...: makes FILE with GEN_MODEL unless it is there, made with the same arguments.
# Random weights: which ones does not matter for timing, and a Q4_K_M file takes minutes.
# (sh has no local variables: this one's are named apart from the loop's.)
model() {
	m_file=$1
	shift
	if [ ! -f "$m_file" ] || [ "$(cat "$m_file.args" 2>/dev/null)" != "$*" ]; then
		echo "== $(basename "$m_file" .gguf): generating"
		m_start=$(date +%s)
		"$GEN" "$@" -o "$m_file.part"
		mv "$m_file.part" "$m_file"
		echo "$*" >"$m_file.args"
		echo "   $(($(date +%s) - m_start)) s"
	fi
}

# llama_bench NAME FILE PROMPTS: llama-bench's CSV into DIR/NAME.llama.csv, its memory in .time.
llama_bench() {
	# shellcheck disable=SC2086 # BENCH_LB_ARGS: extra llama-bench options, e.g. --poll 0
	/usr/bin/time -v -o "$DIR/$1.llama.time" \
		"$LB" -m "$2" -t "$T" -p "$3" -n "$N" -r "$R" ${BENCH_LB_ARGS:-} -o csv >"$DIR/$1.llama.csv" \
		2>"$DIR/$1.llama.err" || {
		echo "bench.sh: llama-bench failed on $2 (see $DIR/$1.llama.err)" >&2
		exit 1
	}
}

# lb_ms NAME PROMPT GEN: ms per token of llama-bench's row for that test (a header row, then
# one row per test: n_prompt, n_gen, avg_ts...).
lb_ms() {
	/usr/bin/python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if int(r["n_prompt"]) == int(sys.argv[2]) and int(r["n_gen"]) == int(sys.argv[3]):
        print("%.3f" % (1000 / float(r["avg_ts"])))
        break
else:
    print("nan")' "$DIR/$1.llama.csv" "$2" "$3"
}

# ll_field NAME WHAT TOKENS KEY: a value from logitlab's RESULT line for that test.
ll_field() {
	sed -n "s/^RESULT $2 tokens=$3 .*$4=\([0-9.]*\).*/\1/p" "$DIR/$1.logitlab.txt" | tail -n 1
}

summary=$DIR/summary.txt
parts=$DIR/parts.txt
: >"$summary"
: >"$parts"
for shape in $SHAPES; do
	for type in $TYPES; do
		name=llama$shape-$(echo "$type" | tr '[:upper:]' '[:lower:]')
		f=$DIR/$name.gguf
		args="--arch llama3 --shape $shape --type $type --seed 7"
		# shellcheck disable=SC2086 # args is a list of options
		model "$f" $args
		# shellcheck disable=SC2086
		model "$DIR/$name-1layer.gguf" $args --layers 1
		layers=$(case $shape in 1b) echo 16 ;; 3b) echo 28 ;; esac)

		echo "== $name: llama.cpp $(cut -c1-12 "$OUT/llama-commit.txt") llama-bench -t $T -p $P -n $N -r $R ${BENCH_LB_ARGS:-}"
		llama_bench "$name" "$f" "$P"
		llama_bench "$name-1layer" "$DIR/$name-1layer.gguf" 0
		echo "== $name: logitlab $BENCH -t $T -p $P -n $N -r $R"
		/usr/bin/time -v -o "$DIR/$name.logitlab.time" \
			"$BENCH" "$f" -t "$T" -p "$P" -n "$N" -r "$R" | tee "$DIR/$name.logitlab.txt" |
			grep -v '^RESULT' | sed 's/^/   /'

		for p in $(echo "$P" | tr ',' ' '); do
			echo "$name pp$p $(lb_ms "$name" "$p" 0) $(ll_field "$name" prefill "$p" ms_per_token)" >>"$summary"
		done
		tg=$(lb_ms "$name" 0 "$N")
		echo "$name tg$N $tg $(ll_field "$name" decode "$N" ms_per_token)" >>"$summary"
		echo "$name $layers $tg $(lb_ms "$name-1layer" 0 "$N") $(peak_mib "$DIR/$name.llama.time")" \
			"$(ll_field "$name" decode "$N" matmul_ms) $(ll_field "$name" decode "$N" attention_ms)" \
			"$(ll_field "$name" decode "$N" rest_ms) $(ll_field "$name" decode "$N" head_ms)" \
			"$(peak_mib "$DIR/$name.logitlab.time")" >>"$parts"
	done
done

echo
echo "ms per token, $T threads, prefill of $P tokens, decode of $N (ratio: logitlab / llama.cpp)"
awk 'BEGIN { printf "%-18s %-6s %10s %10s %7s\n", "model", "test", "llama.cpp", "logitlab", "ratio" }
	{ printf "%-18s %-6s %10.2f %10.2f %6.2fx\n", $1, $2, $3, $4, $4 / $3 }' "$summary"
echo
echo "a decode step, ms per token: llama.cpp's layers and the rest (head, embedding) from its"
echo "one-layer model; logitlab's own timers. Peak RSS in MiB."
awk 'BEGIN { printf "%-18s %8s %8s   %8s %8s %8s %8s   %9s %9s\n", "model", "layers", "head+", "matmuls",
		"attn", "rest", "head", "RSS llama", "RSS ours" }
	{ layer = ($3 - $4) / ($2 - 1); rest = $4 - layer
	  printf "%-18s %8.2f %8.2f   %8.2f %8.2f %8.2f %8.2f   %9s %9s\n", $1, layer * $2, rest,
		$6, $7, $8, $9, $5, $10 }' "$parts"
echo "load average at the end $(load)"
