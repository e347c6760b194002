"""tools/bench_tables.py and tools/doc_blocks.py (``make bench`` rewriting docs/performance.md's tables) on
a small fake document: the marked blocks replaced, the prose kept byte for byte, bad markers named; and
the bench set against the real document's markers.  No bench runs here (text only)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tools import bench_tables  # noqa: E402
from tools.doc_blocks import block_names, replace_blocks  # noqa: E402

DOC = """# Performance

Hand-written prose, *kept*.
<!-- bench-a:start -->
| old | table |
|---|---|
<!-- bench-a:end -->

More prose between the blocks.

<!-- bench-b:start -->
<!-- bench-b:end -->
Tail without a newline"""


def test_blocks_are_replaced_and_the_prose_kept():
    new = replace_blocks(DOC, {"bench-a": "| x |\n|---|\n| 1 |\n", "bench-b": "line"})
    assert new == DOC.replace("| old | table |\n|---|---|", "| x |\n|---|\n| 1 |").replace(
        "<!-- bench-b:start -->\n", "<!-- bench-b:start -->\nline\n")
    assert replace_blocks(new, {"bench-a": "| old | table |\n|---|---|"}) == DOC.replace(
        "<!-- bench-b:start -->\n", "<!-- bench-b:start -->\nline\n")
    assert replace_blocks(DOC, {}) == DOC
    assert block_names(DOC) == ["bench-a", "bench-b"]


@pytest.mark.parametrize("doc", [DOC.replace("<!-- bench-a:end -->\n", ""),                      # no end
                                 DOC + "\n<!-- bench-a:start -->\n",                             # two starts
                                 DOC.replace("bench-b:start", "bench-x:start"),                  # no start
                                 DOC.replace("<!-- bench-b:start -->\n<!-- bench-b:end -->",
                                             "<!-- bench-b:end -->\n<!-- bench-b:start -->")])    # reversed
def test_bad_markers_name_the_block(doc):
    name = "bench-a" if "bench-a:end" not in doc or doc.count("bench-a:start") > 1 else "bench-b"
    with pytest.raises(ValueError, match=name):
        replace_blocks(doc, {name: "x"})


def test_block_text_says_what_produced_it():
    bench = bench_tables.Bench("t", ("bench/x.py", "--y"), markdown=False)
    text = bench_tables.block_text(bench, "a  b\n1  2\n", "27 Nov 2026 20:00 UTC", "abc123", "0.50 1.00 1.50",
                                   "0.60 1.10 1.40")
    head, body = text.split("\n\n", 1)
    assert "`python bench/x.py --y`" in head and "abc123" in head and "27 Nov 2026" in head
    assert "before 0.50 1.00 1.50, after 0.60 1.10 1.40" in head
    assert body == "```text\na  b\n1  2\n```"
    md = bench_tables.Bench("t", ("bench/x.py",))
    assert bench_tables.block_text(md, "| a |\n|---|\n", "d", "c", "l", "l").endswith("\n\n| a |\n|---|")


def test_every_bench_has_its_block_in_the_document():
    with open(bench_tables.DOC, encoding="utf-8") as fh:
        marked = block_names(fh.read())
    assert sorted(f"bench-{b.name}" for b in bench_tables.BENCHES) == sorted(n for n in marked if n.startswith("bench-"))
    for b in bench_tables.BENCHES:
        assert os.path.isfile(os.path.join(bench_tables.ROOT, b.args[0]))
