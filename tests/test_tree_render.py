"""Kafka's ls/find/tree layouts (LsCommandHandler, FindCommandHandler, ShellNodePrinter)."""

from __future__ import annotations

from metashell.image.image import MetadataImage
from metashell.tree.node import Node, RecordLeaf, ScalarLeaf, StaticDir, TreeContext
from metashell.tree.render import iter_find, ls_layout, render_find, render_ls, render_tree


def test_ls_columns_like_kafka() -> None:
    # LsCommandHandlerTest: width 18; the padded first column keeps its trailing spaces (as Kafka)
    assert ls_layout(["alphabet", "beta", "gamma", "theta", "zeta"], 18) == [
        "alphabet  theta",
        "beta      zeta",
        "gamma     ",
    ]
    # checked against LsCommandHandler.printEntries on the 4.4 jars
    assert ls_layout(
        ["a", "bb", "ccc", "dddd", "eeeee", "f", "gg", "hhh", "iiii", "jjjjjjjjjjjjjj", "k"], 40
    ) == ["a    dddd   gg    jjjjjjjjjjjjjj", "bb   eeeee  hhh   k", "ccc  f      iiii  "]
    assert ls_layout(list("abc"), 7) == ["a", "b", "c"]
    assert ls_layout(list("abc"), None) == ["a", "b", "c"]
    assert ls_layout([], 80) == []


def test_ls_intro_rules() -> None:
    assert render_ls(["f"], []) == "f\n"
    assert render_ls([], [("d", ["a", "b"])]) == "a\nb\n"
    assert render_ls(["f"], [("d", ["a"])]) == "f\n\nd:\na\n"
    assert render_ls([], [("d", ["a"]), ("e", ["b"])]) == "d:\na\n\ne:\nb\n"
    # an empty first directory prints nothing but still "uses up" the first intro (Kafka)
    assert render_ls([], [("d", []), ("e", ["b"])]) == "\ne:\nb\n"
    assert render_ls([], [("/", ["image", "local"])]) == "image\nlocal\n"


def _at(node: Node, *names: str) -> Node:
    """The descendant at ``names`` (a test fails here, not later, when one is missing)."""
    for name in names:
        child = node.child(name)
        assert child is not None, name
        node = child
    return node


def small_tree() -> StaticDir:
    ctx = TreeContext(MetadataImage())
    return StaticDir(
        "/",
        ctx,
        {
            "a": lambda n: StaticDir(
                n, ctx, {"x": lambda m: ScalarLeaf(m, ctx, lambda r: 1), "y": lambda m: StaticDir(m, ctx, {})}
            ),
            "b": lambda n: RecordLeaf(n, ctx, lambda r: {"k": [1, 2], "s": "v"}),
        },
    )


def test_tree_layout() -> None:
    root = small_tree()
    assert render_tree(root) == 'a:\n  x:\n    1\n  y:\nb:\n  {"k": [1, 2], "s": "v"}\n'
    assert render_tree(_at(root, "a", "x")) == "1\n"
    assert render_tree(_at(root, "a", "y")) == ""
    assert render_tree(root, max_depth=1) == 'a:\nb:\n  {"k": [1, 2], "s": "v"}\n'
    assert root.child("b").text() == '{\n  "k": [1, 2],\n  "s": "v"\n}'


def test_find_paths() -> None:
    root = small_tree()
    assert [p for p, _ in iter_find("/", root)] == ["/", "/a", "/a/x", "/a/y", "/b"]
    assert [p for p, _ in iter_find(".", _at(root, "a"))] == [".", "./x", "./y"]
    assert render_find("/a*", [("/a", _at(root, "a"))]) == "/a*\n/a*/x\n/a*/y\n"
    assert render_find("/nope", []) == "find: /nope: no such file or directory.\n"
