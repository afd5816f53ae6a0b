"""The MCP tools get_page and list_sections list a page's sections as REST GET /page does
(serve/section_paging.py): up to sections_limit (1,000 by default) from sections_offset, with
sections_total only when not all are listed, so a small page is answered as before. Through
a real SDK client session, in-process, over a compiled workspace."""

import json

import anyio
from click.testing import CliRunner
from mcp import Client

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server

# what list_sections answered for this page before sections were paged (as main answered it)
FEW_OUTLINE = {"page": "Few.md", "title": "Few", "sections": [
    {"id": "lead", "level": 0, "lines": [13, 16], "chars": 34},
    {"id": "one", "heading": "One", "level": 2, "path": ["One"], "lines": [17, 20], "chars": 4},
    {"id": "two", "heading": "Two", "level": 2, "path": ["Two"], "lines": [21, 24], "chars": 4}]}


def compiled(root):
    (root / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    (root / "raw").mkdir()
    (root / "raw" / "Many.md").write_text(
        "# Many\n\n" + "".join(f"## kettle {i}\nword\n" for i in range(1_200)))
    (root / "raw" / "Few.md").write_text("# Few\n\n## One\nword\n\n## Two\nword\n")
    result = CliRunner().invoke(cli, ["-C", str(root), "ingest"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return Mindgraph.open(root)


def run_session(server, calls):
    """Each (tool, arguments) of ``calls`` called in one real client session; the results."""
    async def main():
        with anyio.fail_after(60):
            async with Client(server) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                return tools, [await client.call_tool(name, args) for name, args in calls]
    return anyio.run(main)


def payload(result):
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def test_sections_are_paged_past_the_limit_and_small_pages_are_unchanged(tmp_path):
    tools, results = run_session(create_mcp_server(compiled(tmp_path)), [
        ("list_sections", {"page": "Few"}),
        ("get_page", {"page": "Few"}),
        ("list_sections", {"page": "Many"}),
        ("list_sections", {"page": "Many", "sections_offset": 1_000}),
        ("get_page", {"page": "Many", "max_chars": 0}),
        ("get_page", {"page": "Many", "max_chars": 0, "sections_offset": 1_000}),
        ("list_sections", {"page": "Many", "sections_limit": 10_000}),
        ("list_sections", {"page": "Many", "sections_limit": 10_001}),
        ("get_page", {"page": "Many", "sections_offset": -1}),
    ])
    few_outline, few_page, first, rest, page_first, page_rest, whole, too_many, negative = results

    assert payload(few_outline) == FEW_OUTLINE
    few_page = payload(few_page)
    assert "sections_total" not in few_page
    assert few_page["sections"] == [{"id": "lead", "heading": "", "level": 0},
                                    {"id": "one", "heading": "One", "level": 2},
                                    {"id": "two", "heading": "Two", "level": 2}]

    first, rest = payload(first), payload(rest)
    total = first["sections_total"]
    assert total >= 1_200 and len(first["sections"]) == 1_000
    assert rest["sections_total"] == total and len(rest["sections"]) == total - 1_000
    ids = [s["id"] for s in first["sections"] + rest["sections"]]
    assert len(set(ids)) == total                       # every section once, none lost
    page_first, page_rest = payload(page_first), payload(page_rest)
    assert page_first["sections_total"] == page_rest["sections_total"] == total
    assert [s["id"] for s in page_first["sections"] + page_rest["sections"]] == ids
    whole = payload(whole)
    assert "sections_total" not in whole and [s["id"] for s in whole["sections"]] == ids

    assert too_many.is_error and "sections_limit" in too_many.content[0].text
    assert negative.is_error and "sections_offset" in negative.content[0].text
    for tool in ("get_page", "list_sections"):
        schema = tools[tool].input_schema["properties"]
        assert schema["sections_limit"]["default"] == 1_000
        assert schema["sections_limit"]["maximum"] == 10_000
        assert schema["sections_offset"]["default"] == 0
        assert "sections_total" in tools[tool].description
