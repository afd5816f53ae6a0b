"""The words an answer explains itself with, for a Japanese or Chinese question.

A search answer in the question's language still labelled its parts in English ("intent:",
"found by keyword #1, vector #3 +graph", "matched … in text of section …", "note:", the
model-loading line): one table per language here, the language being the question's as the
answer's summary line decides it. English (and any language without a table) keeps the
words the code writes, byte for byte; the JSON keeps its keys and machine-readable values.
"""

from __future__ import annotations

# The router's intents (an intent of the config's own keeps its name).
INTENT_WORDS = {
    "ja": {"default": "一般", "concept": "概念", "relation": "関係", "location": "場所",
           "failure": "トラブルシューティング"},
    "zh": {"default": "一般", "concept": "概念", "relation": "关系", "location": "位置",
           "failure": "故障排除"},
}

# Each language's labels; ``{…}`` fields are filled by ``label``.
LABELS = {
    "ja": {
        "intent": "意図: {intent} ({confidence})",
        "also_searched": "; 追加の検索: {queries}",
        "note": "注: {note}",
        "found_by": "検出: {found}{boosts}",
        "ranked": "{name} {rank}位",
        "joiner": "、",
        "why": "理由: {why}",
        "next": "次の質問: {queries}",
        "matched": "一致: {parts}",
        "matched_part": "{words}（{where}）",
        "matched_parts_joiner": "、",
        "matched_none": "一致: 索引語のみ",
        "word": "「{word}」",
        "in_section": "セクション「{heading}」の{where}",
        "loading": ("多言語埋め込みモデル {name} を読み込んでいます（コマンドごとに読み込みます。"
                    "起動中の mindgraph serve や mcp は読み込んだままです）…"),
    },
    "zh": {
        "intent": "意图：{intent} ({confidence})",
        "also_searched": "；另外搜索：{queries}",
        "note": "注：{note}",
        "found_by": "来源：{found}{boosts}",
        "ranked": "{name} 第{rank}名",
        "joiner": "、",
        "why": "原因：{why}",
        "next": "后续问题：{queries}",
        "matched": "匹配：{parts}",
        "matched_part": "{words}（{where}）",
        "matched_parts_joiner": "；",
        "matched_none": "匹配：仅索引词",
        "word": "「{word}」",
        "in_section": "章节「{heading}」的{where}",
        "loading": ("正在加载多语言嵌入模型 {name}（每条命令都会加载；运行中的 mindgraph serve 或 "
                    "mcp 会一直保持加载）…"),
    },
}

# What a hybrid hit was found by (``sources``), lifted by (``boosts``), and the fields a
# keyword hit matched in (``why.fields``).
NAMES = {
    "ja": {"keyword": "キーワード", "vector": "ベクトル", "graph": "グラフ",
           "native": "アプリの検索", "twin": "翻訳ページ",
           "recency": "新しさ", "recent": "最近", "reserved": "上位枠",
           "other_language": "他言語", "failure_page": "トラブル対処ページ",
           "heading_names_defined_term": "見出しが用語名",
           "heading_frames_defined_term": "見出しが用語の問い",
           "title": "タイトル・別名・ファイル名", "folder": "フォルダ", "heading": "見出し",
           "body": "本文", "embed": "{embeds}から埋め込まれた本文"},
    "zh": {"keyword": "关键词", "vector": "向量", "graph": "图谱",
           "native": "应用内搜索", "twin": "译文页面",
           "recency": "新近", "recent": "最近", "reserved": "保留名额",
           "other_language": "其他语言", "failure_page": "故障排除页面",
           "heading_names_defined_term": "标题即所问术语",
           "heading_frames_defined_term": "标题询问该术语",
           "title": "标题/别名/文件名", "folder": "文件夹", "heading": "小标题",
           "body": "正文", "embed": "从{embeds}嵌入的正文"},
}

# Why a boost lifted a hit (retrieval/definition.py's WHY), by the boost's name.
WHY = {
    "ja": {"heading_names_defined_term": "見出しが問われた用語そのもの",
           "heading_frames_defined_term": "見出しが問われた用語とは何かを問う"},
    "zh": {"heading_names_defined_term": "小标题就是所问的术语",
           "heading_frames_defined_term": "小标题在问所问的术语是什么"},
}


def localized(lang: str) -> bool:
    """Whether answers in ``lang`` have labels of their own here (ja, zh)."""
    return lang in LABELS


def label(lang: str, key: str, **fields: object) -> str:
    """The label ``key`` of ``lang``'s table filled with ``fields`` (``lang`` must be
    ``localized``)."""
    return LABELS[lang][key].format(**fields)


def name(lang: str, key: str) -> str:
    """``key`` (a retriever, boost or field) in ``lang``; the key itself when unnamed."""
    return NAMES.get(lang, {}).get(key, key)
