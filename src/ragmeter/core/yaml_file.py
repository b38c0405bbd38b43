"""YAML from a user's file, bounded: its size, its aliases, and what its aliases expand to.

YAML anchors and aliases let a small file stand for a huge value: 1.7 KB whose aliases nest
ten deep stand for 10^6 strings of 1,000 characters, which one ``str()`` or one prompt turns
into gigabytes (the "billion laughs"). ``yaml.safe_load`` builds such a value cheaply, as
shared references, and the cost comes later, wherever the value is walked. :func:`load_yaml`
refuses it before anything is built: the text must be at most :data:`MAX_BYTES`, hold at
most :data:`MAX_ALIASES` aliases, and expand to at most :data:`MAX_EXPANDED` characters and
nodes, counted on the composed node graph with each shared node counted as often as it is
referred to (a cycle is refused too). Every refusal is an ``InvalidInputError`` naming the
file, and the line of the YAML error when there is one.

PyYAML is an optional dependency (``ragmeter[records]``); without it the error says how to
install it or to write the file as JSON.
"""

from __future__ import annotations

import os
from typing import Any

from ragmeter.core.errors import InvalidInputError

MAX_BYTES = 16 * 2 ** 20  # a criteria or settings file is kilobytes
MAX_ALIASES = 10_000
MAX_EXPANDED = 32 * 2 ** 20  # characters of every scalar plus one per node, aliases expanded


def check_size(path: str | os.PathLike, what: str = "file") -> None:
    """Refuse a settings or criteria file over :data:`MAX_BYTES` before it is read into memory
    (a missing or unreadable file is left to the reader, which says so)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return
    if size > MAX_BYTES:
        raise InvalidInputError(f"the {what} is larger than {MAX_BYTES // 2 ** 20} MB ({size} bytes)", file=str(path),
                                fix=f"a {what} is kilobytes: check the path")


def has_yaml() -> bool:
    """Whether PyYAML can be imported (it is imported only to read a YAML file)."""
    import importlib.util

    return importlib.util.find_spec("yaml") is not None


def load_yaml(text: str, *, file: str, what: str = "file", install: str = "pip install pyyaml") -> Any:
    """The value of the YAML document ``text`` (read from ``file``), within the bounds above.

    >>> load_yaml("a: &x [1, 2]\\nb: *x", file="c.yaml")
    {'a': [1, 2], 'b': [1, 2]}
    >>> bomb = "a: &a ['" + "x" * 1000 + "']\\n" + "".join(
    ...     f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\\n" for p, n in zip("abcdef", "bcdefg"))
    >>> load_yaml(bomb, file="c.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragmeter.core.errors.InvalidInputError: c.yaml, line 6: its aliases expand to more than 33554432 characters ...
    """
    if len(text) > MAX_BYTES:
        raise InvalidInputError(f"the {what} is larger than {MAX_BYTES // 2 ** 20} MB", file=file,
                                fix="a YAML file this size is not a criteria or settings file: check the path")
    try:
        import yaml  # an optional dependency without stubs
    except ImportError:
        raise InvalidInputError(f"reading a YAML {what} needs PyYAML", file=file,
                                fix=f"{install}, or write the {what} as JSON") from None
    loader = None
    try:
        loader = yaml.SafeLoader(text)  # its reader refuses unprintable characters here
        node = _compose(loader, yaml, file)
        if node is None:
            return None
        _check_expansion(node, file, yaml)
        return loader.construct_document(node)
    except InvalidInputError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InvalidInputError(f"not valid YAML ({getattr(exc, 'problem', None) or exc})", file=file,
                                line=mark.line + 1 if mark is not None else None) from None
    except (RecursionError, ValueError, OverflowError) as exc:
        raise InvalidInputError(f"YAML that cannot be read ({type(exc).__name__}: nested too deep or a value "
                                f"out of range)", file=file, fix=f"write a flatter {what}") from None
    finally:
        if loader is not None:
            loader.dispose()


def _compose(loader: Any, yaml: Any, file: str) -> Any:
    """The document's node graph, counting the aliases as they are read."""
    aliases = 0
    original = loader.compose_node

    def compose_node(parent: Any, index: Any) -> Any:
        nonlocal aliases
        if loader.check_event(yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise InvalidInputError(f"more than {MAX_ALIASES} aliases", file=file,
                                        line=loader.peek_event().start_mark.line + 1,
                                        fix="write the values out instead of repeating aliases")
        return original(parent, index)

    loader.compose_node = compose_node
    return loader.get_single_node()


def _check_expansion(root: Any, file: str, yaml: Any) -> None:
    """Refuse a graph whose value, aliases expanded, passes :data:`MAX_EXPANDED` (or is a cycle)."""
    weight: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:  # post-order, iterative: a deep document cannot exhaust the Python stack here
        node, children_done = stack.pop()
        key = id(node)
        if key in weight:
            continue
        children = _children(node, yaml)
        if not children_done:
            if key in open_nodes:
                raise InvalidInputError("an alias refers to a value that holds it (a cycle)", file=file,
                                        line=node.start_mark.line + 1, fix="remove the recursive alias")
            open_nodes.add(key)
            stack.append((node, True))
            for child in children:
                if id(child) in open_nodes and id(child) not in weight:
                    raise InvalidInputError("an alias refers to a value that holds it (a cycle)", file=file,
                                            line=child.start_mark.line + 1, fix="remove the recursive alias")
                if id(child) not in weight:
                    stack.append((child, False))
            continue
        open_nodes.discard(key)
        total = 1 + (len(node.value) if isinstance(node, yaml.ScalarNode) else sum(weight[id(c)] for c in children))
        if total > MAX_EXPANDED:
            raise InvalidInputError(f"its aliases expand to more than {MAX_EXPANDED} characters (a YAML alias "
                                    f"bomb?)", file=file, line=node.start_mark.line + 1,
                                    fix="write the values out instead of nesting aliases")
        weight[key] = total


def _children(node: Any, yaml: Any) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
