"""Questions in other languages over a real one-language vault (vector and hybrid).

    python bench/bench_one_language_vault.py [--lang ja] [--workspace WS]
        [--baseline OLD_MINDGRAPH] [--corpora DIR] [--json]

`mindgraph bench --cross-lingual ja` keeps the pages whose letters read as Japanese; a real
Japanese vault also holds the few pages written mostly in English (the Obsidian Help vault's
ja/ has two: its credits and its import page), which the default routing embeds with MiniLM.
This script asks the dev and held-out questions that are not in ``--lang`` over a workspace
whose raw/ is a copy of obsidian-help/<lang> as it is (made, ingested and embedded in a
temporary folder unless ``--workspace`` names one), each answered by the pages that share a
frontmatter permalink with its relevant pages, with `mindgraph bench --methods vector,hybrid
--no-embed --json`: this checkout's mindgraph and, side by side in the same run,
``--baseline`` (another mindgraph executable, e.g. a wrapper running an older checkout). The
same vectors serve both (the store layout is the same).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import programs as bench_programs  # noqa: E402  (bench/: on sys.path when a script runs)
import shared_corpora  # noqa: E402

HERE = Path(__file__).resolve().parent
CORPORA = shared_corpora.corpora()
SETS = {"dev": CORPORA / "obsidian-help-queries.dev.jsonl",
        "held-out": HERE / "questions" / "obsidian-help-heldout.jsonl"}
_PERMALINK = re.compile(r"^permalink:\s*(\S.*?)\s*$", re.M)


def permalink(path: Path) -> str | None:
    text = path.read_text(encoding="utf-8")
    head = text.split("\n---", 1)[0] if text.startswith("---") else ""
    found = _PERMALINK.search(head)
    return found.group(1).strip("'\"/") if found else None


def make_workspace(root: Path, corpora: Path, lang: str, program: list[str]) -> Path:
    workspace = root / "ws"
    subprocess.run([*program, "init", str(workspace)], check=True, capture_output=True)
    shutil.rmtree(workspace / "raw")
    shutil.copytree(corpora / "obsidian-help" / lang, workspace / "raw")
    for step in ("ingest", "embed"):
        subprocess.run([*program, step, "-C", str(workspace)], check=True,
                       capture_output=True)
    return workspace


def questions(corpora: Path, workspace: Path, lang: str, source: Path) -> list[dict]:
    """The questions not in ``lang``, their relevant pages mapped to the workspace's."""
    by_link: dict[str, list[str]] = {}
    wiki = workspace / "wiki"
    for page in sorted(wiki.rglob("*.md")):
        link = permalink(page)
        if link:
            by_link.setdefault(link, []).append(page.relative_to(wiki).as_posix())
    kept = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        question = json.loads(line)
        if question["lang"] == lang:
            continue
        relevant: list[str] = []
        for path in question["relevant"]:
            original = corpora / "obsidian-help" / path
            link = permalink(original) if original.is_file() else None
            relevant += [p for p in by_link.get(link or "", []) if p not in relevant]
        if relevant:
            kept.append({**question, "id": f"{question['id']}>{lang}-vault",
                         "relevant": relevant})
    return kept


def run(program: list[str], workspace: Path, file: Path) -> dict:
    done = subprocess.run([*program, "bench", str(file), "-C", str(workspace), "--methods",
                           "vector,hybrid", "--no-embed", "--json"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(program)} bench failed:\n{done.stderr}")
    return {m["method"]: m for m in json.loads(done.stdout)["methods"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--lang", default="ja", choices=["en", "ja", "zh"])
    parser.add_argument("--workspace", type=Path,
                        help="a workspace whose raw/ is obsidian-help/<lang>, ingested and "
                             "embedded (default: made in a temporary folder)")
    bench_programs.add_option(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    programs = bench_programs.programs(parser, args.baseline)
    corpora = shared_corpora.require(CORPORA, "obsidian-help")
    report: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="mindgraph-one-language-") as tmp:
        workspace = args.workspace or make_workspace(Path(tmp), corpora, args.lang,
                                                     programs[bench_programs.THIS_CHECKOUT])
        for name, source in SETS.items():
            asked = questions(corpora, workspace, args.lang, source)
            file = Path(tmp) / f"{name}.jsonl"
            file.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in asked),
                            encoding="utf-8")
            report[name] = {who: run(program, workspace, file)
                            for who, program in programs.items()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"questions not in {args.lang} over a {args.lang}-only vault: "
          f"hit@1 / R@5 / MRR@10 (MRR@10 of each question language)")
    for name, by_program in report.items():
        for who, methods in by_program.items():
            cells = []
            for method in ("vector", "hybrid"):
                o = methods[method]["overall"]
                langs = ", ".join(f"{lang} {m['mrr10']:.3f}" for lang, m in
                                  sorted(methods[method]["by_lang"].items()))
                cells.append(f"{method} {o['hit1']:.3f} / {o['recall5']:.3f} / "
                             f"{o['mrr10']:.3f} ({langs})")
            print(f"{name:<9} {who:<14} n={methods['vector']['overall']['n']:<3} "
                  + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
