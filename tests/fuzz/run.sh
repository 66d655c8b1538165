#!/bin/sh
# Runs every fuzz harness for FUZZ_TIME seconds (default 60) on a corpus
# seeded from the real files, and prints the executions and findings of each.
# Crashes are left in build/fuzz/crash-* ; turn each into a regression test.
# Usage: tests/fuzz/run.sh BUILD_DIR      (from the top of the source tree)
# The GGUF seed is written by gen_model (GEN_MODEL, default BUILD_DIR/../
# gen_model, made when missing); the tokenizer's seeds by python3.
set -u
B=${1:?usage: tests/fuzz/run.sh BUILD_DIR}
T=${FUZZ_TIME:-60}
S="$B/seeds"
GEN=${GEN_MODEL:-$(dirname "$B")/gen_model}
rm -rf "$S"
mkdir -p "$S/lesson" "$S/scenario" "$S/npy" "$S/vocab" "$S/command" "$S/gguf" "$S/tokenizer"
cp lessons/*.ini "$S/lesson/"
cp data/scenarios/*.ini "$S/scenario/"
# .npy: one float32 [3] file and one float16 [2, 2] file.
printf '\223NUMPY\001\000\106\000%-69s\n' "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" >"$S/npy/f4.npy"
printf '\000\000\200\077\000\000\000\100\000\000\100\100' >>"$S/npy/f4.npy"
printf '\223NUMPY\001\000\106\000%-69s\n' "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }" >"$S/npy/f2.npy"
printf '\000\074\000\300\377\173\001\000' >>"$S/npy/f2.npy"
# Vocabularies: a text one, and the first bytes of the Llama 3 file.
printf 'a\n\\x20b\nc\\n\n' >"$S/vocab/text.vocab"
printf 'LLVOCAB1\003\000\000\000\002\000\000\000\003\000\000\000\000\000\000\000\001\000\000\000\002\000\000\000\003\000\000\000abc' >"$S/vocab/bin.vocab"
# Commands: a line of ':' input each, '!' lines are keys.
printf 'temperature 0.5\ntop-k 3\n!u \n' >"$S/command/a"
printf 'order top-k,temperature\nstop "on mat"\nmax-tokens 2\n!   \n' >"$S/command/b"
printf 'seed 18446744073709551615\nrepetition-penalty 1.3\npenalty-scope all\n!fg<\nstep 2\n' >"$S/command/c"
# GGUF: a whole small model (30 KB: one layer of width 8, the 312-token
# SentencePiece vocabulary), so that the fuzzer starts from a file the
# reader and the llama loader accept.
[ -x "$GEN" ] || make --no-print-directory "$GEN" >/dev/null 2>&1 || true
if [ -x "$GEN" ]; then
    "$GEN" --arch llama2 --type F32 --vocab tiny --layers 1 --embd 8 --heads 2 --kv-heads 1 \
        --ff 16 -o "$S/gguf/tiny.gguf" >/dev/null || echo "fuzz: gen_model failed: no GGUF seed"
else
    echo "fuzz: $GEN is missing and could not be made: the GGUF harness starts from nothing"
fi
# Tokenizer: each line of the tokenizer corpus (its escapes undone, so
# invalid bytes are in) after each mode byte: 0 Llama 3, 1 Llama 3 with
# special tokens, 2 Llama 2 (tests/fuzz/fuzz_tokenizer.c).
if command -v python3 >/dev/null 2>&1; then
    python3 - tests/tokenizer/corpus.txt "$S/tokenizer" <<'PY'
import re, sys
def unescape(m):
    s = m.group(1)
    if s[:1] == b'x':
        return bytes([int(s[1:], 16)])
    if s[:1] == b'u':
        return chr(int(s[2:-1], 16)).encode()
    return {b'n': b'\n', b't': b'\t', b'r': b'\r', b'\\': b'\\'}[s]
pat = re.compile(rb'\\(x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f]+\}|[ntr\\])')
for no, line in enumerate(open(sys.argv[1], 'rb').read().split(b'\n'), 1):
    if line and not line.startswith(b'#'):
        for mode in range(3):
            with open('%s/L%d-%d' % (sys.argv[2], no, mode), 'wb') as f:
                f.write(bytes([mode]) + pat.sub(unescape, line))
PY
else
    echo "fuzz: python3 is missing: the tokenizer harness starts from nothing"
fi
# The command harness opens the toy lesson: a directory without the
# full-size lessons keeps each run to a few milliseconds.
rm -rf "$B/lessons"
mkdir -p "$B/lessons"
cp lessons/*.ini "$B/lessons/"
rm -f "$B"/lessons/*-real-*.ini
export FUZZ_LESSONS="$B/lessons"
total_fail=0
for f in lesson scenario npy vocab command gguf tokenizer; do
    mkdir -p "$B/corpus/$f"
    log="$B/fuzz_$f.log"
    "$B/fuzz_$f" -max_total_time="$T" -print_final_stats=1 -artifact_prefix="$B/crash-$f-" \
        -rss_limit_mb=4096 -max_len=65536 "$B/corpus/$f" "$S/$f" >"$log" 2>&1
    status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    found=$(ls "$B"/crash-"$f"-* 2>/dev/null | wc -l)
    printf 'fuzz %-9s %10s executions in %ss, corpus %4s files, %s crash%s (status %d)\n' \
        "$f" "${execs:-?}" "$T" "$(ls "$B/corpus/$f" | wc -l)" "$found" \
        "$([ "$found" = 1 ] && echo || echo es)" "$status"
    [ "$status" -eq 0 ] && [ "$found" -eq 0 ] || total_fail=$((total_fail + 1))
done
[ "$total_fail" -eq 0 ]
