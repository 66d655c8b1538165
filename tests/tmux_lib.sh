# tests/tmux_lib.sh - what the tests of a real terminal share, sourced after
# tests/lib.sh with NAME set (the private server's name, and the word in the
# skip line): a private tmux server killed on the way out, the pane read
# back, keys typed into it, and waits with deadlines, never fixed sleeps.
SOCK="logitlab-$NAME-$$"
T="tmux -L $SOCK -f /dev/null"
cleanup() {
    $T kill-server 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

if ! command -v tmux >/dev/null 2>&1; then
    echo "$NAME: skipped: tmux is not installed (make test installs it)"
    exit 0
fi

bad() { # lib.sh's, and the pane as it was
    fail=$((fail + 1))
    printf 'FAIL: %s\n' "$*"
    $T capture-pane -p -t t 2>/dev/null | sed 's/^/  | /'
}
screen() { $T capture-pane -p -t t; }
keys() { $T send-keys -t t "$@"; }

# wait_prompt [SECONDS]: until the shell waits for a command: its last line
# is the bare prompt (capture-pane drops the prompt's trailing space).
wait_prompt() {
    deadline=$(($(date +%s) + ${1:-10}))
    while [ "$(date +%s)" -le "$deadline" ]; do
        if [ "$(screen | grep -v '^$' | tail -n 1)" = '$' ]; then
            return 0
        fi
        sleep 0.05
    done
    return 1
}

check() { # check DESCRIPTION TEXT
    if wait_for "$2"; then ok; else bad "$1: '$2' never appeared"; fi
}
