# cli_hostile_parsers.sh - sourced by tests/cli.sh (issue 12, classes 5 and 7).
# shellcheck shell=sh
# Class 5: a .npy file is refused on what its header says (V against the
# vocabulary included) before its data is read. Class 7: the readers are
# strict: sizes that overflow, .npy headers that only look like a dict,
# vocabulary escapes, empty 'try' alternatives, duplicate configuration keys
# and duplicate lesson ids are refused with the file (and line) or option.

mkdir -p "$TMP/parsers"
P=$TMP/parsers

# -- --size and <resize WxH>: 4294967376 wrapped round to 80 (and
# 4294967320 to 24), so these were an 80x24 screen.
limits="the width and the height are from 1 to 1000"
expect 2 "logitlab: --size: '4294967376x4294967320': $limits" --headless --size 4294967376x4294967320 --keys q toy
expect 2 "logitlab: --size: '99999999999999999999x24': $limits" --headless --size 99999999999999999999x24 --keys q toy
expect 2 "logitlab: --size: ' 80x24' is not a size such as 80x24" --headless --size ' 80x24' --keys q toy
expect 2 "logitlab: --keys: '4294967376x24': $limits" --headless --keys '<resize 4294967376x24>q' toy

# -- .npy: V = 4 against a vocabulary of 3, with a NaN in the data. The
# header alone refuses it; before, all the data was read and converted,
# and the NaN was what the message said.
printf 'a\nb\nc\n' >"$P/abc.vocab"
npy "$P/v4nan.npy" '<f4' '(4,)' '\000\000\200\077\000\000\300\177\000\000\100\100\000\000\100\100'
expect 2 "logitlab: $P/v4nan.npy: 4 logits a step, but the vocabulary $P/abc.vocab has 3 tokens (give the model's with --vocab FILE)" show --logits "$P/v4nan.npy" --vocab "$P/abc.vocab"
# The header as a dict literal: what the substring search took for a shape.
npy "$P/sp.npy" '<f4' '(1 3)' '\000\000\200\077\000\000\000\100\000\000\100\100'
expect 2 "logitlab: $P/sp.npy: the shape '(1 3)' is not a tuple of non-negative integers" show --logits "$P/sp.npy" --vocab "$P/abc.vocab"
npy "$P/plus.npy" '<f4' '(+3,)' '\000\000\200\077\000\000\000\100\000\000\100\100'
expect 2 "logitlab: $P/plus.npy: the shape '(+3,)' is not a tuple of non-negative integers" show --logits "$P/plus.npy" --vocab "$P/abc.vocab"
npy "$P/zero.npy" '<f4' '(0,)' ''
expect 2 "logitlab: $P/zero.npy: shape (0,) is not one of logits (1 to 256 steps of 2 to 4194304 tokens)" show --logits "$P/zero.npy" --vocab "$P/abc.vocab"
# Data beyond what the shape needs: the file is not what its header says.
npy "$P/long.npy" '<f4' '(3,)' '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\100\100'
expect 2 "logitlab: $P/long.npy: trailing data: the shape needs 12 bytes of data, the file has 16" show --logits "$P/long.npy" --vocab "$P/abc.vocab"

# -- text vocabularies: "\x4" took the newline as its second digit (every
# later id shifted); a backslash at the end of a line made a two-line
# message; CRLF lines end where the CR is (the tokens are a, b, c).
npy "$P/v3.npy" '<f4' '(3,)' '\000\000\200\077\000\000\000\100\000\000\100\100'
printf 'a\\x4\nb\nc\nd\n' >"$P/x4.vocab"
expect 2 "logitlab: $P/x4.vocab:1: \\x takes exactly two hex digits (such as \\x0A)" show --logits "$P/v3.npy" --vocab "$P/x4.vocab"
printf 'a\nb\\\nc\n' >"$P/bs.vocab"
expect 2 "logitlab: $P/bs.vocab:2: the line ends in a backslash (a backslash is \\\\)" show --logits "$P/v3.npy" --vocab "$P/bs.vocab"
printf 'a\r\nb\r\nc\r\n' >"$P/crlf.vocab"
if "$BIN" show --logits "$P/v3.npy" --vocab "$P/crlf.vocab" --format csv --top 3 >"$TMP/out" 2>"$TMP/err" &&
    [ "$(cut -d, -f3 "$TMP/out" | tr '\n' ' ')" = "token c b a " ]; then
    ok
else
    bad "show --vocab crlf.vocab: tokens $(cut -d, -f3 "$TMP/out" | tr '\n' ' ') ($(cat "$TMP/err"))"
fi

# -- a lesson's 'try' with an empty alternative
printf '[lesson]\nid = t\ntitle = T\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\ntry = |\n' >"$P/try.ini"
expect 2 "logitlab: $P/try.ini:9: try: an empty setting" show "$P/try.ini"

# -- the configuration file: a key given twice (the second silently won)
printf '[display]\ntheme = mono\nascii = no\ntheme = projector\n' >"$P/twice.ini"
expect 2 "logitlab: $P/twice.ini:4: 'theme' is given twice in [display] (first on line 2)" --config "$P/twice.ini" show toy

# -- two lessons with one id in one directory: listed twice, and show took
# the first in silence. Both files are named, for every command.
mkdir -p "$P/lessons"
for f in a b; do
    printf '[lesson]\nid = same\ntitle = %s\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n' "$f" >"$P/lessons/$f.ini"
done
dup="logitlab: $P/lessons/b.ini: lesson id 'same' is also $P/lessons/a.ini's"
expect 2 "$dup" lessons --lessons-dir "$P/lessons"
expect 2 "$dup" show same --lessons-dir "$P/lessons"
mv "$P/lessons/b.ini" "$P/lessons/b.ini.off"
expect 0 "" show same --lessons-dir "$P/lessons"
