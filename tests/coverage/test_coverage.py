"""Coverage over a generated codebase with known answers."""

import json
import textwrap

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.coverage.report import measure_coverage
from mindgraph.coverage.units import discover_units
from mindgraph.page.parse import parse_page


@pytest.fixture
def codebase(tmp_path):
    root = tmp_path / "code"
    files = {
        "shop/api.py": '"""HTTP API."""\ndef create_order():\n    pass\nclass Cart:\n    pass\n',
        "shop/billing/invoices.py": "def render_invoice():\n    pass\ndef _private():\n    pass\n",
        "shop/billing/tax.py": "RATE = 1\n",
        "shop/util.py": "def helper():\n    pass\n",
        "shop/__init__.py": "",
        "shop/tests/test_api.py": "def test_x():\n    pass\n",
        "worker/jobs.py": "class JobRunner:\n    pass\n",
        "worker/broken.py": "def oops(:\n",
        "web/app.ts": "export const x = 1;\n",
        "node_modules/dep/index.js": "module.exports = 1;\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def pages(*texts):
    return [parse_page(textwrap.dedent(t), f"p{i}.md") for i, t in enumerate(texts)]


def test_units_respect_default_excludes(codebase):
    ids = [u.id for u in discover_units(codebase)]
    assert ids == ["shop/api.py", "shop/billing/invoices.py", "shop/billing/tax.py",
                   "shop/util.py", "web/app.ts", "worker/broken.py", "worker/jobs.py"]
    api = discover_units(codebase)[0]
    assert [(s.name, s.kind) for s in api.symbols] == [("create_order", "function"),
                                                       ("Cart", "class")]
    assert api.docstring == "HTTP API."


def test_mentions_by_path_module_symbol_and_boundaries(codebase):
    units = discover_units(codebase)
    report = measure_coverage(units, pages(
        "The capital of billing is `tax`; see shop/billing/invoices.py for details.",
        "Orders start in `create_order`. The JobRunner polls. Also web/app.ts.",
        "A util is nice. Call shop.util from [[api]].",
    ))
    covered = {u.unit.id: u for u in report.units}
    assert covered["shop/billing/invoices.py"].covered          # by path in prose
    assert covered["shop/billing/tax.py"].covered               # bare name, but in code span
    assert covered["shop/api.py"].mentions == 2                 # symbol in code + [[api]] link
    assert covered["worker/jobs.py"].covered                    # distinctive class name in prose
    assert covered["web/app.ts"].covered
    assert covered["shop/util.py"].covered                      # dotted module name
    assert covered["shop/util.py"].mentions == 1                # prose "util" is not a mention
    assert not covered["worker/broken.py"].covered
    assert report.covered == 6 and round(report.percent, 1) == 85.7
    assert covered["shop/api.py"].symbols_mentioned == ("create_order",)


def test_word_inside_word_is_not_a_mention(codebase):
    report = measure_coverage(discover_units(codebase), pages("`capital` and `apis` and taxes"))
    assert report.covered == 0


def test_min_mentions(codebase):
    units = discover_units(codebase)
    text = "shop/util.py once"
    assert measure_coverage(units, pages(text), min_mentions=2).covered == 0
    assert measure_coverage(units, pages(text, text), min_mentions=2).covered == 1


def test_service_level(codebase):
    units = discover_units(codebase, service_level=True)
    assert [u.id for u in units] == ["shop", "web", "worker"]
    report = measure_coverage(units, pages("The `JobRunner` lives in worker/."), level="service")
    assert {u.unit.id for u in report.units if u.covered} == {"worker"}


def test_service_level_counts_top_level_files_as_the_module_level_does(codebase, tmp_path):
    (codebase / "settings.py").write_text('"""Settings."""\nLIMIT = 1\n')
    base = tmp_path / "kb"
    base.mkdir()
    write_wiki(base, "Limits are read in code/settings.py, jobs run by worker/jobs.py.\n")
    runner = CliRunner()

    def covered(*extra):
        result = runner.invoke(cli, ["coverage", str(codebase), "-C", str(base), "--json",
                                     *extra])
        assert result.exit_code == 0, result.output
        return {u["unit"]: u["covered"] for u in json.loads(result.output)["units"]}

    modules, services = covered(), covered("--service-level")
    assert modules["settings.py"] is True and modules["worker/jobs.py"] is True
    assert services == {"settings.py": True, "shop": False, "web": False, "worker": True}


def write_wiki(base, text):
    wiki = base / "wiki"
    wiki.mkdir(exist_ok=True)
    (wiki / "Architecture.md").write_text(text)


def test_cli_gate_fail_under_and_baseline(codebase, tmp_path):
    base = tmp_path / "kb"
    base.mkdir()
    write_wiki(base, "See shop/api.py, shop/util.py and `JobRunner`.\n")
    runner = CliRunner()
    args = ["coverage", str(codebase), "-C", str(base)]
    result = runner.invoke(cli, [*args, "--json", "--save", str(tmp_path / "base.json")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["total"], data["covered"], data["percent"]) == (7, 3, 42.86)
    assert runner.invoke(cli, [*args, "--fail-under", "40"]).exit_code == 0
    failed = runner.invoke(cli, [*args, "--fail-under", "50"])
    assert failed.exit_code == 1 and "under --fail-under 50%" in failed.output
    write_wiki(base, "Only shop/api.py now.\n")
    dropped = runner.invoke(cli, [*args, "--baseline", str(tmp_path / "base.json")])
    assert dropped.exit_code == 1
    assert "no longer covered: shop/util.py" in dropped.output
    missing = runner.invoke(cli, [*args, "--baseline", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "--save" in missing.output
    empty = tmp_path / "docs-only"
    empty.mkdir()
    (empty / "README.md").write_text("no code here\n")
    nothing = runner.invoke(cli, ["coverage", str(empty), "-C", str(base), "--fail-under", "70"])
    assert nothing.exit_code == 2 and "holds no source files" in nothing.output   # not 0/0 = 100%


def test_a_compiled_page_counts_each_mention_once(codebase, tmp_path):
    """The offline compiler opens a page with a summary callout that repeats its first
    sentences; coverage counted a module named there twice, so a note mentioning it once
    passed `--min-mentions 2` ("referenced by the wiki at least N times")."""
    base = tmp_path / "kb"
    (base / "raw").mkdir(parents=True)
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (base / "raw" / "Orders.md").write_text(
        "# Orders\nThe shop/api.py module takes orders from the web.\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    assert "> [!summary]" in (base / "wiki" / "Orders.md").read_text()
    args = ["coverage", str(codebase), "-C", str(base), "--json"]
    data = json.loads(runner.invoke(cli, args).output)
    api = next(u for u in data["units"] if u["unit"] == "shop/api.py")
    assert api["mentions"] == 1 and api["covered"]
    data = json.loads(runner.invoke(cli, [*args, "--min-mentions", "2"]).output)
    assert not next(u for u in data["units"] if u["unit"] == "shop/api.py")["covered"]
