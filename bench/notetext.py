"""The benchmark's generated notes: lines of exactly 60 characters, one unique marker in the
middle, a repeated token on every 10th line (see bench/README.md, "Notes")."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence

# Note text -----------------------------------------------------------------------------------

LINE_CHARS = 59  # + "\n" = 60 characters per line
TOKEN = "zqxrepeat"  # on every 10th line
LIST_WORD = "quokkabench"  # in every 5th note of the list corpus
_WORDS_TEXT = (
    "apple bridge candle dolphin ember forest garden harbor island jungle kettle lantern "
    "meadow needle orchard pebble quiet ribbon saddle timber umbrella velvet willow yonder "
    "zenith amber basket cobalt drizzle engine falcon gravel hollow ivory jasper kindle ledger "
    "marble nectar oyster parcel quartz rocket silver tundra upland violet walnut yellow "
    "zephyr anchor button"
)
WORDS = _WORDS_TEXT.split()


def _filler_lines(count: int = 997, seed: int = 12345) -> list[str]:
    """Deterministic filler fragments, each long enough to fill a line."""
    state = seed
    out = []
    for _ in range(count):
        words = []
        while sum(len(w) + 1 for w in words) < LINE_CHARS:
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            words.append(WORDS[state % len(WORDS)])
        out.append(" ".join(words))
    return out


FILLER = _filler_lines()


@dataclasses.dataclass(frozen=True)
class NoteText:
    content: str
    lines: int
    marker: str  # unique string on exactly one line, in the middle
    marker_line: int  # 1-based
    token: str
    token_lines: int  # number of lines containing ``token`` (once each)
    extra: dict[int, str]  # 1-based line -> extra unique marker string on that line


def _line(n: int, head: str = "") -> str:
    text = f"L{n:06d} {head}{FILLER[(n * 7919) % len(FILLER)]}"
    return text[:LINE_CHARS].rstrip().ljust(LINE_CHARS, ".")


def make_note(
    lines: int, *, marker: str | None = None, extra_markers: Sequence[str] = ()
) -> NoteText:
    """A note of ``lines`` lines of 60 characters (newline included).

    One unique marker line sits in the middle (line ``lines // 2 + 1``); ``TOKEN`` is on every
    10th line (10, 20, ...); ``extra_markers`` go on the next non-token lines after the marker.
    Markers must not contain one another, ``TOKEN`` or ``LIST_WORD``.
    """
    if lines < 1:
        raise ValueError("lines must be >= 1")
    marker = marker or f"mrk-{uuid.uuid4().hex[:10]}"
    marker_line = lines // 2 + 1
    if marker_line % 10 == 0:
        marker_line += 1 if marker_line < lines else -1
    special: dict[int, str] = {marker_line: marker}
    extra: dict[int, str] = {}
    n = marker_line
    for m in extra_markers:
        n += 1
        while n % 10 == 0:
            n += 1
        if n > lines:
            raise ValueError(f"note of {lines} lines is too short for {len(extra_markers)} markers")
        special[n] = m
        extra[n] = m
    out = []
    token_lines = 0
    for i in range(1, lines + 1):
        if i in special:
            out.append(_line(i, special[i] + " "))
        elif i % 10 == 0:
            out.append(_line(i, TOKEN + " "))
            token_lines += 1
        else:
            out.append(_line(i))
    content = "\n".join(out) + "\n"
    return NoteText(content, lines, marker, marker_line, TOKEN, token_lines, extra)


@dataclasses.dataclass
class NoteRef:
    """A note the benchmark created: its id on the server and the text it posted."""

    id: str
    text: NoteText
