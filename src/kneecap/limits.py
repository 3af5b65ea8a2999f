"""Bounds on what a user's input may cost: file kinds and sizes, YAML aliases, values shown in messages.

Every command that reads a file a user names reads it through here or checks it here first, so
that no input makes kneecap use memory or time without bound (issue 35):

* only a regular file is read (:func:`regular_file`): a FIFO, a character device (``/dev/zero``,
  ``/dev/urandom``) or a socket never ends, and a directory is not a file;
* a text file a person writes (``params.yaml``, a scenarios file, a case's ``case.yaml``) is read
  only up to :data:`MAX_TEXT_BYTES` (:func:`read_text`);
* YAML is loaded with :class:`BoundedSafeLoader`: PyYAML's safe loader, which builds no Python
  object but plain data, and which here refuses a document whose aliases expand past
  :data:`MAX_YAML_NODES` nodes (a 549-byte "billion laughs" of nested aliases is a list of
  387 million items once walked) or refer to themselves;
* a value quoted in an error message is shown by :func:`short_repr`, never whole.
"""

from __future__ import annotations

import os
import reprlib
import stat
from pathlib import Path
from typing import Any

import yaml

__all__ = ["MAX_TEXT_BYTES", "MAX_YAML_NODES", "BoundedSafeLoader", "InputError", "file_kind", "load_yaml",
           "read_text", "regular_file", "short_repr"]

#: Largest text file a person writes that kneecap reads whole: params.yaml is 6 KB, the bundled
#: scenarios file 5 KB; a scenarios file of a thousand scenarios is about 200 KB.
MAX_TEXT_BYTES = 16 << 20

#: Most nodes a YAML document may hold once its aliases are expanded (each alias counted as a copy of
#: what it names). The project's own YAML files hold a few hundred; a thousand scenarios of twenty
#: keys are 40,000.
MAX_YAML_NODES = 1_000_000


class InputError(ValueError):
    """An input refused by its bounds: the message names the file and the bound."""


def file_kind(mode: int) -> str | None:
    """What a file of ``st_mode`` ``mode`` is when it is not a regular file (None when it is).

    Examples
    --------
    >>> file_kind(0o100644) is None, file_kind(stat.S_IFCHR | 0o666), file_kind(stat.S_IFIFO | 0o600)
    (True, 'a character device', 'a FIFO (named pipe)')
    """
    if stat.S_ISREG(mode):
        return None
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def regular_file(path: str | os.PathLike[str], max_bytes: int | None = None) -> int:
    """The size of ``path`` after checking it is a regular file (symbolic links followed) of at most ``max_bytes``.

    Raises
    ------
    FileNotFoundError
        No such file.
    InputError
        A directory, device, FIFO or socket (which would be read without end), or a file over ``max_bytes``.
    """
    st = os.stat(path)
    kind = file_kind(st.st_mode)
    if kind is not None:
        raise InputError(f"{os.fspath(path)}: {kind}, not a regular file: refused (kneecap reads only regular files)")
    if max_bytes is not None and st.st_size > max_bytes:
        raise InputError(f"{os.fspath(path)}: {st.st_size:,} bytes, over the {max_bytes:,}-byte limit for this "
                         "kind of file: refused")
    return st.st_size


def read_text(path: str | os.PathLike[str], max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (:func:`regular_file`).

    At most ``max_bytes + 1`` bytes are read, so a file that grows after the check is refused too.
    """
    regular_file(path, max_bytes)
    with Path(path).open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"{os.fspath(path)}: over the {max_bytes:,}-byte limit for this kind of file: refused")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{os.fspath(path)}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


class YAMLBoundError(yaml.YAMLError):
    """A YAML document refused for its size once its aliases are expanded, or for an alias to itself."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def expanded_nodes(root: yaml.Node, limit: int = MAX_YAML_NODES) -> int:
    """Nodes of the document under ``root`` with every alias expanded (counted, not built).

    Each distinct node is visited once and its expanded size remembered, so the count costs the
    document's own size however far its aliases expand.

    Raises
    ------
    YAMLBoundError
        Past ``limit`` nodes, or a node that contains itself through an alias.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[key] > limit:
                raise YAMLBoundError(f"line {node.start_mark.line + 1}: aliases expand this document to more than "
                                     f"{limit:,} nodes: refused")
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YAMLBoundError(f"line {node.start_mark.line + 1}: an alias to a node that contains it: refused")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    return sizes[id(root)]


class BoundedSafeLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a document whose aliases expand past :data:`MAX_YAML_NODES` nodes."""

    def compose_document(self) -> yaml.Node:
        """The document's node graph, counted (:func:`expanded_nodes`) before anything is built from it."""
        node = super().compose_document()
        if node is not None:
            expanded_nodes(node)
        return node


def load_yaml(text: str, where: str) -> Any:
    """The data of a YAML document (:class:`BoundedSafeLoader`); any problem is one :class:`InputError` line.

    Examples
    --------
    >>> load_yaml("a: [1, 2]", "x.yaml")
    {'a': [1, 2]}
    >>> load_yaml("a: !!python/object:os.system ls", "x.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kneecap.limits.InputError: x.yaml: line 1, column 4: could not determine a constructor for the tag ...
    """
    try:
        return yaml.load(text, Loader=BoundedSafeLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: {yaml_problem(exc)}") from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """One line saying where and what a YAML error is (PyYAML's own text spans several lines, quoting the input)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + short_text(str(problem))


def short_text(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit - 1] + "…"


_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxdict = 6
_REPR.maxstring = _REPR.maxother = 60


def short_repr(value: object, limit: int = 120) -> str:
    """``repr(value)`` for an error message, cut short however large ``value`` is.

    :mod:`reprlib` walks at most a few items per level and a few levels, so a value of nested
    aliases costs no more than a small one (a full ``repr`` of one took 3.5 GB).

    Examples
    --------
    >>> short_repr("abc")
    "'abc'"
    >>> len(short_repr([[1] * 1000] * 1000))
    120
    """
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
