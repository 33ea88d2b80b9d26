"""The bounded Jinja2 sandbox prompts render in (SPEC §5.2).

Jinja's ``SandboxedEnvironment`` stops attribute escapes but not runaway work: nested loops over
``range(100000)``, ``'a' * 10**6`` printed a thousand times, ``center(10**9)`` or a list repeated
into a terabyte of ``str()``. A render here runs under a :class:`Budget` (held in a context
variable, so concurrent renders in other threads have their own) that stops it with
:class:`RenderLimitError` when it would

* produce more than ``max_chars`` characters of output (counted chunk by chunk while streaming),
* build any single value larger than that (checked *before* the allocation wherever Python would
  allocate in one C call: ``*``, ``+``, ``%``, ``str.format``, width/padding filters and methods,
  ``join``, ``sum`` — and on the result of every other call and filter), or
* take more than ``max_steps`` steps (loop iterations, calls, operators) or ``max_cpu_seconds`` of
  the thread's CPU time, checked as it goes.

Every ``{% for %}`` iterable is wrapped in :meth:`BoundedSandbox.guard_iter` by rewriting the
parsed template, so even a loop whose body does nothing counts its iterations.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import BuiltinMethodType, MethodType
from typing import Any, cast

from jinja2 import Environment, nodes
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.sandbox import MAX_RANGE, SandboxedEnvironment, SandboxedFormatter

__all__ = ["BoundedSandbox", "Budget", "RenderLimitError", "RenderLimits"]

# What Jinja passes first to pass_context/pass_environment/pass_eval_context filters.
_PASSED = (Context, Environment, EvalContext)
# Checking the clock costs far more than counting; look at it every this many steps.
_CLOCK_EVERY = 256
# Sizes of values that are not strings or containers, as rendered by str(): generous guesses.
_SCALAR_SIZE = 24
# Exponentiation results beyond this many bits are refused (also at compile time, where Jinja
# folds constant expressions before any budget exists).
MAX_POWER_BITS = 10_000


class RenderLimitError(Exception):
    """Rendering was stopped by a bound; ``str(exc)`` says which one and how to stay under it."""


@dataclass(frozen=True)
class RenderLimits:
    max_chars: int = 1_000_000
    max_steps: int = 1_000_000
    max_cpu_seconds: float = 2.0


@dataclass
class Budget:
    """The running account of one render."""

    limits: RenderLimits
    steps: int = 0
    output_chars: int = 0
    deadline: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.deadline = time.thread_time() + self.limits.max_cpu_seconds

    def step(self, count: int = 1) -> None:
        before = self.steps
        self.steps += count
        if self.steps > self.limits.max_steps:
            raise RenderLimitError(
                f"Rendering stopped after {self.limits.max_steps} steps (loop iterations, calls "
                "and operations). Loop over less data or simplify the template."
            )
        if self.steps // _CLOCK_EVERY != before // _CLOCK_EVERY:
            self.check_clock()

    def check_clock(self) -> None:
        if time.thread_time() > self.deadline:
            raise RenderLimitError(
                f"Rendering stopped after {self.limits.max_cpu_seconds:g} s of CPU time. Loop "
                "over less data or simplify the template."
            )

    def output(self, chunk: str) -> None:
        self.output_chars += len(chunk)
        if self.output_chars > self.limits.max_chars:
            raise RenderLimitError(
                f"The rendered prompt would be longer than {self.limits.max_chars} characters. "
                "Render less text (fewer loop iterations, shorter repeated values)."
            )


_budget: ContextVar[Budget | None] = ContextVar("tiddly_render_budget", default=None)
# Outside a render (Jinja folds constant expressions while compiling) sizes are still bounded.
_DEFAULT_LIMITS = RenderLimits()


def current_budget() -> Budget | None:
    return _budget.get()


def start(limits: RenderLimits) -> Any:
    """Open a budget for the render in this context; pass the result to :func:`finish`."""
    return _budget.set(Budget(limits))


def finish(token: Any) -> None:
    _budget.reset(token)


def _max_chars() -> int:
    budget = _budget.get()
    return (budget.limits if budget else _DEFAULT_LIMITS).max_chars


def _step(count: int = 1) -> None:
    budget = _budget.get()
    if budget is not None:
        budget.step(count)


def _too_big(what: str) -> RenderLimitError:
    return RenderLimitError(
        f"The template would build {what} longer than {_max_chars()} characters. Use smaller "
        "widths, counts or values."
    )


def check_size(size: int, what: str = "a value") -> None:
    if size > _max_chars():
        raise _too_big(what)


# --------------------------------------------------------------------------- sizes


def rendered_size(value: Any, limit: int | None = None) -> int:
    """About how many characters ``str(value)`` has, counting no further than just past ``limit``.

    Containers are walked (shared references count every time, as ``str()`` repeats them), so a
    list holding one big string a million times is seen for what it prints as. The walk stops as
    soon as the total passes ``limit`` and watches the CPU deadline, so it is never the runaway.
    """
    limit = _max_chars() if limit is None else limit
    total = 0
    stack = [value]
    visited = 0
    budget = _budget.get()
    while stack and total <= limit:
        item = stack.pop()
        visited += 1
        if budget is not None and visited % 4096 == 0:
            budget.check_clock()
        if isinstance(item, str | bytes):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + 2 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 + 2 * len(item)
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            total += item.bit_length() // 3 + 2
        else:
            total += _SCALAR_SIZE
    return total


def _check_rendered(value: Any, what: str = "a value") -> None:
    limit = _max_chars()
    if not isinstance(value, str) and rendered_size(value, limit) > limit:
        raise _too_big(what)


# --------------------------------------------------------------------------- operators

# printf-style conversions: the width and precision numbers, or `*` taken from the arguments.
_PRINTF = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")
_NUMBER = re.compile(r"\d+")


def check_printf(template: str, arguments: Any) -> None:
    """Refuse ``template % arguments`` whose widths, precisions or arguments are too large."""
    limit = _max_chars()
    total = len(template)
    for width, precision in _PRINTF.findall(template):
        for number in (width, precision):
            if number == "*":
                raise RenderLimitError(
                    "`*` widths in %-formatting are not supported in prompts; write the number."
                )
            if number:
                total += int(number)
    total += rendered_size(arguments, limit)
    check_size(total, "a formatted string")


def check_format_spec(spec: str) -> None:
    for number in _NUMBER.findall(spec):
        check_size(int(number), "a formatted field")


def _sequence_size(value: Any, limit: int) -> int:
    # A repeated or concatenated string costs its length; a list costs what it would print as.
    return len(value) if isinstance(value, str) else rendered_size(value, limit)


def check_binop(operator: str, left: Any, right: Any) -> None:
    limit = _max_chars()
    if operator == "*":
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(count, int) and count > 0:
                check_size(_sequence_size(seq, limit // count + 1) * count, "a repeated value")
    elif operator == "+":
        if isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
            check_size(_sequence_size(left, limit) + _sequence_size(right, limit))
    elif operator == "%" and isinstance(left, str):
        check_printf(left, right)
    huge_power = operator == "**" and _power_too_big(left, right)
    if huge_power or (operator == "*" and _product_too_big(left, right)):
        raise RenderLimitError(
            f"The template would compute a number of more than {MAX_POWER_BITS} bits. Use "
            "smaller numbers."
        )


def _product_too_big(left: Any, right: Any) -> bool:
    if not (isinstance(left, int) and isinstance(right, int)):
        return False
    return left.bit_length() + right.bit_length() > MAX_POWER_BITS


def _power_too_big(base: Any, exponent: Any) -> bool:
    if not (isinstance(base, int) and isinstance(exponent, int)):
        return False  # float overflow raises quickly by itself
    return exponent > 0 and abs(base) > 1 and exponent * abs(base).bit_length() > MAX_POWER_BITS


# --------------------------------------------------------------------------- methods and filters


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _replace_size(text: str, old: Any, new: Any, count: Any) -> int:
    if not (isinstance(old, str) and isinstance(new, str)):
        return len(text)
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    return len(text) + hits * max(len(new) - len(old), 0)


def _join_size(separator: str, items: list[Any]) -> int:
    limit = _max_chars()
    total = len(separator) * max(len(items) - 1, 0)
    for item in items:
        total += len(item) if isinstance(item, str) else rendered_size(item, limit)
        if total > limit:
            break
    return total


def check_str_method(text: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Pre-check the ``str`` methods whose result can be far larger than their inputs."""
    if name in ("center", "ljust", "rjust", "zfill"):
        check_size(_int(_arg(args, kwargs, 0, "width", 0)), f"a {name}() result")
    elif name == "expandtabs":
        tabsize = _int(_arg(args, kwargs, 0, "tabsize", 8))
        check_size(len(text) + text.count("\t") * tabsize, "an expandtabs() result")
    elif name == "replace":
        old, new = _arg(args, kwargs, 0, "old", ""), _arg(args, kwargs, 1, "new", "")
        count = _arg(args, kwargs, 2, "count", -1)
        check_size(_replace_size(text, old, new, count), "a replace() result")
    elif name == "translate":
        table = _arg(args, kwargs, 0, "table", None)
        if isinstance(table, dict):
            widest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
            check_size(len(text) * widest, "a translate() result")


def _materialised(args: tuple[Any, ...]) -> tuple[Any, ...]:
    # join() of a generator: take it into a list first so its size can be checked.
    if args and not isinstance(args[0], list | tuple | str):
        return (list(args[0]), *args[1:])
    return args


def check_list_method(items: list[Any], name: str, args: tuple[Any, ...]) -> None:
    if name in ("append", "insert"):
        check_size(len(items) + 1, "a list")
    elif name == "extend" and args:
        check_size(len(items) + len(args[0]), "a list")


class _BoundedFormatter(SandboxedFormatter):
    """``str.format`` that refuses huge field widths and values before formatting them."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        check_format_spec(format_spec)
        _check_rendered(value, "a formatted field")
        return super().format_field(value, format_spec)


def _wrap_filter(name: str, filter_func: Callable[..., Any]) -> Callable[..., Any]:
    """Every filter: the input must print within bounds, known growers are pre-checked, and the
    result is checked too (the cost of the call itself is bounded by the checked input)."""
    precheck = _FILTER_PRECHECKS.get(name)

    def bounded(*args: Any, **kwargs: Any) -> Any:
        _step()
        for arg in args:
            if not isinstance(arg, _PASSED):
                _check_rendered(arg, f"the input of the {name} filter")
        if precheck is not None:
            precheck(*_filter_args(args), **kwargs)
        result = filter_func(*args, **kwargs)
        if isinstance(result, str):
            check_size(len(result), f"a {name} result")
        elif isinstance(result, list | tuple | dict):
            _check_rendered(result, f"a {name} result")
        return result

    # Jinja reads pass_context/pass_environment markers from the function itself.
    bounded.__dict__.update(getattr(filter_func, "__dict__", {}))
    bounded.__name__ = getattr(filter_func, "__name__", name)
    return bounded


def _filter_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    # Drop the context/environment/eval-context a pass_* filter receives first.
    if args and isinstance(args[0], _PASSED):
        return args[1:]
    return args


def _pre_center(value: Any, width: Any = 80, *_: Any, **__: Any) -> None:
    check_size(_int(width), "a center result")


def _pre_indent(value: Any, width: Any = 4, *_: Any, **__: Any) -> None:
    text = str(value)
    pad = len(width) if isinstance(width, str) else _int(width)
    check_size(len(text) + (text.count("\n") + 1) * pad, "an indent result")


def _pre_wordwrap(
    value: Any, width: Any = 79, break_long_words: bool = True, wrapstring: Any = None, **_: Any
) -> None:
    text = str(value)
    breaks = len(text) // max(_int(width), 1) + 1
    glue = len(wrapstring) if isinstance(wrapstring, str) else 2
    check_size(len(text) + breaks * glue, "a wordwrap result")


def _pre_replace(value: Any, old: Any = "", new: Any = "", count: Any = None, **_: Any) -> None:
    check_size(_replace_size(str(value), old, new, count), "a replace result")


def _pre_format(value: Any, *args: Any, **kwargs: Any) -> None:
    check_printf(str(value), kwargs or args)


def _pre_join(value: Any, d: Any = "", *_: Any, **__: Any) -> None:
    if isinstance(value, list | tuple):
        check_size(_join_size(str(d), list(value)), "a join result")


def _pre_batch(value: Any, linecount: Any = 1, *_: Any, **__: Any) -> None:
    check_size(_int(linecount), "a batch")


def _pre_slice(value: Any, slices: Any = 1, *_: Any, **__: Any) -> None:
    check_size(_int(slices), "a slice")


def _pre_sum(iterable: Any, attribute: Any = None, start: Any = 0, **_: Any) -> None:
    if not isinstance(start, int | float) and isinstance(iterable, list | tuple):
        check_size(
            sum(len(x) if isinstance(x, list | tuple | str) else 1 for x in iterable), "a sum"
        )


_FILTER_PRECHECKS: dict[str, Callable[..., None]] = {
    "center": _pre_center,
    "indent": _pre_indent,
    "wordwrap": _pre_wordwrap,
    "replace": _pre_replace,
    "format": _pre_format,
    "join": _pre_join,
    "batch": _pre_batch,
    "slice": _pre_slice,
    "sum": _pre_sum,
}


def _bounded_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise RenderLimitError(
            f"range() is limited to {MAX_RANGE} numbers in prompts; loop over less."
        )
    return numbers


def _make_lipsum(original: Callable[..., str]) -> Callable[..., str]:
    def lipsum(n: int = 5, *args: Any, **kwargs: Any) -> str:
        check_size(_int(n) * 1000, "lorem ipsum text")
        return original(n, *args, **kwargs)

    return lipsum


# --------------------------------------------------------------------------- the environment


class BoundedSandbox(SandboxedEnvironment):
    """A sandbox whose every loop, call, operator, filter and output chunk is on the budget."""

    # Intercepted operators are also exempt from compile-time constant folding.
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=self._finalize, **options)
        self.filters = {name: _wrap_filter(name, f) for name, f in self.filters.items()}
        self.globals["range"] = _bounded_range
        self.globals["lipsum"] = _make_lipsum(cast(Callable[..., str], self.globals["lipsum"]))

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Call(
                nodes.EnvironmentAttribute("guard_iter"), [loop.iter], [], None, None
            )
        for concat in tree.find_all(nodes.Concat):
            concat.nodes = [
                nodes.Call(nodes.EnvironmentAttribute("guard_str"), [part], [], None, None)
                for part in concat.nodes
            ]
        return tree

    def guard_iter(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            _step()
            yield item

    def guard_str(self, value: Any) -> Any:
        """Each operand of ``~``: it will be ``str()``-ed, so it must print within bounds."""
        _check_rendered(value, "a ~ operand")
        if isinstance(value, str):
            check_size(len(value), "a ~ operand")
        return value

    def _finalize(self, value: Any) -> Any:
        budget = _budget.get()
        if budget is not None and not isinstance(value, str):
            remaining = budget.limits.max_chars - budget.output_chars
            if rendered_size(value, remaining) > remaining:
                budget.output("x" * (remaining + 1))  # raises the output-limit error
        return value

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        _step()
        check_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _step()
        owner = getattr(__obj, "__self__", None)
        if isinstance(__obj, BuiltinMethodType | MethodType):
            if isinstance(owner, str):
                if __obj.__name__ == "join":
                    args = _materialised(args)
                    check_size(_join_size(owner, list(args[0]) if args else []), "a join result")
                check_str_method(owner, __obj.__name__, args, kwargs)
            elif isinstance(owner, list):
                check_list_method(owner, __obj.__name__, args)
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, str):
            check_size(len(result))
        elif isinstance(result, list | tuple | dict):
            _check_rendered(result)
        return result

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None or type(value.__self__) is not str:
            return wrapped
        text: str = value.__self__
        formatter = _BoundedFormatter(self)
        is_format_map = value.__name__ == "format_map"

        def bounded_format(*args: Any, **kwargs: Any) -> str:
            _step()
            if is_format_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                kwargs = args[0]  # format_map takes one mapping
                args = ()
            check_size(len(text), "a format string")
            return str(formatter.vformat(text, args, kwargs))

        return bounded_format


def render_bounded(template: Any, context: dict[str, object], limits: RenderLimits) -> str:
    """Render a template compiled by a :class:`BoundedSandbox`, streaming and counting output."""
    token = start(limits)
    try:
        budget = _budget.get()
        assert budget is not None
        chunks: list[str] = []
        for chunk in template.generate(context):
            budget.output(chunk)
            budget.step()
            chunks.append(chunk)
        return "".join(chunks)
    finally:
        finish(token)
