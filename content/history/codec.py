"""Compact, exact reverse patches for version history (SPEC §6).

A version row stores a *reverse* patch: applied to version N's content it yields
version N-1's content (full snapshots every K versions are the caller's business).

Format: JSON text of an array of ``[pos, delete_len, insert_text]`` ops, e.g.
``[[120,5,"old words"]]``. ``pos`` and ``delete_len`` are code-point offsets into the
NEWER text; ops are sorted by ``pos`` and never overlap, so applying them is plain
slicing — exact and never fuzzy (unlike diff-match-patch's ``patch_apply``). ``[]`` is
the patch for "no change". Pure functions, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from diff_match_patch import diff_match_patch

__all__ = ["Patch", "apply_patch", "make_patch", "ops_patch", "patch_size", "span_patch"]

Patch = str
Op = tuple[int, int, str]

# Above this many code points in either differing middle, a single replace op is
# stored instead of running a character diff (keeps make_patch's time bounded).
MAX_DIFF_MIDDLE = 200_000
# diff_main falls back to a coarser (still exact) diff after this many seconds.
DIFF_TIMEOUT_SECONDS = 0.05

# Prefix/suffix scanning compares chunks that double from 256 up to 64K code points,
# then binary-searches inside the chunk that differs: C-speed, no per-char Python loop.
_FIRST_CHUNK = 256
_MAX_CHUNK = 1 << 16

_DMP = diff_match_patch()
_DMP.Diff_Timeout = DIFF_TIMEOUT_SECONDS
_EQUAL, _DELETE = diff_match_patch.DIFF_EQUAL, diff_match_patch.DIFF_DELETE


def span_patch(*, start: int, new_len: int, old_text: str) -> Patch:
    """Reverse patch for a known edit, without looking at the whole document.

    The edit turned ``old`` into ``old[:start] + X + old[start + len(old_text):]``
    with ``len(X) == new_len``; the patch puts ``old_text`` back in place of ``X``.
    """
    if start < 0 or new_len < 0:
        raise ValueError("start and new_len must be non-negative")
    if new_len == 0 and not old_text:
        return _encode([])
    return _encode([(start, new_len, old_text)])


def ops_patch(ops: list[Op]) -> Patch:
    """Reverse patch from known ops (``EditPlan.reverse_ops``: sorted, non-overlapping, in
    offsets of the NEWER text), e.g. the several spans of one multi-edit."""
    for pos, delete_len, _ in ops:
        if pos < 0 or delete_len < 0:
            raise ValueError("op positions and lengths must be non-negative")
    return _encode(ops)


def make_patch(new: str, old: str) -> Patch:
    """Reverse patch turning ``new`` back into ``old`` for an arbitrary change.

    Common prefix and suffix are trimmed first; a small differing middle is
    character-diffed (diff-match-patch, time-bounded, cleaned up for size), a large
    one becomes a single replace op. The smaller of the two encodings is returned.
    """
    if new == old:
        return _encode([])
    prefix = _common_prefix_len(new, old)
    suffix = _common_suffix_len(new, old, prefix)
    new_mid, old_mid = new[prefix : len(new) - suffix], old[prefix : len(old) - suffix]
    replace = _encode([(prefix, len(new_mid), old_mid)])
    if not new_mid or not old_mid or max(len(new_mid), len(old_mid)) >= MAX_DIFF_MIDDLE:
        return replace
    diffed = _encode(_diff_ops(new_mid, old_mid, offset=prefix))
    return diffed if patch_size(diffed) < patch_size(replace) else replace


def apply_patch(new: str, patch: Patch) -> str:
    """Return the older text that ``patch`` (from make_patch/span_patch) encodes.

    Raises ValueError if the patch is malformed or does not fit ``new``.
    """
    pieces: list[str] = []
    cursor = 0
    for pos, delete_len, insert in _decode(patch):
        if pos < cursor or pos + delete_len > len(new):
            raise ValueError(f"patch op at {pos} does not fit a text of length {len(new)}")
        pieces += (new[cursor:pos], insert)
        cursor = pos + delete_len
    pieces.append(new[cursor:])
    return "".join(pieces)


def patch_size(patch: Patch) -> int:
    """Bytes the patch takes when stored as UTF-8 text."""
    # surrogatepass: a lone surrogate (possible from a JSON "\ud800" escape) must not crash sizing.
    return len(patch.encode("utf-8", "surrogatepass"))


# --------------------------------------------------------------------------- diffing


def _diff_ops(new_mid: str, old_mid: str, *, offset: int) -> list[Op]:
    """Character diff new_mid -> old_mid as ops positioned in the full new text."""
    diffs = _DMP.diff_main(new_mid, old_mid)
    _DMP.diff_cleanupEfficiency(diffs)
    ops: list[Op] = []
    pos = offset
    for kind, text in diffs:
        if kind == _EQUAL:
            pos += len(text)
        elif kind == _DELETE:
            _add_to_ops(ops, pos, delete_len=len(text), insert="")
            pos += len(text)
        else:
            _add_to_ops(ops, pos, delete_len=0, insert=text)
    return ops


def _add_to_ops(ops: list[Op], pos: int, *, delete_len: int, insert: str) -> None:
    # A delete/insert touching the previous op's end belongs to the same replacement.
    if ops and ops[-1][0] + ops[-1][1] == pos:
        start, length, text = ops[-1]
        ops[-1] = (start, length + delete_len, text + insert)
    else:
        ops.append((pos, delete_len, insert))


def _common_prefix_len(a: str, b: str) -> int:
    def same(lo: int, hi: int) -> bool:
        return a.startswith(b[lo:hi], lo)

    return _common_run(same, min(len(a), len(b)))


def _common_suffix_len(a: str, b: str, prefix: int) -> int:
    """Common suffix length, never overlapping the already-matched ``prefix``."""
    len_a, len_b = len(a), len(b)

    def same(lo: int, hi: int) -> bool:  # code points lo..hi counted from the end
        return a.endswith(b[len_b - hi : len_b - lo], 0, len_a - lo)

    return _common_run(same, min(len_a, len_b) - prefix)


def _common_run(same: Callable[[int, int], bool], limit: int) -> int:
    """Largest n <= limit with same(0, n), where same(lo, hi) compares offsets lo..hi."""
    done, step = 0, _FIRST_CHUNK
    while done + step <= limit and same(done, done + step):
        done += step
        step = min(step * 2, _MAX_CHUNK)
    low, high = done, min(done + step, limit)
    while low < high:
        mid = (low + high + 1) // 2
        if same(done, mid):
            low = mid
        else:
            high = mid - 1
    return low


# --------------------------------------------------------------------------- encoding


def _encode(ops: list[Op]) -> Patch:
    return json.dumps(ops, ensure_ascii=False, separators=(",", ":"))


def _decode(patch: Patch) -> list[Op]:
    try:
        raw = json.loads(patch)
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"malformed patch: {exc}") from None
    if not isinstance(raw, list):
        raise ValueError("malformed patch: expected a JSON array of ops")
    return [_decode_op(item) for item in raw]


def _decode_op(item: Any) -> Op:
    if not (isinstance(item, list) and len(item) == 3):
        raise ValueError(f"malformed patch op: {item!r:.80}")
    pos, delete_len, insert = item
    if not (_is_count(pos) and _is_count(delete_len) and isinstance(insert, str)):
        raise ValueError(f"malformed patch op: {item!r:.80}")
    return pos, delete_len, insert


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
