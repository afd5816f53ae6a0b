"""The README's TickTick session is real output: it is run here against the fake open API
(seeded with the fixtures), and must print what the README shows. Regenerate it with
MINDGRAPH_UPDATE_README=1 (as tests/test_readme.py does for the other examples)."""

import os
import re
import shlex
from pathlib import Path

from click.testing import CliRunner
from ticktick_fake import TOKEN, FakeTickTick

from mindgraph.cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- ticktick-session -->", "<!-- /ticktick-session -->"
SESSION = [
    "mindgraph pull",
    'mindgraph create "Buy stamps" --project Errands --content "For the passport forms."',
    'mindgraph update "Buy stamps" --append "why: admin — passport renewal"',
    "mindgraph pull                   # from the corpus cache: no API call",
]
NOTE = "raw/ticktick/Errands/Renew passport.md"
_DURATION = re.compile(r"\(\d+\.\d+ s\)")


def session(tmp_path, monkeypatch) -> list[str]:
    fake = FakeTickTick()
    (tmp_path / "raw").mkdir()
    monkeypatch.setenv("TICKTICK_TOKEN", TOKEN)
    out = ["```text", "$ export TICKTICK_TOKEN=...         # your access token"]
    with fake.serve() as base_url:
        (tmp_path / "mindgraph.yml").write_text(
            "adapters:\n  - name: tasks\n    type: ticktick\n"
            f"    options: {{base_url: '{base_url}', completed_days: 36500}}\n")
        for command in SESSION:
            args = shlex.split(command.split("  #")[0])[1:]
            result = CliRunner().invoke(cli, [*args, "-C", str(tmp_path)],
                                        catch_exceptions=False)
            assert result.exit_code == 0, result.output
            out += [f"$ {command}", *_DURATION.sub("(0.01 s)", result.output).splitlines()]
    text = (tmp_path / NOTE).read_text().splitlines()
    out += [f'$ cat "{NOTE}"', *text, "```"]
    return out


def test_readme_ticktick_session_is_real_output(tmp_path, monkeypatch):
    lines = README.read_text().splitlines()
    start, end = lines.index(START), lines.index(END)
    actual = session(tmp_path, monkeypatch)
    if os.environ.get("MINDGRAPH_UPDATE_README"):
        README.write_text("\n".join([*lines[:start + 1], *actual, *lines[end:]]) + "\n")
        return
    assert lines[start + 1:end] == actual
