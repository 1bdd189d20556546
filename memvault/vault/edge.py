"""The vault's edge: a file whose real path lies outside the vault (a symlinked month folder, a linked card, a
link a `git pull` planted) is neither read nor written. Listings skip it, every write checks its target, and
`doctor` names the link. Links that stay inside the vault are followed as before.
"""

from __future__ import annotations

import os

from memvault.errors import OutsideVault

TYPE_CHECKING = False  # typing's own constant: a search imports this module (outside), and no pathlib
if TYPE_CHECKING:
    from pathlib import Path

OUTSIDE = ("a link to a place outside the vault: memvault neither reads nor writes through it (remove the link, "
           "or move what it points to into the vault)")


def outside(root: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Whether `path` (existing or not) resolves to a place outside the vault at `root`."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep)


def check_inside(root: Path, path: Path) -> Path:
    """`path`, or OutsideVault (exit 3, naming it) when writing it would write outside the vault."""
    if outside(root, path):
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            rel = str(path)
        raise OutsideVault(rel, None, OUTSIDE)
    return path


def files_inside(root: Path, top: str, levels: tuple[str, ...], links: list[Path] | None = None) -> list[Path]:
    """The files under root/top matching one glob pattern per level (hidden names never match, as with glob),
    sorted, skipping every folder or file whose real path is outside the vault (appended to `links`). One
    directory listing per folder: a symlink costs a realpath, other entries nothing more than the listing."""
    from pathlib import Path

    # Sorted as Paths sort (by parts), on the text: comparing 100k Path objects cost seconds.
    return [Path(p) for p in sorted(_walk(root, top, levels, links), key=lambda p: p.split(os.sep))]


def _walk(root: Path, top: str, levels: tuple[str, ...], links: list[Path] | None) -> list[str]:
    """files_inside's files, as text and unsorted."""
    import fnmatch
    from pathlib import Path

    out: list[str] = []
    real_root = os.path.realpath(root)
    start = os.path.join(root, top)
    if os.path.islink(start) and outside(real_root, start):
        if links is not None:
            links.append(Path(start))
        return out

    def walk(folder: str, depth: int) -> None:
        try:
            it = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return
        last = depth == len(levels) - 1
        with it:
            entries = [e for e in it if not e.name.startswith(".") and fnmatch.fnmatchcase(e.name, levels[depth])]
        for entry in entries:
            if entry.is_symlink() and outside(real_root, entry.path):
                if links is not None:
                    links.append(Path(entry.path))
                continue
            if last:
                if entry.is_file():
                    out.append(entry.path)
            elif entry.is_dir():
                walk(entry.path, depth + 1)

    walk(start, 0)
    return out


def links_outside(root: Path) -> list[Path]:
    """Every link in the vault's folders whose target lies outside the vault."""
    links: list = []
    for top, levels in (("cards", ("*", "*")), ("entities", ("*",)), ("episodes", ("*", "*", "*")),
                        ("journal", ("*",)), ("audit", ("*",))):
        _walk(root, top, levels, links)  # only the links: no Path for every file
    return sorted(set(links))
