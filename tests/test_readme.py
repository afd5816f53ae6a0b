"""The README's examples, run: what it says a command prints is what the command prints.

Every ```console block of README.md is one shell session, in order: a `$ mindgraph ...` line
runs in-process (click's CliRunner), `$ cp -r SRC... DEST` and `$ cd DIR` act on the files,
and the lines under a command up to the next `$` (blank lines at the end aside) are its
output. A ```python block is run as a script in the checkout's folder after the sessions,
and what it prints is compared with the ```text block right after it. The sessions start in a
copy of this checkout (raw/ and the mindgraph/ package) that the README calls ~/mindgraph.

Normalised before comparing, and nothing else (other helpers change outputs: keep this list
explicit and short):
- durations: a number followed by " s" or " ms" ("0.04 s", "(289.9 ms)") becomes "<N> s" /
  "<N> ms";
- paths: the copy's absolute folder becomes "~/mindgraph" (the README's checkout);
- trailing spaces on a line.

When the output changed on purpose, update the README with
    MINDGRAPH_UPDATE_README=1 .venv/bin/python -m pytest tests/test_readme.py
which rewrites the output lines of README.md's examples from this run (then review
`git diff README.md`).
"""

from __future__ import annotations

import contextlib
import difflib
import glob
import io
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli, progress

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CHECKOUT = "~/mindgraph"                 # how the README writes the checkout's folder
UPDATE = "MINDGRAPH_UPDATE_README"
_DURATION = re.compile(r"\b\d+(?:\.\d+)? (ms|s)\b")
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass
class Example:
    """One command (or script) of the README and the output lines it shows."""

    kind: str                            # "command" or "python"
    source: str                          # the command line, or the script
    line: int                            # 1-based README line of the command / script
    expected: list[str]
    span: tuple[int, int]                # README line indexes (0-based, end exclusive) of it
    actual: list[str] = field(default_factory=list)


def parse(lines: list[str]) -> list[Example]:
    """The README's examples in order: console commands, then python scripts."""
    blocks: list[tuple[str, int, list[str]]] = []   # (language, first content index, lines)
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        blocks.append((fence.group(1), i + 1, lines[i + 1:end]))
        i = end + 1
    commands: list[Example] = []
    scripts: list[Example] = []
    for n, (lang, start, body) in enumerate(blocks):
        if lang == "console":
            commands.extend(_commands(start, body))
        elif lang == "python":
            after = blocks[n + 1] if n + 1 < len(blocks) else None
            if after is None or after[0] != "text" or after[1] - start - len(body) > 6:
                pytest.fail(f"README.md:{start}: a ```python block needs its printed output "
                            f"in a ```text block right after it.")
            scripts.append(Example("python", "\n".join(body), start, _trim(after[2]),
                                   (after[1], after[1] + len(_trim(after[2])))))
    return commands + scripts


def _commands(start: int, body: list[str]) -> list[Example]:
    found: list[Example] = []
    for offset, text in enumerate(body):
        if text.startswith("$ "):
            found.append(Example("command", text[2:], start + offset + 1, [], (0, 0)))
            first = start + offset + 1
            found[-1].span = (first, first)
        elif found:
            found[-1].expected.append(text)
    for example in found:
        example.expected = _trim(example.expected)
        example.span = (example.span[0], example.span[0] + len(example.expected))
    return found


def _trim(lines: list[str]) -> list[str]:
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


def normalise(lines: list[str], root: Path) -> list[str]:
    """The comparison's only normalisations (see the module docstring)."""
    return [_DURATION.sub(lambda m: f"<N> {m.group(1)}", line.replace(str(root), CHECKOUT))
            .rstrip() for line in lines]


class Session:
    """A shell session in the copy of the checkout: mindgraph, cp -r and cd."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch):
        self.root = root
        self.monkeypatch = monkeypatch
        self.runner = CliRunner()
        monkeypatch.chdir(root)

    def run(self, example: Example) -> list[str]:
        argv = shlex.split(example.source, comments=True)
        if argv[0] == "mindgraph":
            result = self.runner.invoke(cli, argv[1:])
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                raise result.exception
            return _trim(result.output.splitlines())
        if argv[0] == "cd" and len(argv) == 2:
            self.monkeypatch.chdir(argv[1])
            return []
        if argv[:2] == ["cp", "-r"] and len(argv) >= 4:
            sources = [p for pattern in argv[2:-1] for p in sorted(glob.glob(pattern))]
            assert sources, f"README.md:{example.line}: {argv[2:-1]} matches nothing"
            for source in map(Path, sources):
                target = Path(argv[-1]) / source.name
                if source.is_dir():
                    shutil.copytree(source, target, dirs_exist_ok=True)
                else:
                    shutil.copy2(source, target)
            return []
        pytest.fail(f"README.md:{example.line}: `{example.source}` is not a command the README "
                    f"test can run (mindgraph, cp -r, cd). Add it to tests/test_readme.py.")
        return []

    def script(self, example: Example) -> list[str]:
        self.monkeypatch.chdir(self.root)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(example.source, f"README.md:{example.line}", "exec"), {})
        return _trim(out.getvalue().splitlines())


@pytest.fixture()
def checkout(tmp_path):
    """A copy of what the README's examples read from the checkout: raw/ and mindgraph/."""
    root = tmp_path / "mindgraph"
    root.mkdir()
    shutil.copytree(REPO / "raw", root / "raw")
    shutil.copytree(REPO / "mindgraph", root / "mindgraph",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_readme_examples_print_what_the_readme_says(checkout, monkeypatch):
    monkeypatch.setattr(progress, "EVERY_S", float("inf"))   # no progress lines, however slow
    lines = README.read_text(encoding="utf-8").splitlines()
    examples = parse(lines)
    assert [e for e in examples if e.kind == "command"], "README.md has no ```console example"
    session = Session(checkout, monkeypatch)
    drifted = []
    for example in examples:
        run = session.run if example.kind == "command" else session.script
        example.actual = [line.replace(str(checkout), CHECKOUT) for line in run(example)]
        if normalise(example.expected, checkout) != normalise(example.actual, checkout):
            drifted.append(example)
    if drifted and os.environ.get(UPDATE):
        for example in sorted(drifted, key=lambda e: -e.span[0]):
            lines[example.span[0]:example.span[1]] = example.actual
        README.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    report = []
    for example in drifted:
        diff = difflib.unified_diff(normalise(example.expected, checkout),
                                    normalise(example.actual, checkout),
                                    "README.md (normalised)", "printed now (normalised)",
                                    lineterm="", n=2)
        report.append(f"README.md:{example.line}: `{example.source.splitlines()[0]}`\n"
                      + "\n".join(diff))
    assert not drifted, (
        f"{len(drifted)} README example(s) no longer print what README.md says:\n\n"
        + "\n\n".join(report)
        + f"\n\nIf the new output is right, update README.md with\n    {UPDATE}=1 "
          f".venv/bin/python -m pytest tests/test_readme.py\nand review `git diff README.md`; "
          f"otherwise fix the code.")
