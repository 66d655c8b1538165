#!/bin/sh
# End-to-end checks of the logitlab binary (built with AddressSanitizer and
# UBSan by `make test`): exit statuses, one-line error messages on stderr,
# every step of every lesson in every format, and golden text tables.
# Usage: tests/cli.sh BINARY        (GOLDEN_UPDATE=1 rewrites the golden files)
set -u
BIN=${1:?usage: tests/cli.sh BINARY}
HERE=$(dirname "$0")
GOLDEN="$HERE/golden"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); printf 'FAIL: %s\n' "$*"; }

# expect STATUS "STDERR" ARGS...: exit status and the exact stderr.
expect() {
    want_status=$1 want_err=$2
    shift 2
    "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
    status=$?
    err=$(cat "$TMP/err")
    if [ "$status" -ne "$want_status" ]; then
        bad "logitlab $*: status $status, want $want_status ($err)"
    elif [ "$err" != "$want_err" ]; then
        bad "logitlab $*: stderr '$err', want '$want_err'"
    else
        ok
    fi
}

# golden NAME ARGS...: stdout equals tests/golden/NAME.
golden() {
    name=$1
    shift
    if ! "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; then
        bad "logitlab $*: failed: $(cat "$TMP/err")"
        return
    fi
    if [ "${GOLDEN_UPDATE:-0}" = 1 ]; then
        cp "$TMP/out" "$GOLDEN/$name"
        ok
    elif cmp -s "$TMP/out" "$GOLDEN/$name"; then
        ok
    else
        bad "logitlab $* differs from $GOLDEN/$name:"
        diff -u "$GOLDEN/$name" "$TMP/out" | head -20
    fi
}

# Every step of every lesson, in every format, must run clean under the sanitizers.
ids=$("$BIN" lessons | awk '{print $1}')
[ -n "$ids" ] || bad "logitlab lessons listed nothing"
for id in $ids; do
    steps=$("$BIN" show "$id" --format json | sed -n 's/^  "steps": \([0-9]*\),$/\1/p')
    [ -n "$steps" ] || { bad "show $id: no step count"; continue; }
    k=1
    while [ "$k" -le "$steps" ]; do
        for fmt in text csv json; do
            if "$BIN" show "$id" --step "$k" --format "$fmt" >"$TMP/out" 2>"$TMP/err" &&
                [ ! -s "$TMP/err" ]; then
                ok
            else
                bad "show $id --step $k --format $fmt: $(cat "$TMP/err")"
            fi
        done
        k=$((k + 1))
    done
done

golden show-toy-1.txt show toy --step 1
golden show-toy-2.txt show toy --step 2
golden show-top-k.txt show top-k
golden show-penalty-3.txt show penalty --step 3
golden show-lm-head.txt show lm-head
golden show-toy-1.json show toy --step 1 --format json
golden show-temperature-0.5.csv show temperature --temperature 0.5 --format csv
golden lessons.txt lessons

# The same seed gives the same token on every run.
a=$("$BIN" show toy --temperature 1 --seed 7 --format json | grep '"choice"')
b=$("$BIN" show toy --temperature 1 --seed 7 --format json | grep '"choice"')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "same seed, different choice: $a / $b"

# Bad options: status 2 and a message that names the option.
expect 2 "logitlab: --temperature: -1 is out of range (must be 0 or more)" show toy --temperature -1
expect 2 "logitlab: --top-p: 1.5 is out of range (must be in (0, 1])" show toy --top-p 1.5
expect 2 "logitlab: --top-p: 0 is out of range (must be in (0, 1])" show toy --top-p 0
expect 2 "logitlab: --min-p: 2 is out of range (must be in [0, 1])" show toy --min-p 2
expect 2 "logitlab: --top-k: -1 is out of range (must be 0 or more)" show toy --top-k -1
expect 2 "logitlab: --repetition-penalty: 0 is out of range (must be more than 0)" show toy --repetition-penalty 0
expect 2 "logitlab: --temperature: 'warm' is not a number" show toy --temperature warm
expect 2 "logitlab: unknown option '--temprature' (logitlab --help lists them)" show toy --temprature 1
expect 2 "logitlab: option '--seed' needs a value" show toy --seed
expect 2 "logitlab: --format: 'xml' is not a format (text, csv or json)" show toy --format xml
expect 2 "logitlab: --step 9: lesson 'toy' has 2 steps" show toy --step 9
expect 2 "logitlab: show needs a lesson: logitlab show LESSON (see logitlab lessons)" show
expect 2 "logitlab: no lesson 'nosuch' in $(cd "$HERE/.." && pwd)/lessons (logitlab lessons lists them)" show nosuch
expect 2 "logitlab: $TMP/missing.ini: cannot open: No such file or directory" show "$TMP/missing.ini"

# Bad lesson files: status 2 and file:line.
printf '[lesson]\nid = x\ntitle = X\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\ntemprature = 1\n' >"$TMP/x.ini"
expect 2 "logitlab: $TMP/x.ini:9: unknown key 'temprature' in [step.1]" show "$TMP/x.ini"
printf '[lesson]\nid = x\ntitle = X\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 nan\n' >"$TMP/nan.ini"
expect 2 "logitlab: $TMP/nan.ini:8: logits: value 2 ('nan') is NaN" show "$TMP/nan.ini"

# The lesson example in README.md is a valid lesson.
awk '/^```ini/{f=1;next} /^```/{f=0} f' "$HERE/../README.md" >"$TMP/readme.ini"
if "$BIN" show "$TMP/readme.ini" >"$TMP/out" 2>"$TMP/err" && grep -q '^   3      6  mat .* 0.1764$' "$TMP/out"; then
    ok
else
    bad "the README's lesson example: $(cat "$TMP/err")"
fi

expect 0 "" --help
expect 0 "" --version

# A closed pipe is not an error worth a crash.
"$BIN" show toy | head -1 >/dev/null
[ $? -eq 0 ] && ok || bad "show | head failed"

printf 'cli: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
