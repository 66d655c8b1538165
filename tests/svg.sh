#!/bin/sh
# The view as an SVG picture (issue 13, part 11), end to end: the SVG of
# `--headless --format svg` is well-formed (xmllint when it is installed,
# and Python's XML parser always) and holds the text of `--headless` at the
# same size row for row: each <text> character at the column its x names,
# each block element (drawn as rectangles, class "blk") at its cell. The
# recompute time on the status line differs between two runs, so it is
# masked, as tests/screens.sh does. `show --format svg` draws the same
# screen as the view opened on that step.
# Usage: tests/svg.sh BINARY
set -u
BIN=${1:?usage: tests/svg.sh BINARY}
HERE=$(dirname "$0")
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
export LC_ALL=C.UTF-8
PY=$(command -v python3 || echo /usr/bin/python3)

# The rows of a picture, or of a text screen, in one form: a block element
# as \1, a wide character once, the time masked, trailing blanks
# cut. The widths are those of src/base/utf8.c (utf8_cp_width).
cat >"$TMP/rows.py" <<'EOF'
import re, sys, xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
WIDE = [(0x1100, 0x115F), (0x2E80, 0xA4CF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF),
        (0xFE30, 0xFE4F), (0xFF00, 0xFF60), (0xFFE0, 0xFFE6), (0x1F300, 0x1FAFF),
        (0x20000, 0x3FFFD)]
BLOCK = "\1"
TIME = re.compile(r" +CPU( [0-9.,]+ ?(µs|us|ms))? *$")


def width(ch):
    return 2 if any(a <= ord(ch) <= b for a, b in WIDE) else 1


def masked(row):
    return TIME.sub(" CPU N", row).rstrip(" ")


def svg_rows(path):
    root = ET.parse(path).getroot()
    if root.tag != NS + "svg" or root.get("version") != "1.1":
        sys.exit("%s: not an SVG 1.1 document" % path)
    w, h = int(root.get("width")) // 9, int(root.get("height")) // 18
    cells = {}
    for t in root.iter(NS + "text"):
        xs, y, text = t.get("x").split(), int(t.get("y")), t.text or ""
        if len(xs) != len(text) or (y - 14) % 18:
            sys.exit("%s: a <text> whose x or y does not fit its characters: %r" % (path, text))
        for x, ch in zip(xs, text):
            if ch != " ":
                cells[((y - 14) // 18, int(x) // 9)] = ch
    for r in root.iter(NS + "rect"):
        if r.get("class") == "blk":
            cells[(int(float(r.get("y")) // 18), int(float(r.get("x")) // 9))] = BLOCK
    rows = []
    for y in range(h):
        row, x = "", 0
        while x < w:
            ch = cells.get((y, x), " ")
            row += ch
            x += width(ch) if ch not in (" ", BLOCK) else 1
        rows.append(masked(row))
    return rows


def text_rows(path):
    with open(path, encoding="utf-8") as f:
        return [masked(re.sub("[\u2580-\u259f]", BLOCK, line.rstrip("\n")))
                for line in f]


a = svg_rows(sys.argv[1])
b = text_rows(sys.argv[2]) if sys.argv[2].endswith(".txt") else svg_rows(sys.argv[2])
if len(a) != len(b):
    sys.exit("%d rows in the picture, %d in %s" % (len(a), len(b), sys.argv[2]))
if sys.argv[2].endswith(".txt") and a and a[-1] == "":
    a, b = a[:-1], b[:-1]  # a picture leaves out the screen's key hints
for y, (p, q) in enumerate(zip(a, b)):
    if p != q:
        sys.exit("row %d differs:\n  picture: %r\n  %s: %r" % (y, p, sys.argv[2], q))
EOF

# wellformed FILE: xmllint's word when it is there (Python's parser reads
# every file in rows.py as well).
wellformed() {
    if command -v xmllint >/dev/null 2>&1; then
        xmllint --noout "$1" 2>"$TMP/xmllint" || { cat "$TMP/xmllint"; return 1; }
    fi
    return 0
}

# picture NAME SIZE ARGS...: the picture and the text of one screen agree.
picture() {
    name=$1 size=$2
    shift 2
    if ! "$BIN" --headless --format svg --size "$size" "$@" >"$TMP/$name.svg" 2>"$TMP/err" ||
        ! "$BIN" --headless --size "$size" "$@" >"$TMP/$name.txt" 2>>"$TMP/err"; then
        bad "$name: $(cat "$TMP/err")"
    elif ! wellformed "$TMP/$name.svg"; then
        bad "$name: xmllint refuses the picture"
    elif ! "$PY" "$TMP/rows.py" "$TMP/$name.svg" "$TMP/$name.txt" >"$TMP/why" 2>&1; then
        bad "$name: $(cat "$TMP/why")"
    else
        ok
    fi
}

picture toy 120x40 toy
picture top-p-u 120x40 top-p --keys u
picture min-p-projector 80x24 min-p --keys u --theme projector
picture toy-help-ascii 100x30 toy --keys '?' --ascii
picture toy-mono 132x43 toy --keys '<Space>' --no-color
picture real-story-draws 120x40 real-story --hidden-size 512 --keys D
picture real-france-find 132x43 real-france --hidden-size 512 --keys 'D/Paris<Enter>'

# A picture for a slide carries no time and no key hints (issue 31): it is
# the same on every machine, and nobody presses keys on a slide.
if grep -q 'CPU [0-9]' "$TMP/toy.svg" || grep -q 'Space step' "$TMP/toy.svg" ||
    ! grep -q 'CPU [0-9]' "$TMP/toy.txt" || ! grep -q 'Space step' "$TMP/toy.txt"; then
    bad "toy: the picture keeps the time or the key hints, or the screen lost them"
else
    ok
fi

# The default size of a picture is 120x40 (a text screen's stays 80x24).
"$BIN" toy --headless --format svg >"$TMP/default.svg" 2>"$TMP/err"
if grep -q '^<svg [^>]* width="1080" height="720"' "$TMP/default.svg"; then ok; else
    bad "--headless --format svg: not 120x40 cells of 9x18 px: $(sed -n 2p "$TMP/default.svg")"
fi

# show --format svg: the view on that step, as --headless draws it.
for args in "toy" "toy --step 2 --temperature 1" "top-p --top-p 0.5 --size 100x30"; do
    # shellcheck disable=SC2086 # args are words on purpose
    if ! "$BIN" show $args --format svg >"$TMP/show.svg" 2>"$TMP/err" ||
        ! "$BIN" --headless --format svg $args >"$TMP/view.svg" 2>>"$TMP/err"; then
        bad "show $args --format svg: $(cat "$TMP/err")"
    elif ! "$PY" "$TMP/rows.py" "$TMP/show.svg" "$TMP/view.svg" >"$TMP/why" 2>&1; then
        bad "show $args --format svg is not the view's screen: $(cat "$TMP/why")"
    else
        ok
    fi
done

printf 'svg: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
