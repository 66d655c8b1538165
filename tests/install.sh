#!/bin/sh
# make install and make uninstall into a temporary DESTDIR: the installed
# program finds its lessons and data from its own place, from any directory,
# its man page renders, and uninstall leaves nothing behind.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/tests/lib.sh"

D="$TMP/stage"
make -s -C "$HERE" install DESTDIR="$D" PREFIX=/opt/logitlab >"$TMP/log" 2>&1 || bad "make install: $(cat "$TMP/log")"
B="$D/opt/logitlab/bin/logitlab"
[ -x "$B" ] && ok || bad "no installed binary at $B"
for f in share/logitlab/lessons/02-toy.ini share/logitlab/data/llama3-vocab.bin \
    share/logitlab/data/scenarios/france.ini share/man/man1/logitlab.1; do
    [ -f "$D/opt/logitlab/$f" ] && ok || bad "not installed: $f"
done
# From a directory with no lessons of its own.
cd "$TMP" || exit 1
n=$("$B" lessons 2>"$TMP/err" | wc -l)
[ "$n" -eq "$(ls "$HERE"/lessons/*.ini | wc -l)" ] && ok || bad "installed lessons: $n listed ($(cat "$TMP/err"))"
"$B" show toy --temperature 0.5 | grep -q ' on .* 0.7258 ' && ok || bad "installed: show toy"
"$B" show trained-next --top 1 --format json | grep -q '"id": 298' && ok ||
    bad "installed: the trained model's lesson cannot find data/stories260K.gguf"
"$B" show real-france --hidden-size 512 --top 1 --format json | grep -q '"id": 12366' && ok ||
    bad "installed: the full-size lesson cannot find its data"
if command -v groff >/dev/null 2>&1; then
    w=$(groff -man -ww -z "$D/opt/logitlab/share/man/man1/logitlab.1" 2>&1)
    [ -z "$w" ] && ok || bad "the man page has warnings: $w"
else
    echo "install: groff not installed: the man page is not rendered"
fi
cd "$HERE" || exit 1
make -s install DESTDIR="$D" PREFIX=/opt/logitlab >/dev/null 2>&1 && ok || bad "a second install fails"
make -s uninstall DESTDIR="$D" PREFIX=/opt/logitlab >"$TMP/log" 2>&1 || bad "make uninstall: $(cat "$TMP/log")"
left=$(find "$D" -type f | head -5)
[ -z "$left" ] && ok || bad "uninstall left files: $left"
printf 'install: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
