"""Coverage counts a plain word only where it names the code: a weak form (a bare module
name, a plain symbol name) counts on a page that also names the codebase by a path, a
dotted name or a distinctive identifier, and never when the wiki uses it as an ordinary word
on many pages. Measured on the real Obsidian help vault, compiled by `mindgraph ingest`."""

import json
import shutil
import textwrap
from pathlib import Path

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.coverage.report import measure_coverage
from mindgraph.coverage.units import discover_units
from mindgraph.page.parse import parse_page

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-help"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpora/obsidian-help")


def codebase(root: Path) -> Path:
    files = {
        "calibrate/recency_fit.py": "class Example:\n    pass\ndef fit_lambda():\n    pass\n",
        "adapters/apps.py": "def pull_items():\n    pass\n",
        "stores/vector_log.py": "def read():\n    pass\ndef start():\n    pass\n",
        "page/vault.py": "class Vault:\n    pass\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def pages(*texts):
    return [parse_page(textwrap.dedent(t), f"p{i}.md") for i, t in enumerate(texts)]


def covered(report) -> dict[str, int]:
    return {u.unit.id: u.mentions for u in report.units if u.covered}


def test_a_plain_word_counts_only_on_a_page_that_names_the_code(tmp_path):
    units = discover_units(codebase(tmp_path))
    report = measure_coverage(units, pages(
        "Link a note with `[[Example]]`. Sync your [[apps]], then `read` and `start`.",
        "The `Vault` holds the pages; page/vault.py loads it."))
    # the help page names no code: its Example, apps, read and start are its own words
    assert covered(report) == {"page/vault.py": 2}
    report = measure_coverage(units, pages(
        "calibrate/recency_fit.py fits λ; its `Example` is one question."))
    assert covered(report) == {"calibrate/recency_fit.py": 2}


def test_a_word_of_many_pages_names_nothing(tmp_path):
    units = discover_units(codebase(tmp_path))
    filler = [f"An example of a note: example {i} links two notes." for i in range(30)]
    report = measure_coverage(units, pages(
        *filler, "calibrate/recency_fit.py fits λ; see `Example` and `fit_lambda`."))
    # "example" is a word of this wiki: `Example` is not counted, the path and fit_lambda are
    assert covered(report) == {"calibrate/recency_fit.py": 2}
    (unit,) = [u for u in report.units if u.unit.id == "calibrate/recency_fit.py"]
    assert unit.symbols_mentioned == ("fit_lambda",)


def test_the_obsidian_vault_covers_almost_none_of_mindgraph(tmp_path):
    """The help pages say "Example", "apps", "read", "Settings" …: before, 65 of the
    package's modules counted as covered by such words; now only documents/files.py, whose
    function `safe_name` is also the name of a Web Clipper filter the help pages document."""
    runner = CliRunner()
    shutil.copytree(CORPUS, tmp_path / "raw")
    assert runner.invoke(cli, ["-C", str(tmp_path), "init"]).exit_code == 0
    assert runner.invoke(cli, ["-C", str(tmp_path), "ingest"]).exit_code == 0
    result = runner.invoke(cli, ["-C", str(tmp_path), "coverage", str(REPO / "mindgraph"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    units = {u["unit"]: u for u in data["units"]}
    assert not units["calibrate/recency_fit.py"]["covered"]
    assert not units["adapters/apps.py"]["covered"]
    assert {u for u, d in units.items() if d["covered"]} <= {"documents/files.py"}
    assert data["total"] > 250
