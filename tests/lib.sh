# tests/lib.sh - what the shell tests share, sourced by each: a temporary
# directory removed on exit, no user configuration, and pass/fail counting.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# A user's own config.ini must not change what the tests see.
export XDG_CONFIG_HOME="$TMP/config"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); printf 'FAIL: %s\n' "$*"; }
