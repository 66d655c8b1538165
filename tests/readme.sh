#!/bin/sh
# Every command that README.md and doc/*.md show in their code blocks runs
# as written and exits as its comment says (0, or 2 where it says "status
# 2"), so the documentation cannot drift from the program. Synopsis lines
# (placeholders such as LESSON, FILE, [OPTIONS]) are skipped; a model file
# named in the text is the generated Llama 3 model of tests/model.sh; the
# interactive view runs --headless (it has no terminal here). Each command
# runs in a directory of its own, so files it writes (-o, --save-logits) are
# new whichever page showed the same command first. The lesson example of
# doc/lessons.md must be a valid lesson, and tests/readme_keys.sh checks the
# key table and the man page against the code.
# Usage: tests/readme.sh LOGITLAB MODEL.gguf     (from the top of the tree)
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
MODEL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
TOP=$(pwd)
HERE=$(dirname "$0")
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
export LOGITLAB_LESSONS="$TOP/lessons"

awk '/^```/ { block = !block; next } block && /^logitlab / { print FILENAME "\t" $0 }' \
    README.md doc/*.md >"$TMP/commands"
[ -s "$TMP/commands" ] || bad "no commands found in README.md and doc/"
n=0
while IFS="$(printf '\t')" read -r file line; do
    case $line in *'['* | *LESSON* | *SETTINGS* | *FILE.*) continue ;; esac
    want=0
    case $line in *'status 2'*) want=2 ;; esac
    # The command without its comment (two spaces or more, then #).
    cmd=$(printf '%s\n' "$line" | sed -E 's/  +#.*$//; s/ +$//')
    cmd=$(printf '%s\n' "$cmd" | sed -E "s#(Llama-3\\.2-1B-Instruct-Q8_0|MODEL|build/models/test-Q8_0)\\.gguf#$MODEL#g")
    # the trained model that ships, made by the build: a path from the top of the tree
    cmd=$(printf '%s\n' "$cmd" | sed -E "s# data/stories260K# $TOP/data/stories260K#g")
    sub=$(printf '%s\n' "$cmd" | awk '{ print $2 }')
    case $sub in show | generate | export | lessons | tokenize | models) ;; *) cmd="$cmd --headless" ;; esac
    n=$((n + 1))
    mkdir "$TMP/run$n"
    (cd "$TMP/run$n" && eval "timeout 300 $(printf '%s\n' "$cmd" | sed "s#^logitlab#\"$BIN\"#")") \
        >"$TMP/out" 2>"$TMP/err" </dev/null
    status=$?
    if [ "$status" -eq "$want" ]; then
        ok
    else
        bad "$file: '$line': status $status, want $want: $(head -c 300 "$TMP/err")"
    fi
done <"$TMP/commands"

# The lesson example of the file format is a lesson that computes top-k's
# renormalized mat, 0.1327 / 0.7526 = 0.1764 (seed 002's table).
awk '/^```ini/ { f = 1; next } /^```/ { f = 0 } f' doc/lessons.md >"$TMP/example.ini"
if "$BIN" show "$TMP/example.ini" >"$TMP/out" 2>"$TMP/err" &&
    grep -q '^   3      6  mat .* 0.1764$' "$TMP/out"; then
    ok
else
    bad "doc/lessons.md's lesson example: $(head -c 300 "$TMP/err")"
fi
printf 'readme: %d commands and the lesson example: %d passed, %d failed\n' "$n" "$pass" "$fail"
keys=0
"$HERE/readme_keys.sh" || keys=1
[ "$fail" -eq 0 ] && [ "$keys" -eq 0 ]
