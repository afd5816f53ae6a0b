"""The one analyzer: Latin words, CJK words, code tokens and symbols."""

from mindgraph.retrieval.analyzer import analyze, highlight_terms


def test_latin_words_are_lowercased_stemmed_and_stop_words_dropped():
    assert analyze("The Notes") == analyze("note")
    assert analyze("Running") == analyze("runs") == ["run"]
    assert analyze("how do I do it") == []


def test_operating_system_names_are_kept_whole_not_stripped_like_plurals():
    # Porter2 made "maco" and "ipado" of them: highlights and term lists showed no real word
    assert analyze("macOS, iOS and iPadOS") == ["macos", "ios", "ipados"]
    assert analyze("MACOS") == analyze("macos")
    assert analyze("videos and photos") == ["video", "photo"]   # plurals in -os still lose it


def test_full_width_forms_are_normalised():
    assert analyze("ＡＢＣ　ｔｅｓｔ") == analyze("abc test")


def test_chinese_and_japanese_become_words_and_korean_bigrams():
    assert analyze("双链笔记") == ["双链", "笔记"]
    assert analyze("ノート") == ["ノート"]
    assert analyze("한국어") == ["한국", "국어"]
    # Latin and CJK in one chunk are split apart; particles are stop words
    assert analyze("Obsidianについて") == ["obsidian"]
    # Japanese verbs and adjectives in their dictionary form
    assert analyze("動かない") == analyze("動きます") == ["動く"]
    # a long Chinese word also gives the dictionary words inside it
    assert {"非标准", "标准"} <= set(analyze("非标准"))


def test_han_alone_is_japanese_in_a_japanese_text():
    # 設定 in a heading of a Japanese page is cut as Japanese, as the page's questions are
    assert analyze("同期設定", lang="ja") == analyze("同期設定を開く", query=True)[:2]
    assert analyze("同期設定") == analyze("同期設定", lang="zh")


def test_code_tokens_keep_the_whole_and_the_parts():
    terms = analyze("snake_case_names in file.py")
    assert {"snake_case_names", "snake", "case", "name", "file.py", "file", "py"} <= set(terms)
    assert {"task-todo", "task", "todo"} <= set(analyze("`task-todo:`"))
    assert "![[" in analyze("What does ![[Document.pdf#page=3]] do")
    assert "document.pdf#page=3" in analyze("![[Document.pdf#page=3]]")
    assert "obsidian://new" in analyze("obsidian://new?vault=x")
    # Markdown emphasis and table rules are not code.
    assert analyze("_word_") == ["word"]
    assert analyze("|---|---|") == []


def test_highlight_finds_the_text_behind_each_term():
    text = "Find Tasks with task-todo: here 嵌套标签"
    spans = highlight_terms(text, analyze("task-todo 标签"))
    assert [text[a:b] for a, b in spans] == ["Tasks", "task-todo", "标签"]


def test_function_words_are_not_terms_in_questions_or_pages():
    # を, する, に, は, とは, 何, です, か, 什么, 是, 的: grammar, not topic
    assert analyze("ノートを移動するには", query=True) == ["ノート", "移動"]
    assert analyze("同期とは何ですか", query=True) == ["同期"]
    assert analyze("什么是双链笔记？", query=True) == ["双链", "笔记"]
    assert analyze("これは寿司とてんぷらの店です") == analyze("寿司 てんぷら 店")
    assert analyze("てんぷら", query=True) == ["てんぷら"]      # a kana word is a word


def test_snippets_show_text_not_markdown_syntax():
    from mindgraph.page.parse import parse_page
    from mindgraph.retrieval.present import readable, snippet_for

    markdown = ("> [!summary] Sync keeps notes.\n> More here.\n\nSee [[Sync regions|regions]]"
                " and [[Set up sync#On iOS]]. %%hidden%% A [guide](https://x.y) ![[shot.png]]")
    assert readable(markdown) == ("Sync keeps notes. More here. See regions and Set up sync. "
                                  "A guide")
    page = parse_page("# Sync\n\n" + markdown + "\n", "Sync.md")
    snippet = snippet_for(page, None, analyze("regions guide"))
    assert "**regions**" in snippet and "**guide**" in snippet
    assert not any(mark in snippet for mark in ("[!", "[[", "](", "%%", "> "))
    fenced = readable("To embed a note:\n\n```md\n![[Note]]\nSee it.\n```\nDone.")
    assert fenced == "To embed a note: See it. Done."
    bold = parse_page("# C\n\nSelect **Canvas**: Create new **canvas**.\n", "C.md")
    assert snippet_for(bold, "lead", analyze("canvas")) == \
        "Select **Canvas**: Create new **canvas**."             # not ****Canvas**


def test_explanations_credit_the_word_the_page_has_not_the_compound_it_came_from():
    from mindgraph.retrieval.explain import query_words

    words = query_words("web-capture extension")
    assert words["captur"] == "capture" and words["web-capture"] == "web-capture"
    assert query_words("date:YYYY-MM-DD")["yyyi"] == "YYYY"


def test_double_stars_in_code_are_text_elsewhere_bold():
    from mindgraph.page.parse import parse_page
    from mindgraph.retrieval.present import readable, snippet_for

    assert readable("Call `f(**kwargs)` and **bold** it") == "Call `f(**kwargs)` and bold it"
    assert readable("`[[Example#Details]]` displays as [[Example#Details|Details]]") == \
        "`[[Example#Details]]` displays as Details"             # syntax in code is kept
    page = parse_page("# T\n\n**Canvas *core* plugin**\nand **a\nb** here\n", "t.md")
    assert "****" not in snippet_for(page, "lead", analyze("canvas core"))


def test_highlights_are_the_spans_of_every_piece_of_text_that_gives_a_wanted_term(corpora):
    """highlight_terms takes shortcuts (each kind of piece filtered alone, compounds skipped
    when no term could be one); its spans are those of the plain in-order walk, on real pages
    and the dev questions in three languages, plus code-like and symbol queries."""
    import json

    from mindgraph.retrieval.analyzer import iter_highlights, merge_spans

    questions = [json.loads(line)["query"] for line in
                 (corpora / "obsidian-help-queries.dev.jsonl").read_text().splitlines()
                 if line.strip()]
    questions += ["obsidian://open?vault=my", "core.async_open", "==highlight== ![[embed]]",
                  "Ctrl+P command-palette", "™ symbols"]
    pages = [(p.read_text(encoding="utf-8"), lang) for lang in ("en", "ja", "zh")
             for p in sorted((corpora / "obsidian-help" / lang).rglob("*.md"))[:15]]
    compared = lit = 0
    for query in questions:
        terms = analyze(query, query=True)
        for text, lang in pages:
            fast = highlight_terms(text, terms, lang)
            assert fast == merge_spans(list(iter_highlights(text, terms, lang))), query
            compared += 1
            lit += bool(fast)
    assert compared == len(questions) * len(pages) and lit > compared // 10
