#!/bin/sh
# The keys and options the documentation lists are the program's own:
#  1. README.md's key table (the "## Keys" section) names every key of
#     src/data/actions.def, and no key that is not there;
#  2. the man page's KEYS section does the same;
#  3. the man page names every option of src/cli.c's OPTIONS table and every
#     setting of src/core/sampling.def (as \-\-name), and no other option.
# Key names are those of src/data/keys.c ("Space", "PgUp", ...).
# PENDING lists keys and options that the documentation describes ahead of
# the code (big mode and the legend, issue 13): while one is missing from the
# code its mention is reported as skipped; once the code has it, it is checked
# like every other, so the list can be emptied then.
# Usage: tests/readme_keys.sh     (from the top of the tree)
set -u
HERE=$(dirname "$0")
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
PENDING_KEYS="b L"
PENDING_OPTIONS="big"

# The key names of keys.c: "AK_ENTER Enter" lines, and the space.
grep -o '{ "[A-Za-z]*", AK_[A-Z]* }' src/data/keys.c |
    sed 's/{ "\([A-Za-z]*\)", \(AK_[A-Z]*\) }/\2 \1/' >"$TMP/names"
[ -s "$TMP/names" ] || bad "no key names found in src/data/keys.c"

# Every key and alias of actions.def, one name a line: the second and third
# fields of each ACTION row, a quoted character or a key code (or 0).
sed -nE "s/^ACTION\(\"[^\"]*\", ('.'|[A-Z_]+), ('.'|[A-Z_]+|0),.*/\1 \2/p" src/data/actions.def |
    sed "s/' '/Space/g; s/'\(.\)'/\1/g" | tr ' ' '\n' | grep -v '^0$' |
    awk -v names="$TMP/names" '
        BEGIN { while ((getline l < names) > 0) { split(l, f, " "); name[f[1]] = f[2] } }
        /^AK_/ { if ($0 in name) print name[$0]; else print "?" $0; next }
        { print }' | sort -u >"$TMP/code"
grep -q '^?.' "$TMP/code" && bad "actions.def keys without a name in keys.c: $(grep '^?.' "$TMP/code" | tr '\n' ' ')"
[ "$(wc -l <"$TMP/code")" -ge 30 ] || bad "only $(wc -l <"$TMP/code") keys read from actions.def"

# README.md: the backticked keys of the first column of the Keys table.
# shellcheck disable=SC2016 # the backticks are Markdown, not an expansion
awk '/^## Keys/ { on = 1; next } /^## / { on = 0 } on && /^\| `/ { print }' README.md |
    awk -F'|' '{ print $2 }' | grep -o '`[^`]*`' | tr -d '`' | sort -u >"$TMP/readme"
[ -s "$TMP/readme" ] || bad "no key table in README.md's Keys section"

# The man page: the .B lines of the KEYS section, split at commas and spaces.
awk '/^\.SH KEYS/ { on = 1; next } /^\.SH / { on = 0 } on && /^\.B / { sub(/^\.B /, ""); print }' \
    doc/logitlab.1 | tr ', ' '\n' | sed '/^$/d' | sort -u >"$TMP/man"
[ -s "$TMP/man" ] || bad "no KEYS section in doc/logitlab.1"

pending() { # NAME LIST: is NAME one of LIST?
    for p in $2; do [ "$p" = "$1" ] && return 0; done
    return 1
}

# compare WHAT FILE: the keys of FILE against the code's, both ways.
compare() {
    missing=$(comm -23 "$TMP/code" "$2" | tr '\n' ' ')
    if [ -z "$missing" ]; then ok; else bad "$1 lacks the keys: $missing"; fi
    for k in $(comm -13 "$TMP/code" "$2"); do
        if pending "$k" "$PENDING_KEYS"; then
            echo "readme_keys: skipped: $1 key '$k' is not in actions.def yet (pending)"
        else
            bad "$1 lists '$k', which is no key of actions.def"
        fi
    done
}
compare README.md "$TMP/readme"
compare doc/logitlab.1 "$TMP/man"

# Options: the OPTIONS table's names and the settings' names.
{
    awk '/^} OPTIONS\[\] = \{/ { on = 1; next } on && /^};/ { on = 0 }
         on && /^    \{ "/ { split($0, f, "\""); print f[2] }' src/cli.c
    sed -n 's/^SETTING([a-z_]*, [A-Z]*, "\([a-z-]*\)".*/\1/p' src/core/sampling.def
} | sort -u >"$TMP/options"
[ "$(wc -l <"$TMP/options")" -ge 40 ] || bad "only $(wc -l <"$TMP/options") options read from cli.c and sampling.def"
missing=""
while read -r o; do
    re=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
    grep -Eq "\\\\-\\\\-$re([^a-z\\\\]|\$)" doc/logitlab.1 || missing="$missing --$o"
done <"$TMP/options"
if [ -z "$missing" ]; then ok; else bad "doc/logitlab.1 lacks the options:$missing"; fi
grep -o '\\-\\-[a-z][a-z\\-]*' doc/logitlab.1 | sed 's/\\-/-/g; s/^--//; s/-$//' | sort -u >"$TMP/manopts"
for o in $(comm -13 "$TMP/options" "$TMP/manopts"); do
    if pending "$o" "$PENDING_OPTIONS"; then
        echo "readme_keys: skipped: doc/logitlab.1 option '--$o' is not in cli.c yet (pending)"
    else
        bad "doc/logitlab.1 names --$o, which is no option of cli.c or sampling.def"
    fi
done

printf 'readme_keys: %d keys, %d options: %d passed, %d failed\n' \
    "$(wc -l <"$TMP/code")" "$(wc -l <"$TMP/options")" "$pass" "$fail"
[ "$fail" -eq 0 ]
