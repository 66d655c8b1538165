# cli_hostile_svg.sh - sourced by tests/cli.sh: --format svg, the view drawn
# as a picture (issue 13, part 11), goes with show and --headless only, and
# the options table says which options a picture takes.
# shellcheck shell=sh

# Where svg goes, and where it does not.
expect 2 "logitlab: --format svg draws the view: it goes with show or --headless" \
    generate toy --format svg
expect 2 "logitlab: --format svg draws the view: it goes with show or --headless" \
    export toy --format svg
expect 2 "logitlab: --format: lessons does not take it" lessons --format svg
expect 2 "logitlab: --format svg needs --headless (or show): a terminal shows the view itself" \
    toy --format svg
expect 2 "logitlab: --format: 'png' is not a format (text, csv, json, markdown or svg)" \
    show toy --format png
# The text of the view is still the only other thing --headless prints.
expect 2 "logitlab: --format: the interactive view does not take it" --headless toy --format csv

# What a picture does not use is refused by name, not ignored.
expect 2 "logitlab: --top: show --format svg does not take it" show toy --format svg --top 3
expect 2 "logitlab: --find: show --format svg does not take it" show toy --format svg --find on
expect 2 "logitlab: --draws: --headless --format svg does not take it" \
    --headless toy --format svg --draws 10
expect 2 "logitlab: --output: show --format svg does not take it" \
    show toy --format svg -o "$TMP/x.svg"
expect 2 "logitlab: --headless and --keys go with the interactive view, not 'show'" \
    show toy --format svg --keys u
expect 2 "logitlab: --step 9: lesson 'toy' has 2 steps" show toy --format svg --step 9
# ... and what it uses is taken: the size, the theme, ASCII, the settings.
expect 0 "" show toy --format svg --size 80x24 --theme projector --ascii --temperature 1
if grep -q '^<svg [^>]* width="720" height="432"' "$TMP/out" &&
    grep -q '^<rect width="720" height="432" fill="#000000"/>$' "$TMP/out" &&
    grep -q '>T 1 ' "$TMP/out"; then
    ok
else
    bad "show toy --format svg --size 80x24 --theme projector: $(sed -n 2,3p "$TMP/out")"
fi
# --no-color is the mono theme in a picture too, whatever --theme says.
expect 0 "" --headless toy --format svg --theme projector --no-color
if grep -q '^<rect width="1080" height="720" fill="#ffffff"/>$' "$TMP/out" &&
    ! grep -v 'fill="#000000"' "$TMP/out" | grep -q '<text '; then
    ok
else
    bad "--no-color: a picture with colours"
fi
# A size still needs a screen drawn without a terminal.
expect 2 "logitlab: --size: show does not take it" show toy --size 100x30

# A picture that cannot be written is an error, as every other output.
if [ -w /dev/full ]; then
    for args in "show toy --format svg" "--headless --format svg --keys u toy"; do
        # shellcheck disable=SC2086 # args are words on purpose
        "$BIN" $args >/dev/full 2>"$TMP/err"
        status=$?
        if [ "$status" -eq 3 ] &&
            [ "$(cat "$TMP/err")" = "logitlab: standard output: No space left on device" ]; then
            ok
        else
            bad "logitlab $args >/dev/full: status $status, stderr '$(cat "$TMP/err")'"
        fi
    done
fi
