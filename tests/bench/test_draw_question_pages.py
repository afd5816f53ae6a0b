"""bench/draw_question_pages.py: the draw leaves out targeted pages and drawn topics' twins."""

import json

from bench_script_support import load_script


def _vault(root):
    """Three topics (permalinks a, b, c), each a page in en, ja and zh."""
    for lang in ("en", "ja", "zh"):
        for name in ("A", "B", "C"):
            page = root / lang / "sub" / f"{name}.md"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(f"---\npermalink: {name.lower()}\n---\n{lang} {name}\n",
                            encoding="utf-8")
    return root


def test_the_draw_skips_targeted_pages_and_asks_no_topic_twice(tmp_path):
    draw = load_script("draw_question_pages")
    vault = _vault(tmp_path / "vault")
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "x", "query": "q", "relevant": [
        "en/sub/A.md", "en/sub/B.md", "ja/sub/A.md"]}) + "\n", encoding="utf-8")
    excluded = draw.targeted_pages([questions])
    assert excluded == {"en/sub/A.md", "en/sub/B.md", "ja/sub/A.md"}
    # en can only take C; ja then not A (targeted) nor C (en's topic); zh only what is left
    for seed in range(5):
        assert draw.draw(vault, excluded, seed=seed, per_language=1) == [
            ("en", "en/sub/C.md"), ("ja", "ja/sub/B.md"), ("zh", "zh/sub/A.md")]
