"""Paths, globs and ordering with the rules of Kafka's shell (FORMATS.md 8.3, GlobComponent)."""

from __future__ import annotations

from typing import Any

import pytest

from metashell.image.image import MetadataImage
from metashell.java_order import java_sorted
from metashell.tree.node import DirNode, ScalarLeaf, StaticDir, TreeContext
from metashell.tree.paths import glob, glob_components, glob_regex, is_glob, normalize, resolve


def tree() -> StaticDir:
    ctx = TreeContext(MetadataImage())

    def leaf(value: str) -> Any:
        return lambda n: ScalarLeaf(n, ctx, lambda r: value)

    def d(children: dict[str, Any]) -> Any:
        return lambda n: StaticDir(n, ctx, children)

    return StaticDir(
        "/",
        ctx,
        {
            "topics": d(
                {
                    "foo": d({"0": leaf("p0"), "10": leaf("p10"), "2": leaf("p2")}),
                    "bar": d({"0": leaf("b0")}),
                    "f*o": d({}),
                    "a\\b": leaf("backslash"),
                }
            ),
            "brokers": d({"1": leaf("b1"), "2": leaf("b2")}),
            "weird": d(
                {"x.y": leaf("dot"), "x+y": leaf("plus"), "[ab]": leaf("brackets"), "a,b": leaf("comma")}
            ),
        },
    )


@pytest.mark.parametrize(
    "cwd,path,expected",
    [
        ("/", "/", []),
        ("/", "topics", ["topics"]),
        ("/topics", "foo", ["topics", "foo"]),
        ("/topics", "..", []),
        ("/", "..", []),
        ("/", "../../topics", ["topics"]),
        ("/", "//topics///foo/", ["topics", "foo"]),
        ("/", "/topics/./foo/../bar", ["topics", "bar"]),
        ("/a/b", "../c", ["a", "c"]),
        ("/", "/nonexistent/../topics", ["topics"]),  # resolved before any lookup
    ],
)
def test_normalize(cwd: str, path: str, expected: list[str]) -> None:
    assert normalize(cwd, path) == expected


def paths(pattern: str, cwd: str = "/") -> list[str]:
    return [p for p, _ in glob(tree(), cwd, pattern)]


def test_literal_and_sorted_glob_matches() -> None:
    assert paths("/topics/foo/*") == ["/topics/foo/0", "/topics/foo/10", "/topics/foo/2"]
    assert paths("/topics/*/0") == ["/topics/bar/0", "/topics/foo/0"]
    assert paths("/topics/fo?") == ["/topics/foo"]
    assert paths("/{brokers,topics}") == ["/brokers", "/topics"]
    assert paths("/topics/{foo,nope}/1?") == ["/topics/foo/10"]
    assert paths("foo/2", cwd="/topics") == ["/topics/foo/2"]
    assert paths("/") == ["/"]
    assert paths("/nope") == [] and paths("/to*/nope") == []


def test_descending_through_a_leaf_does_not_match() -> None:
    assert paths("/topics/foo/0/x") == []
    assert paths("/topics/foo/0/*") == []


def test_escapes_and_literals() -> None:
    # a component without * ? {..} is looked up literally, backslashes included (Kafka's GlobComponent)
    assert paths("/topics/a\\b") == ["/topics/a\\b"]
    # ... so an escape alone does not make a glob: "f\*o" is looked up as is and does not exist
    assert paths("/topics/f\\*o") == []
    # in a glob, \x is a literal x
    assert paths("/topics/f\\**") == ["/topics/f*o"]
    # regex metacharacters are literal
    assert paths("/weird/x.*") == ["/weird/x.y"]
    assert paths("/weird/x+?") == ["/weird/x+y"]
    # character classes (metashell's addition); one that matches nothing falls back to the name
    assert paths("/weird/[ab]") == ["/weird/[ab]"]
    assert paths("/weird/[[]ab]*") == ["/weird/[ab]"]
    assert paths("/weird/[x]*") == ["/weird/x+y", "/weird/x.y"]
    assert paths("/weird/[!x[]*") == ["/weird/a,b"]
    assert paths("/weird/a,b") == ["/weird/a,b"]


def test_malformed_globs_are_literal() -> None:
    assert glob_regex("{a,{b}}") is None
    assert glob_regex("{abc") is None
    assert not is_glob("plain.name") and is_glob("a*") and is_glob("{a,b}")
    assert paths("/{topics") == []


def test_glob_regex_matches_whole_names_only() -> None:
    rx = glob_regex("a*")
    assert rx is not None and rx.fullmatch("abc") and not rx.fullmatch("xabc")
    # Java's '.' excludes line terminators; ours does not, so names made with CR/LF stay reachable
    assert glob_regex("?").fullmatch("\n") and glob_regex("a*").fullmatch("a\rb\u2028")


def test_glob_components_and_resolve() -> None:
    root = tree()
    [(comps, node)] = glob_components(root, "/", "/topics/foo/1*")
    assert comps == ["topics", "foo", "10"] and node.text() == "p10"
    assert resolve(root, ["brokers", "2"]).text() == "b2"
    assert resolve(root, ["brokers", "3"]) is None
    assert resolve(root, ["brokers", "2", "x"]) is None


def test_java_string_order() -> None:
    # partitions sort as strings; UTF-16 code units put a surrogate pair before U+FF21
    assert java_sorted(["2", "10", "1"]) == ["1", "10", "2"]
    assert java_sorted(["\uff21", "\U0001d4b3", "a"]) == ["a", "\U0001d4b3", "\uff21"]
    ctx = TreeContext(MetadataImage())
    d = DirNode("d", ctx, lambda: ["b", "a"], lambda n: None)
    assert d.child_names() == ["a", "b"] and d.child_count() == 2
