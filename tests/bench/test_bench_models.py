"""bench/bench_models.py: the table it prints comes from real `mindgraph bench` runs."""

import json
import subprocess
import sys
from pathlib import Path

from bench_script_support import BENCH, load_script

NOTES = {
    "Sync.md": "# Sync\n\nSync keeps your notes up to date on every device you sign in on.\n",
    "Canvas.md": "# Canvas\n\nCanvas is an infinite board for laying out notes and images.\n",
    "同期.md": "# 同期\n\n同期を使うと、すべての端末でノートが最新に保たれます。\n",
}
QUESTIONS = [
    {"id": "q-en", "query": "infinite board for images", "relevant": ["Canvas.md"], "lang": "en"},
    {"id": "q-ja", "query": "端末でノートを最新に保つ", "relevant": ["同期.md"], "lang": "ja"},
]


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / "wiki").mkdir(parents=True)
    for name, text in NOTES.items():
        (workspace / "wiki" / name).write_text(text, encoding="utf-8")
    (workspace / "mindgraph.yml").write_text("", encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in QUESTIONS),
                         encoding="utf-8")
    return workspace, questions


def test_rows_per_model_and_method_from_mindgraph_bench(tmp_path, monkeypatch):
    script = load_script("bench_models")
    workspace, questions = _workspace(tmp_path)
    monkeypatch.setitem(script.SETS, "tiny", (questions, []))
    lines = script.quality({"a": workspace, "b": workspace}, ["tiny"], "keyword")
    assert lines[0].startswith("| set | model | method |")
    rows = lines[2:]
    assert [r.split(" | ")[1:3] for r in rows] == [["a", "keyword"], ["b", "keyword"]]
    # both questions are found first by BM25: hit@1, R@5 and MRR@10 are 1, per language too
    assert "1.000 / 1.000 / 1.000" in rows[0] and "en 1.000 / ja 1.000" in rows[0]


def test_usage_errors_name_the_fix(tmp_path):
    script = BENCH / "bench_models.py"
    for args, said in ((["--workspace", str(tmp_path)], "LABEL=DIR"),
                       (["--workspace", f"x={tmp_path}"], "mindgraph.yml"),
                       (["--sets", "nope"], "unknown nope")):
        run = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        assert said in run.stderr
