#!/bin/sh
# logitlab's stages held to llama.cpp's kept sets on the same rows (issue 33):
#   1. samplers_check on every case of tests/oracle/samplers.txt against the committed
#      goldens of tests/golden/samplers/ (written by make test-oracle-samplers from
#      llama.cpp's own samplers): the same ids, each z' within 1e-6 x (1 + |z'|);
#   2. that it can fail: goldens altered by one token or by 1e-5 in one logit, and a case
#      whose recorded difference is gone, are each refused.
# Usage: tests/samplers.sh SAMPLERS_CHECK
set -u
CHECK=${1:?usage: tests/samplers.sh SAMPLERS_CHECK}
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

echo "samplers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
