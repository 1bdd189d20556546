"""Token estimates for budgets, without a tokenizer (cheap to import: views/context uses it too)."""

from __future__ import annotations

import re

_CJK = re.compile(
    "[\u2e80-\u9fff"  # CJK radicals, punctuation, kana, unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # compatibility ideographs
    "\uff00-\uffef"  # full-width forms
    "\U00020000-\U0003134f]"  # extension B..G
)


def estimate_tokens(text: str) -> int:
    """Rough token count for budgets: a CJK character is ~1 token, other text ~4 characters a token.

    Real tokenizers differ by model (a Chinese character is 0.6-1.5 tokens); this errs towards the middle.
    """
    if not text:
        return 0
    cjk = len(text) - len(_CJK.sub("", text))
    return cjk + (len(text) - cjk + 3) // 4
