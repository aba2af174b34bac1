"""Field data in every Markdown report is shown as text: rendered by a CommonMark parser with
GitHub's tables (markdown-it-py), a hostile name yields no tag, link, image, emphasis or mention,
does not split its table cell, and reads back as the name (one line, control characters escaped)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from supernodeiac.compare import Diff, Side
from supernodeiac.compare.fabric import FabricDiff
from supernodeiac.compare.report import to_markdown as diff_markdown
from supernodeiac.util import markdown as md
from supernodeiac.verify import Result
from supernodeiac.verify.check_results import Outcome, Report
from supernodeiac.verify.compare import Discrepancy
from supernodeiac.verify.report import to_markdown as verify_markdown

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py (a dependency of rich) reads the Markdown")

HOSTILE = (
    "a|b <img src=x onerror=alert(1)> <script>x</script> **bold** _em_ `tick` ``two`` "
    "[link](https://evil.example) ![i](https://evil.example/p.png) <https://evil.example> ~~s~~ $x$ "
    "&amp; \\*esc @org/team\nline2\r\n# head\r- item\x1b[31m\u2028> quote\x7f|"
)
SHOWN = (  # what a reader sees: one line, control characters as escapes, no mention
    HOSTILE.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\u2028", " ")
    .replace("\x1b", "\\x1b").replace("\x7f", "\\x7f").replace("@", "@" + md.MENTION_BREAK)
)  # fmt: skip
OWN_TAGS = {"h1", "h2", "h3", "p", "strong", "em", "table", "thead", "tbody", "tr", "th", "td", "code", "br"}
OWN_TAGS |= {"details", "summary", "blockquote"}


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.text: list[str] = []
        self.prose: list[str] = []  # outside code spans, where GitHub looks for mentions
        self.in_code = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, attrs))
        self.in_code += tag == "code"

    def handle_endtag(self, tag: str) -> None:
        self.in_code -= tag == "code"

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if not self.in_code:
            self.prose.append(data)


def _parsed(markdown: str) -> _Html:
    parser = markdown_it.MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    html = _Html()
    html.feed(parser.render(markdown))
    return html


def _rendered(markdown: str) -> tuple[list[tuple[str, list]], str]:
    html = _parsed(markdown)
    return html.tags, "".join(html.text)


def _assert_inert(markdown: str, shown: int) -> None:
    tags, text = _rendered(markdown)
    assert {t for t, _ in tags} <= OWN_TAGS, {t for t, _ in tags} - OWN_TAGS
    assert not any(attrs for t, attrs in tags if t not in ("th", "td")), [x for x in tags if x[1]]
    assert text.count(SHOWN) >= shown, (SHOWN, text)
    assert "@org" not in "".join(_parsed(markdown).prose)


@pytest.mark.parametrize("value", [HOSTILE, "`", "``x`", " `a` ", "|", "x\\|y", ""])
def test_a_code_span_shows_its_value(value):
    cell = md.code(value)
    tags, text = _rendered(f"| h |\n|---|\n| {cell} |\n")
    assert [t for t, _ in tags].count("code") == 1 and "td" in {t for t, _ in tags}
    shown = HOSTILE if value == HOSTILE else value
    assert (SHOWN.replace("@" + md.MENTION_BREAK, "@") if value == HOSTILE else shown or " ") in text


def test_text_is_literal_in_prose_and_cells():
    for markdown in (f"{md.text(HOSTILE)}\n", f"| h |\n|---|\n| {md.text(HOSTILE)} |\n", f"# x {md.text(HOSTILE)}\n"):
        _assert_inert(markdown, 1)
    _assert_inert(f"<details>\n<summary>{md.html_text(HOSTILE)}</summary>\n\nbody\n</details>\n", 1)
    for start in ("# h", "- i", "+ i", "1. i", "2) i", "> q", "==="):
        tags, text = _rendered(md.text(start) + "\n")
        assert [t for t, _ in tags] == ["p"] and text.strip() == start


def test_verify_markdown_shows_names_as_text():
    d = Discrepancy(
        "miscabled", HOSTILE, HOSTILE, [{"id": HOSTILE, "a": HOSTILE, "b": HOSTILE, "label": HOSTILE}], [
            {"a": HOSTILE, "b": HOSTILE, "where": HOSTILE}
        ]
    )  # fmt: skip
    r = Result(HOSTILE, [{"path": HOSTILE, "format": "lldp", "device": HOSTILE}], 3, 2, [d])
    _assert_inert(verify_markdown(r), 5)  # blueprint, input, cable ends, found, fix (the ID in code)


def test_check_results_markdown_shows_tool_output_as_text():
    fail = Outcome("perftest", HOSTILE, "fail", 1.0, 400.0, 300.0, "Gb/s", HOSTILE, HOSTILE)
    physical = Outcome("physical", HOSTILE, "fail", None, 0.0, 0.0, "", HOSTILE, HOSTILE, verdict=HOSTILE)
    nccl = Outcome("nccl", HOSTILE, "pass", 300.0, 360.0, 290.0, "GB/s", HOSTILE, verdict=HOSTILE)
    _assert_inert(Report([fail, physical, nccl]).as_markdown(), 3 + 4 + 2)


def test_diff_markdown_shows_findings_notices_and_labels_as_text():
    side = Side(HOSTILE, HOSTILE, 1, 1, 0, 0)
    d = Diff(side, side, FabricDiff(), notices=[HOSTILE], new_findings=[("error", "reach", HOSTILE)])
    markdown = diff_markdown(d)
    assert markdown.splitlines()[0].startswith("### snc diff: ``")  # labels in code spans
    _assert_inert(markdown, 2)


def test_github_annotations_and_sarif_carry_hostile_text_as_data():
    from supernodeiac.findings import Finding, Location, Severity, plain_text
    from supernodeiac.findings.formats import github_annotations, parse_workflow_command
    from supernodeiac.findings.sarif import sarif_log

    f = Finding("reach", Severity.ERROR, HOSTILE + "%0A::error::x", (), HOSTILE, Location("a,b:%0D.yaml", 2, 1))
    [line] = github_annotations([f, f])  # two at one line: one grouped annotation
    assert line.count("\n") == line.count("\r") == 0 and line.startswith("::error file=")
    command, props, message = parse_workflow_command(line)
    assert (command, props["file"], props["title"]) == ("error", "a,b:%0D.yaml", "reach")
    assert message.count(plain_text(HOSTILE)) == 3 and "\u2028" not in message
    # SARIF: finding text only in message.text and properties (plain text); Markdown only from the registry
    log = sarif_log([f], "0", docs_url=None)
    markdown = [v for r in log["runs"][0]["tool"]["driver"]["rules"] for v in _strings(r, "markdown")]
    assert markdown and not any("evil" in m for m in markdown)
    assert log["runs"][0]["results"][0]["message"]["text"].startswith(plain_text(HOSTILE))


def _strings(doc: object, key: str) -> list[str]:
    if isinstance(doc, dict):
        return [v for k, v in doc.items() if k == key and isinstance(v, str)] + [
            s for v in doc.values() for s in _strings(v, key)
        ]
    return [s for v in doc for s in _strings(v, key)] if isinstance(doc, list) else []
