"""Text -> search tokens. Pure: standard library only; jieba is imported lazily and only in "jieba" mode.

Every token is NFKC-normalised and casefolded. Latin words get a light English normalisation (plural and
-ed/-ing endings folded, so "decided", "decides" and "decide" meet). CJK runs become overlapping character
bigrams by default: measured on eval/ they match as well as jieba words (see eval/REPORT.md) at a tenth of the
indexing cost and with no 0.7 s dictionary load in every process.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from array import array

VERSION = 4  # bump when the tokens an index holds would change
MODES = ("bigram", "unibigram", "jieba")

# Kana, CJK ideographs (extension A, unified, compatibility) and hangul: one table for the regex and the loop.
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF))
_CJK_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
# Below this many characters a text's CJK runs are found by a loop over its characters: the CJK class costs ~2 ms
# to compile (re fills its 64k-entry bitmap in Python), more than a query's whole analysis. Once it is compiled
# (a long text, a bulk build: for_many_texts) every text uses it: the loop is ~4x slower per character.
SHORT_TEXT = 400


_COMPILED: list[re.Pattern[str]] = []  # the CJK class once compiled: from then on every text's runs come from it


@functools.cache
def _cjk_rx() -> re.Pattern[str]:
    """A CJK run, compiled on first use (a long text's): ASCII text never needs it, and the class costs ~2.5 ms
    to compile (re builds its bitmap in Python)."""
    rx = re.compile(f"[{_CJK_CLASS}]+")
    _COMPILED.append(rx)
    return rx


def for_many_texts() -> None:
    """A process about to tokenise many texts (a bulk build's worker): compile the CJK class now, so that every
    text's runs are found by it. The loop costs ~60 us more per card of ~500 characters than the regex."""
    _cjk_rx()


@functools.cache
def _word_rx() -> re.Pattern[str]:
    """A word. Words are matched after "_" is folded to a space: a word class without "_" costs ~5 ms to
    compile."""
    return re.compile(r"\w+")


def _spans_rx(word: str) -> list[tuple[int, int]]:
    """(start, end) of each CJK run in `word`, by the compiled class (long texts: a bulk build)."""
    return [m.span() for m in _cjk_rx().finditer(word)]


def _spans_loop(word: str) -> list[tuple[int, int]]:
    """The same spans as _spans_rx, found without compiling the class (short texts: a query)."""
    out: list[tuple[int, int]] = []
    start = -1
    for i, ch in enumerate(word):
        o = ord(ch)
        cjk = 0x3040 <= o <= 0xFAFF and any(lo <= o <= hi for lo, hi in _CJK_RANGES)
        if cjk and start < 0:
            start = i
        elif not cjk and start >= 0:
            out.append((start, i))
            start = -1
    if start >= 0:
        out.append((start, len(word)))
    return out


def _spans_for(text: str):
    return _spans_rx if _COMPILED or len(text) > SHORT_TEXT else _spans_loop


# Words that carry no topic. Query-side only matters for relevance; dropping them at index time too keeps
# postings small.
STOPWORDS = frozenset(
    """a an the and or but of to in on at by for with from into onto as is are was were be been being am do does
    did doing done have has had having i me my mine we us our ours you your yours he him his she her hers it its
    they them their theirs this that these those there here what which who whom whose when where why how
    about above after again against all any both each few more most other some such no nor not only own same
    so than too very can could will would shall should may might must just also then now ever s t d ll m re ve
    y let lets let's ok okay please tell say said know think thought want like get got go going one ones
    any anything something thing things way yes really actually use using used happen happened anywhere
    try tried still much many need make made does""".split()
)

# Chinese function characters: a CJK query bigram made only of these is not a topic.
CJK_FUNCTION_CHARS = frozenset("的了是在和与或及我你他她它们这那个些吗呢吧啊呀么什怎样如何为哪谁把被就都也还又很太有没不要会能可以到对从给让用过着地得之其")


def normalize(text: str) -> str:
    """NFKC + casefold: full-width letters, ligatures and case all meet their plain form."""
    return unicodedata.normalize("NFKC", text).casefold()


_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """Light English normalisation (a trimmed Porter step 1): fold plurals, -ed, -ing and a final -e."""
    done = _STEMS.get(word)
    if done is None:
        done = _stem(word)
        if len(_STEMS) < 200_000:  # bounded: a bulk build sees a Zipfian vocabulary, so this hits ~99 %
            _STEMS[word] = done
    return done


# Raw turns are stemmed harder than cards (Porter2, the Snowball reference implementation): conversation uses
# many forms of a word ("migrate", "migrating", "migrations") and recall matters; cards are short curated
# statements where light stemming ranks better. Both measured: eval/REPORT.md.
CARD_STEMMER = "light"
EPISODE_STEMMER = "porter2"
_PORTER2: dict[str, str] = {}
_SNOWBALL: list = []


def porter2(word: str) -> str:
    done = _PORTER2.get(word)
    if done is None:
        if not _SNOWBALL:
            import snowballstemmer  # only episode indexing and --episodes queries need it

            _SNOWBALL.append(snowballstemmer.stemmer("english"))
        done = word if len(word) <= 3 or not word.isascii() or not word.isalpha() else _SNOWBALL[0].stemWord(word)
        if len(_PORTER2) < 200_000:
            _PORTER2[word] = done
    return done


def _stem(word: str) -> str:
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:  # studies, studied -> study (like studying)
        return word[:-3] + "y"
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if len(base) >= 3 and any(v in base for v in "aeiouy"):
                word = base
                if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                    word = word[:-1]
                elif _short_cvc(word):
                    word += "e"  # Porter 1b: hiking/hiked -> hike, loving -> love, coding -> code
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


_VOWELS = frozenset("aeiou")


def _short_cvc(word: str) -> bool:
    """A one-syllable stem ending consonant-vowel-consonant (hik, lov, cod, shar): the -e that -ing/-ed ate
    belongs back. Not after w, x, y (snowing, fixed, played) and not for longer stems (visit, open)."""
    if len(word) < 3 or word[-1] in "wxy" or word[-1] in _VOWELS or word[-2] not in _VOWELS or word[-3] in _VOWELS:
        return False
    return sum(1 for i in range(1, len(word) - 1) if word[i] in _VOWELS and word[i + 1] not in _VOWELS) == 1 \
        and not (word[0] in _VOWELS and word[1] not in _VOWELS)


def _cjk_tokens(run: str, mode: str) -> list[str]:
    if len(run) == 1:
        return [run]
    if mode == "jieba":
        return [w for w in _jieba().cut_for_search(run) if w.strip()]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    if mode == "unibigram":
        return list(run) + bigrams
    return bigrams


# ASCII text: NFKC leaves it alone, casefold is lower(), and `\w+` after "_" -> " " is [a-z0-9]+. One bytes
# translate (letters lowered, everything else a space) and a split do all that ~4x faster than the regex.
_ASCII_WORDS = bytes(
    (c | 0x20 if 65 <= c <= 90 else c) if c < 128 and chr(c).isalnum() else 32 for c in range(256))


def _ascii_tokens(text: str, stop: bool, stemmer: str = "light") -> list[str]:
    words = text.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    if stemmer != "light":
        return [porter2(w) for w in words if not stop or w not in STOPWORDS]
    stems = _STEMS
    if stop:
        return [stems[w] if w in stems else stem(w) for w in words if w not in STOPWORDS]
    return [stems[w] if w in stems else stem(w) for w in words]


def tokens(text: str, mode: str = "bigram", stop: bool = True, stemmer: str = "light") -> list[str]:
    """Index tokens of `text`, in order. Stopwords are dropped unless `stop` is False. `stemmer` is "light"
    (cards) or "porter2" (episodes)."""
    if text.isascii():
        return _ascii_tokens(text, stop, stemmer)
    st = stem if stemmer == "light" else porter2
    spans_of = _spans_for(text)
    out: list[str] = []
    for word in _word_rx().findall(normalize(text).replace("_", " ")):
        if word.isascii():
            if not stop or word not in STOPWORDS:
                out.append(st(word))
            continue
        spans = spans_of(word)
        if not spans:
            if not stop or word not in STOPWORDS:
                out.append(word)
            continue
        pos = 0
        for start, end in spans:
            if start > pos:
                out.append(st(word[pos:start]))
            out.extend(_cjk_tokens(word[start:end], mode))
            pos = end
        if pos < len(word):
            out.append(st(word[pos:]))
    return out


def _bigram_text(run: str) -> str:
    """" ".join of a CJK run's bigrams (len(run) >= 2), built with array slices instead of one string object
    per bigram (~5x faster on a 120-character run)."""
    chars = array("I")
    chars.frombytes(run.encode("utf-32-le"))
    out = array("I", [32]) * (3 * (len(chars) - 1))
    out[0::3] = chars[:-1]
    out[1::3] = chars[1:]
    return out.tobytes()[:-4].decode("utf-32-le")


def joined(text: str, mode: str = "bigram") -> tuple[str, int]:
    """(" ".join(tokens(text, mode)), len(tokens(text, mode))) without building every token: what the index
    stores of a field."""
    if text.isascii():
        toks = _ascii_tokens(text, True)
        return " ".join(toks), len(toks)
    if mode != "bigram":
        toks = tokens(text, mode)
        return " ".join(toks), len(toks)
    spans_of = _spans_for(text)
    parts: list[str] = []
    n = 0
    for word in _word_rx().findall(normalize(text).replace("_", " ")):
        if word.isascii():
            if word not in STOPWORDS:
                parts.append(stem(word))
                n += 1
            continue
        spans = spans_of(word)
        if not spans:
            if word not in STOPWORDS:
                parts.append(word)
                n += 1
            continue
        pos = 0
        for start, end in spans:
            if start > pos:
                parts.append(stem(word[pos:start]))
                n += 1
            run = word[start:end]
            if len(run) == 1:
                parts.append(run)
                n += 1
            else:
                parts.append(_bigram_text(run))
                n += len(run) - 1
            pos = end
        if pos < len(word):
            parts.append(stem(word[pos:]))
            n += 1
    return " ".join(parts), n


def cjk_runs(text: str) -> list[str]:
    """The CJK runs of a normalised text (query analysis uses them to tell known from unknown content)."""
    if text.isascii():  # NFKC and casefold keep ASCII ASCII: no CJK run, and no need to compile the class
        return []
    text = normalize(text)
    return [text[start:end] for start, end in _spans_for(text)(text)]


def is_function_bigram(token: str) -> bool:
    return all(c in CJK_FUNCTION_CHARS for c in token)


_JIEBA = None


def _jieba():
    """jieba costs ~0.7 s to load its dictionary, so it is loaded only when the jieba mode is asked for."""
    global _JIEBA
    if _JIEBA is None:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        _JIEBA = jieba
    return _JIEBA
