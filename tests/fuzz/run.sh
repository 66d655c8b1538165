#!/bin/sh
# Runs fuzz harnesses for FUZZ_TIME seconds each (default 60) on a corpus
# seeded from the real files, and prints the executions and findings of each.
# FUZZ_RUNS=N runs each until N executions instead (10000000: the issue's
# 10^7). FUZZ_BRIEF=1 is make test's run: each harness on its seeds and a
# fresh corpus for FUZZ_TIME seconds (default 3), so that one that stops
# building or finds something fails the tests.
# Crashes are left in build/fuzz/crash-* ; turn each into a regression test.
# Usage: tests/fuzz/run.sh BUILD_DIR NAME...  (from the top of the source
# tree; NAME is a harness, tests/fuzz/fuzz_NAME.c)
# The GGUF seed is written by gen_model (GEN_MODEL, default BUILD_DIR/../
# gen_model, made when missing); the tokenizer's seeds by python3.
# FUZZ_ONLY=NAME runs that harness alone; FUZZ_FLAGS adds libFuzzer options
# to every run (-fork=1 -ignore_crashes=1 goes on past a known crash).
# FUZZ_TOY=1 keeps the command and output harnesses on the toy lessons (a
# full-size input costs about a second under the sanitizers), for runs of
# millions of executions.
set -u
B=${1:?usage: tests/fuzz/run.sh BUILD_DIR NAME...}
shift
[ $# -gt 0 ] || { echo "usage: tests/fuzz/run.sh BUILD_DIR NAME..." >&2; exit 2; }
if [ -n "${FUZZ_BRIEF:-}" ]; then T=${FUZZ_TIME:-3}; else T=${FUZZ_TIME:-60}; fi
S="$B/seeds"
GEN=${GEN_MODEL:-$(dirname "$B")/gen_model}
rm -rf "$S"
mkdir -p "$S/lesson" "$S/scenario" "$S/npy" "$S/vocab" "$S/command" "$S/gguf" "$S/tokenizer" \
    "$S/output"
for f in "$@"; do mkdir -p "$S/$f"; done # a harness without seeds of its own starts from nothing
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
# Commands (tests/fuzz/fuzz_command.c): a first byte that picks the lesson
# (bits 3-7: 0-27 a toy lesson, 28-31 a full-size one) and the screen
# (bits 0-1 80x24, 120x40, 40x12, 200x60; bit 2 ASCII), then lines: a ':'
# command each, '!' lines are keys (\011 Enter, \015 a resize).
printf '\010temperature 0.5\ntop-k 3\n!u \n' >"$S/command/a"
printf '\021order top-k,temperature\nstop "on mat"\nmax-tokens 2\n!   \n' >"$S/command/b"
printf '\013seed 18446744073709551615\nrepetition-penalty 1.3\npenalty-scope all\n!fg<\nstep 2\n' \
    >"$S/command/c"
printf '\043!?x\n!l\004\004\015\015\n!:temperature 0.3\011\n' >"$S/command/d"
printf '\120!a0.5\011\n!v\n!.\n' >"$S/command/e"
printf '\343temperature 0.7\ndraws\nfind Paris\n!/ Paris\011\n!tTkK\n' >"$S/command/f"
printf '\357top-p 0.9\n!D\n!l\004\n' >"$S/command/g"
# Editor (tests/fuzz/fuzz_editor.c): a first byte that picks the scene
# (bits 0-2: ':' '/' on toy, 'a' on exercise-1 and -2, 'e' ':' '/' on
# trained-next, 'S' on toy), the width (bits 3-4), ASCII (bit 5) and the
# line's limit (bits 6-7: the whole, 16, 100, 700 bytes), then keys:
# \000 Enter, \001 Backspace, \002 Esc, \003 a resize, \016 B U+D800 + B,
# UTF-8 sequences their code points.
mkdir -p "$S/editor" "$S/cmdline"
printf '\000top-k 3\000' >"$S/editor/toy-cmd"
printf '\001 cat\000#3\000' >"$S/editor/toy-find"
printf '\002e^2 7.3891\001\001\0017.389\000' >"$S/editor/ex1-number"
printf '\003A B C\000' >"$S/editor/ex2-kept"
printf '\004 \303\251\342\202\254\360\237\230\200\001\001 \344\270\255\346\226\207\000' >"$S/editor/trained-e"
printf '\004 who lived in a house by the sea \303\251\342\202\254\360\237\230\200 with her cat, and every day they walked to the shore \344\270\255\000' \
    >"$S/editor/trained-e-long"
printf '\005prompt Once upon a time \303\251 \360\235\204\236\000' >"$S/editor/trained-prompt"
printf '\006 girl\000' >"$S/editor/trained-find"
printf '\1477\302\233\342\200\256\314\201\003\003\0037\002' >"$S/editor/toy-seed"
printf '\100aaaaaaaaaaaaaaaaaaaa\001\360\237\230\200\016\000\017\000' >"$S/editor/limit-16"
{
    printf '\250prompt '
    i=0
    while [ "$i" -lt 30 ]; do printf '\344\270\255'; i=$((i + 1)); done
    printf '\000'
} >"$S/editor/wide-ascii"
# Command lines (tests/fuzz/fuzz_cmdline.c): a first byte that picks the
# toy lesson (bits 0-4), the screen (bits 6-7: 80x24, 100x30, 120x40,
# 200x60; bit 5 ASCII), then lines, each a ':' command whole.
printf '\001temperature 0.5\ntop-k 3\ntop-p 0.9\nmin-p 0.05\n' >"$S/cmdline/a"
printf '\102order top-k,temperature\nstop "on mat"\nstop \nmax-tokens 2\nstep 2\ntake mat\n' >"$S/cmdline/b"
printf '\203seed 18446744073709551615\nrepetition-penalty 1.3\npenalty-scope all\npenalty-last-n 4\nreset\n' \
    >"$S/cmdline/c"
printf '\044find cat\nfind #3\nfind\ndraws 100\ndraws off\nbatch\ntemperature 2\nreset\nbatch\n' >"$S/cmdline/d"
printf '\305lesson top-p\ntypical-p 0.5\ntop-n-sigma 1\nshift -3\nfrequency-penalty 0.5\npresence-penalty 1\nhelp\n' \
    >"$S/cmdline/e"
printf '\006prompt Once upon a time \303\251\nunknown \344\270\255\344\270\255\nlesson nosuch\nstep 99\n:: temperature 1e-300\nquit\n' \
    >"$S/cmdline/f"
printf '\007stop-text keep\npenalty-formula lesson\norder llamacpp\norder hf\norder vllm\norder lesson\n' >"$S/cmdline/g"
{
    printf '\001'
    i=0
    while [ "$i" -lt 30 ]; do printf '\303\251'; i=$((i + 1)); done
    printf ' 1\n'
} >"$S/cmdline/long-name"
# Grammars (tests/fuzz/fuzz_grammar.c): a byte for the front end (0 GBNF,
# 1 regex, 2 JSON schema, 3 choices), the text, a NUL, the bytes to feed.
mkdir -p "$S/grammar"
printf '\000root ::= "{" ws (kv ("," ws kv)*)? "}"\nkv ::= [a-z]+ ":" ws ("null" | root)\nws ::= [ \\t]*\n\000{a: null, b:{}}' \
    >"$S/grammar/gbnf"
printf '\000root ::= p\np ::= "(" p? ")" | [^()]{1,3} . | ("x"?)*\n\000((ab\303\251))' >"$S/grammar/gbnf-rec"
printf '\001^(\\d+\\.)?[a-z\\xE9]{2,5}|\\[[^\\]]*\\]$\000[\303\251"]' >"$S/grammar/regex"
printf '\002{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name","age"]}\000{"name": "B\\u00e9", "age": -1}' \
    >"$S/grammar/schema"
printf '\002{"anyOf":[{"enum":["a",1,null]},{"type":["number","boolean"]},{"type":"string","maxLength":3}]}\000"ab"' \
    >"$S/grammar/schema-any"
printf '\003yes\nno\nmaybe\000ye' >"$S/grammar/choices"
# Outputs (tests/fuzz/fuzz_output.c): a byte that picks the lesson (bits
# 0-4: 0-27 a toy lesson, 28-31 a full-size one; bit 5: the lesson is the
# input's text) and --top (bits 6-7), a byte for many draws (bit 0) and a
# --find (bit 1), a line of settings, then the lesson's text.
v=0
while [ "$v" -lt 32 ]; do
    {
        printf '%b' "\\0$(printf %03o "$v")" # %b: octal is \0NNN
        printf '\003temperature 0.7 | seed 3\n'
    } >"$S/output/lesson-$v"
    v=$((v + 1))
done
for f in lessons/*.ini; do
    case $f in *-real-*) continue ;; esac
    { printf '\040\000top-k 3 | stop "mat"\n'; cat "$f"; } >"$S/output/text-$(basename "$f" .ini)"
done
# GGUF: a whole small model (30 KB: one layer of width 8, the 312-token
# SentencePiece vocabulary), so that the fuzzer starts from a file the
# reader and the llama loader accept; the same at width 32 in each type of
# blocks of 32 (25-40 KB). A model in a type of blocks of 256 would be past
# the harness's 64 KB, so those types come in types.gguf below.
[ -x "$GEN" ] || make --no-print-directory "$GEN" >/dev/null 2>&1 || true
if [ -x "$GEN" ]; then
    "$GEN" --arch llama2 --type F32 --vocab tiny --layers 1 --embd 8 --heads 2 --kv-heads 1 \
        --ff 16 -o "$S/gguf/tiny.gguf" >/dev/null || echo "fuzz: gen_model failed: no GGUF seed"
    for t in Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL; do
        "$GEN" --arch llama2 --type $t --vocab tiny --layers 1 --embd 32 --heads 2 --kv-heads 1 \
            --ff 64 -o "$S/gguf/tiny-$t.gguf" >/dev/null || echo "fuzz: gen_model failed: no $t seed"
    done
else
    echo "fuzz: $GEN is missing and could not be made: the GGUF harness starts from nothing"
fi
# GGUF: types.gguf, one tensor of two rows of two blocks in every type
# logitlab reads (no metadata: the llama loader refuses it, the reader and
# the decoders take it), its bytes a fixed pattern. The sizes are ggml's
# (doc/quant.md): type id, values and bytes per block.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$S/gguf/types.gguf" <<'PY'
import struct, sys
SIZES = [(0, 1, 4), (1, 1, 2), (30, 1, 2), (8, 32, 34), (2, 32, 18), (3, 32, 20), (6, 32, 22),
         (7, 32, 24), (20, 32, 18), (10, 256, 84), (11, 256, 110), (12, 256, 144),
         (13, 256, 176), (14, 256, 210), (23, 256, 136)]
head, data = b"", b""
for t, block, size in SIZES:
    name = b"t%d" % t
    head += struct.pack("<Q", len(name)) + name + struct.pack("<IQQIQ", 2, 2 * block, 2, t, len(data))
    n = 4 * size
    data += bytes((i * 37 + t) % 256 for i in range(n)) + bytes(-n % 32)
out = b"GGUF" + struct.pack("<IQQ", 3, len(SIZES), 0) + head
open(sys.argv[1], "wb").write(out + bytes(-len(out) % 32) + data)
PY
else
    echo "fuzz: python3 is missing: no GGUF seed of every type"
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
total_fail=0
for f in "$@"; do
    [ -n "${FUZZ_ONLY:-}" ] && [ "$FUZZ_ONLY" != "$f" ] && continue
    # A brief run keeps its corpus and findings apart, made afresh.
    corpus="$B/corpus/$f" found_at="$B"
    if [ -n "${FUZZ_BRIEF:-}" ]; then
        corpus="$B/brief/$f" found_at="$B/brief"
        rm -rf "$corpus" "$found_at"/crash-"$f"-*
    fi
    mkdir -p "$corpus"
    log="$B/fuzz_$f.log"
    # The command and output harnesses read lines of commands, keys and
    # settings: longer inputs only repeat them and slow every run. The first
    # input of theirs that picks a full-size lesson builds its head (5 to 20
    # s under the sanitizers, on a busy machine): that is set-up, and only a
    # unit slower than two minutes is reported as slow.
    case $f in command | output | editor | cmdline) len=4096 ;; *) len=65536 ;; esac
    if [ -n "${FUZZ_RUNS:-}" ]; then
        limit="-runs=$FUZZ_RUNS"
    else
        limit="-max_total_time=$T"
    fi
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of options
    "$B/fuzz_$f" "$limit" -print_final_stats=1 -artifact_prefix="$found_at/crash-$f-" \
        -report_slow_units=120 -rss_limit_mb=4096 -max_len="$len" ${FUZZ_FLAGS:-} "$corpus" \
        "$S/$f" >"$log" 2>&1
    status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    found=$(ls "$found_at"/crash-"$f"-* 2>/dev/null | wc -l)
    printf 'fuzz %-9s %10s executions in %ss, corpus %4s files, %s finding%s (status %d)\n' \
        "$f" "${execs:-?}" "${secs:-?}" "$(ls "$corpus" | wc -l)" "$found" \
        "$([ "$found" = 1 ] && echo || echo s)" "$status"
    if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
        total_fail=$((total_fail + 1))
        tail -n 30 "$log" | sed "s/^/  $f| /"
    fi
done
[ "$total_fail" -eq 0 ]
