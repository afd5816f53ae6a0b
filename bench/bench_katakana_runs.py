"""What segmenting a long stretch of katakana costs (text/cjk.py's KATAKANA_PIECE): MeCab's
time on one stretch grows with the square of its length.

    python bench/bench_katakana_runs.py
    python bench/bench_katakana_runs.py --chars 320000 --rounds 3

Side by side in each round: the run cut only at MECAB_PIECE characters (before) and as
``words`` cuts it now; a run of Japanese prose of the same length for scale. Reported: the
median seconds of each, and MeCab's time on one stretch of 1,000 / 4,000 / 16,384 katakana.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=320_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from mindgraph.text import cjk

    parse = cjk._tagger()
    katakana = ("ファイル" * (args.chars // 4 + 1))[:args.chars]
    prose = ("日本語の文章です" * (args.chars // 8 + 1))[:args.chars]

    def before(run: str) -> None:
        for start in range(0, len(run), cjk.MECAB_PIECE):
            parse(run[start:start + cjk.MECAB_PIECE])

    # words() keeps what it segmented: each round's runs begin with a different character
    ways = {"katakana, cut at MECAB_PIECE only (before)": lambda key: before(key + katakana),
            "katakana, words() now": lambda key: cjk.words(key + katakana, "ja"),
            "Japanese prose, words() now": lambda key: cjk.words(key + prose, "ja")}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for round_ in range(args.rounds):
        for name, way in ways.items():
            started = time.perf_counter()
            way(chr(0x3042 + round_))
            times[name].append(time.perf_counter() - started)
    for name, taken in times.items():
        print(f"{name}: median {statistics.median(taken):.2f} s ({args.chars:,} characters, "
              f"{args.rounds} rounds)")
    for size in (1_000, 4_000, 16_384):
        started = time.perf_counter()
        parse(katakana[:size])
        print(f"one MeCab parse of {size:,} katakana: {time.perf_counter() - started:.3f} s")


if __name__ == "__main__":
    main()
