#!/bin/sh
# Installs the Debian packages logitlab needs to build and test, if any are missing.
# Called by `make deps` (and so by `make run` and `make test`). It uses apt-get directly
# as root, through sudo otherwise, and when neither works it says exactly what to install.
# Arguments name more packages that one target needs (clang for `make fuzz`, valgrind).
set -eu

# the headers and libraries (PCRE2 for the Llama 3 tokenizer's pre-tokenizer), the unit-test framework, the terminal tests' tmux,
# and jq, which the command-line tests parse JSON with
PKGS="libncurses-dev libinih-dev libpcre2-dev check pkg-config tmux jq $*"

missing=""
if command -v dpkg-query >/dev/null 2>&1; then
    for p in $PKGS; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing="$missing $p"
        fi
    done
else
    # Not a Debian system: check what pkg-config can see and let the build fail clearly otherwise.
    for m in ncursesw inih check libpcre2-8; do
        pkg-config --exists "$m" 2>/dev/null || missing="$missing $m"
    done
    if [ -n "$missing" ]; then
        echo "deps: not a Debian system and pkg-config cannot find:$missing" >&2
        echo "deps: install the development packages for ncursesw, inih, check and pcre2, plus tmux" >&2
        exit 1
    fi
    exit 0
fi

[ -z "$missing" ] && exit 0

echo "deps: installing missing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "deps: these packages are missing and I am not root and have no sudo:" >&2
    echo "deps:     apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! $SUDO apt-get install -y --no-install-recommends $missing; then
    $SUDO apt-get update
    # shellcheck disable=SC2086
    $SUDO apt-get install -y --no-install-recommends $missing || {
        echo "deps: apt-get failed; install by hand: apt-get install$missing" >&2
        exit 1
    }
fi
