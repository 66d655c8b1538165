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

# wait_for TEXT [SECONDS]: until the tmux pane t of the server $T shows TEXT
# (the tests that drive a real terminal); 1 when the deadline passes.
wait_for() {
    deadline=$(($(date +%s) + ${2:-10}))
    while [ "$(date +%s)" -le "$deadline" ]; do
        if $T capture-pane -p -t t | grep -qF -- "$1"; then
            return 0
        fi
        sleep 0.05
    done
    return 1
}
