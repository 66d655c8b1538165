#!/bin/sh
# logitlab's stages held to llama.cpp's kept sets on the same rows (issue 33):
#   1. samplers_check on every case of tests/oracle/samplers.txt against the committed
#      goldens of tests/golden/samplers/ (written by make test-oracle-samplers from
#      llama.cpp's own samplers): the same ids, each z' within 1e-6 x (1 + |z'|);
#   2. that it can fail: goldens altered by one token or by 1e-5 in one logit, and a case
#      whose recorded difference is gone, are each refused;
#   3. the command line: each case a lesson can hold (up to 256 tokens, no -inf: a lesson
#      refuses it) written as one (samplers_check --cli), `logitlab show --format json`
#      with the case's options, and its kept rows the same ids and z' (within 1e-12) as
#      samplers_check's reference sampler.
# Usage: tests/samplers.sh SAMPLERS_CHECK LOGITLAB
set -u
CHECK=${1:?usage: tests/samplers.sh SAMPLERS_CHECK LOGITLAB}
BIN=${2:?usage: tests/samplers.sh SAMPLERS_CHECK LOGITLAB}
HERE=$(cd "$(dirname "$0")" && pwd)
CASES="$HERE/oracle/samplers.txt"
GOLD="$HERE/golden/samplers"
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"

# 1. Every case.
if "$CHECK" "$CASES" "$GOLD" >"$TMP/out"; then
    ok
else
    bad "samplers_check: $(grep -c '^FAIL' "$TMP/out") cases failed"
    grep '^FAIL' "$TMP/out"
fi
tail -n 1 "$TMP/out"

# 2. The check fails when llama.cpp's answer and logitlab's part. topk-8 keeps ids 4, 5, 7.
mkdir -p "$TMP/gold"
refused() { # WHAT CASES: the check of topk-8 on $TMP/gold must fail
    if "$CHECK" "$2" "$TMP/gold" topk-8 >"$TMP/refused" 2>&1; then
        bad "samplers_check passed $1"
    else
        ok
    fi
}
grep -v '^5 ' "$GOLD/topk-8.txt" >"$TMP/gold/topk-8.txt"
refused "a golden without one of its tokens" "$CASES"
awk '$1 == 7 { $2 = $2 + 1e-5 } { print }' "$GOLD/topk-8.txt" >"$TMP/gold/topk-8.txt"
refused "a logit 1e-5 away" "$CASES"
cp "$GOLD/topk-8.txt" "$TMP/gold/topk-8.txt"
grep '^topk-8 ' "$CASES" | sed 's/$/ | differs: none/' >"$TMP/cases.txt"
refused "a recorded difference that is gone" "$TMP/cases.txt"

# 3. The command line.
mkdir -p "$TMP/cli"
"$CHECK" --cli "$CASES" "$TMP/cli" >"$TMP/cli.names" || bad "samplers_check --cli: $(grep FAIL "$TMP/cli.names")"
while read -r name; do
    c="$TMP/cli/$name"
    # shellcheck disable=SC2046 # logitlab's options, one word each
    if ! "$BIN" show "$c.ini" --format json $(cat "$c.args") >"$c.json" 2>"$c.err"; then
        bad "logitlab show $name: $(head -n 1 "$c.err")"
        continue
    fi
    sed -n 's/.*"id": \([0-9]*\),.*"adjusted": \([^,]*\),.*"kept": true.*/\1 \2/p' "$c.json" |
        sort -n >"$c.got"
    if awk 'NR == FNR { z[$1] = $2; n++; next }
        !($1 in z) { wrong = 1; exit }
        { d = $2 - z[$1]; a = z[$1]; if (d < 0) d = -d; if (a < 0) a = -a }
        d > 1e-12 * (1 + a) { wrong = 1; exit }
        { m++ }
        END { exit wrong || m != n }' "$c.kept" "$c.got"; then
        ok
    else
        bad "logitlab show $name $(cat "$c.args"): its kept rows (id, z') are not samplers_check's: $(diff "$c.kept" "$c.got" | head -n 5 | tr '\n' ' ')"
    fi
done <"$TMP/cli.names"

echo "samplers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
