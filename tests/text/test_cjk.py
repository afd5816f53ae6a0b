"""The CJK segmenters: loaded only for CJK text, and only from dictionary files whose SHA-256
is the pinned one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import unidic_lite

from mindgraph.errors import MindgraphError
from mindgraph.text.cjk import PINNED_FILES, verify_files, word_bounds, words


def test_english_text_loads_no_dictionary():
    code = ("import sys\nfrom mindgraph.retrieval.analyzer import analyze\n"
            "analyze('Sync your notes across devices')\n"
            "print(sorted(m for m in ('fugashi', 'rjieba') if m in sys.modules))\n"
            "analyze('ノートを同期する'), analyze('同步笔记')\n"
            "print(sorted(m for m in ('fugashi', 'rjieba') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "['fugashi', 'rjieba']"]


def test_a_dictionary_file_that_is_not_the_pinned_one_is_refused(tmp_path):
    source = Path(unidic_lite.__file__).parent
    copy = tmp_path / "unidic_lite"
    (copy / "dicdir").mkdir(parents=True)
    for name in PINNED_FILES["unidic_lite"]:
        (copy / name).symlink_to(source / name)
    verify_files("unidic_lite", copy)                      # the installed release passes
    (copy / "dicdir" / "char.bin").unlink()
    shutil.copy(source / "dicdir" / "char.bin", copy / "dicdir" / "char.bin")
    with open(copy / "dicdir" / "char.bin", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(MindgraphError, match=r"char\.bin: SHA-256 .* not the pinned .* of "
                                             r"unidic-lite==1\.0\.8.*pip install "
                                             r"--force-reinstall unidic-lite==1\.0\.8"):
        verify_files("unidic_lite", copy)
    (copy / "dicdir" / "char.bin").unlink()
    (copy / "dicdir" / "char.bin").symlink_to(source / "dicdir" / "char.bin")
    (copy / "dicdir" / "unk.dic").unlink()
    with pytest.raises(MindgraphError, match=r"unk\.dic: cannot read the unidic_lite"):
        verify_files("unidic_lite", copy)


def test_words_and_their_bounds():
    assert [w.text for w in words("クレジットカードで払う", "ja")] == \
        ["クレジット", "カード", "で", "払う"]
    assert [w.function for w in words("什么是白板", "zh")] == [True, True, False]
    # glued by jieba's HMM from function words (状态|下要|怎样才能): grammar, not a topic
    assert [(w.text, w.function) for w in words("在编辑状态下要怎样才能触发", "zh")
            if not w.function] == [("编辑", False), ("状态", False), ("触发", False)]
    assert word_bounds("Linuxディストリビューション") == {5, 16}


def test_japanese_words_read_from_mecab_text_are_those_of_its_nodes():
    # The tagger's text output (surface, tab, raw UniDic CSV per node) must say what
    # fugashi's node objects say, for dictionary words, inflected verbs, a quoted feature
    # (を's CSV holds a comma inside quotes) and an unknown word (a shorter CSV).
    import fugashi

    from mindgraph.text.cjk import _unidic_nodes

    folder = Path(unidic_lite.__file__).parent / "dicdir"
    reference = fugashi.Tagger(f'-r /dev/null -d "{folder}"')
    for run in ("ノートを作成するには新しいファイルを開きます", "蚕子", "ゞ々〆", "睿悠ｇ",
                "書かれていなかった", "ダウンロードしてください"):
        expected = []
        for node in reference(run):
            fields = node.feature_raw.split(",", 11)
            expected.append((node.surface, fields[0], fields[1] if len(fields) > 1 else "",
                             fields[10] if len(fields) > 10 else None))
        assert list(_unidic_nodes(run)) == expected, run
        assert expected


def test_a_japanese_run_of_300000_characters_is_read_not_a_crash():
    # One MeCab parse of ~290,000 kana and kanji without punctuation (one CJK run) killed the
    # process with SIGSEGV: `mindgraph ingest`, or a server that compiled the note uploaded
    # through POST /documents (a 900 KB body, under the 1 MiB limit). Run in a child process,
    # so a crash fails this test instead of ending the session.
    script = (
        "import random, sys\n"
        "from mindgraph.text.cjk import words\n"
        "random.seed(1)\n"
        "letters = [chr(c) for c in range(0x3041, 0x3097)] + "
        "[chr(c) for c in range(0x4e00, 0x4e00 + 3000)]\n"
        "run = ''.join(random.choice(letters) for _ in range(300_000))\n"
        "found = words(run, 'ja')\n"
        "assert all(run[w[0]:w[1]] == w.text for w in found)\n"
        "assert found[-1][1] == len(run) and found[0][0] == 0\n"
        "print(len(found))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert int(done.stdout) > 100_000


def test_a_long_stretch_of_katakana_is_parsed_in_pieces_mecab_reads_in_linear_time(
        tmp_path, monkeypatch):
    """MeCab's time on one stretch of katakana grows with the square of its length (16,384
    characters: 0.72 s; 4,000: 54 ms), so a note of 320,000 (ファイル again and again, what
    POST /documents takes) took 13 s to segment, holding the write lane. Through `mindgraph
    ingest`: no parse is handed more than KATAKANA_PIECE katakana in a row, and the note's
    words are still found."""
    import re

    from click.testing import CliRunner

    from mindgraph.cli import cli
    from mindgraph.text import cjk

    longest = [0]
    parse = cjk._tagger()

    def recorded(text: str) -> str:
        longest[0] = max([longest[0], *map(len, re.findall("[\u30a0-\u30ff]+", text))])
        return parse(text)

    monkeypatch.setattr(cjk, "_tagger", lambda: recorded)
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Wall.md").write_text("# 壁\n\nこれは" + "ファイル" * 2500 + "です。\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 32\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(tmp_path), "ingest"]).exit_code == 0
    assert 0 < longest[0] <= cjk.KATAKANA_PIECE                  # 10,000 at once before
    found = runner.invoke(cli, ["-C", str(tmp_path), "search", "ファイル", "--json"])
    assert "Wall.md" in found.output
