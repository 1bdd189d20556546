"""Entity names -> file-name slugs that are safe whatever the model (or a hostile chat) sends. Pure.

Rules: NFKC, case-folded; only Unicode letters and digits survive (CJK stays readable: 张三 -> 张三), every
other run of characters becomes one "-"; at most MAX_CHARS characters; Windows device names (CON, NUL, COM1…)
and empty results get a hash suffix. Two different names that land on the same slug (C++ and C#) are told apart
by `unique_slug`, which appends a short hash of the name's identity key. The result never contains "/", "\\",
".", NUL or a newline, so `entities/<slug>.md` is always a file directly inside `entities/`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_CHARS = 60  # 60 CJK characters are 180 bytes in UTF-8, well under the 255-byte file-name limit
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
_SPACE = re.compile(r"\s+")


def name_key(name: str) -> str:
    """Identity of an entity name: NFKC, case-folded, whitespace collapsed. `Postgres` == `ｐｏｓｔｇｒｅｓ `."""
    text = unicodedata.normalize("NFKC", str(name)).casefold()
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return _SPACE.sub(" ", text).strip()


def _short_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:6]


def slugify(name: str) -> str:
    """A safe slug for one name. Deterministic; never empty; never a device name."""
    key = name_key(name)
    out: list[str] = []
    for ch in key:
        cat = unicodedata.category(ch)
        if cat[0] in ("L", "N") and cat != "Nl" or ch in "_":
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    slug = "".join(out).strip("-_")
    if len(slug) > MAX_CHARS:
        slug = slug[: MAX_CHARS - 7].rstrip("-_") + "-" + _short_hash(key)
    if not slug:
        return "entity-" + _short_hash(key)
    if slug.split("-")[0] in _RESERVED or slug in _RESERVED:
        return f"{slug}-{_short_hash(key)}"
    return slug


def unique_slug(name: str, taken: dict[str, str]) -> str:
    """The slug for `name`, given `taken` = slug -> identity key of the entity already using it.

    Trigger: another entity (a different name key) already owns the plain slug. Why: `C++` and `C#` both
    slugify to `c`, and two names must never share a page. Outcome: the newcomer gets `<slug>-<hash>`, which
    depends only on its own name, so every machine picks the same file.
    """
    key = name_key(name)
    slug = slugify(name)
    owner = taken.get(slug)
    if owner is None or owner == key:
        return slug
    return f"{slug[: MAX_CHARS - 7].rstrip('-_')}-{_short_hash(key)}"


def clean_name(name: str, limit: int = 80) -> str:
    """A display name fit for front matter: one line, no control characters, NFC, capped."""
    text = unicodedata.normalize("NFC", str(name))
    text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    text = _SPACE.sub(" ", text).strip()
    return text[:limit].rstrip()
