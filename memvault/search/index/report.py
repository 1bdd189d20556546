"""What a refresh of the index changed: counts and problems (never file text)."""

from __future__ import annotations


class RefreshReport:
    """What a refresh changed. A plain class: a dataclass costs milliseconds at import on the search path."""

    def __init__(self) -> None:
        self.cards_added = 0
        self.cards_updated = 0
        self.cards_removed = 0
        self.entities = 0
        self.episodes_added = 0
        self.problems: list[str] = []  # "path: reason", never file text

    def __repr__(self) -> str:
        return (f"RefreshReport(added={self.cards_added}, updated={self.cards_updated}, "
                f"removed={self.cards_removed}, entities={self.entities}, episodes={self.episodes_added})")

    @property
    def changed(self) -> int:
        return self.cards_added + self.cards_updated + self.cards_removed + self.episodes_added
