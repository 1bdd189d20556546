"""Command-line words before Typer sees them: `--vault/-V` is accepted after the command too.

Scripts type `memvault capture --vault V`; Typer only knows the option before the command. `hoist_vault` moves
every `--vault X`, `--vault=X`, `-V X` and `-VX` that follows the command to just before it. It never takes a
word that is the value of one of the command's own options (`--body -V`), nor anything after `--`, where
every word is an argument: a QUERY that is literally `-V` is written `memvault search -- -V`. Pure: the caller
says which options of the command take a value.
"""

from __future__ import annotations

from collections.abc import Callable

VAULT = ("--vault", "-V")


def _is_vault(word: str) -> bool:
    return word in VAULT or word.startswith("--vault=") or (word.startswith("-V") and not word.startswith("--"))


def hoist_vault(argv: list[str], value_options: Callable[[str], set[str] | None]) -> list[str]:
    """`argv` with the vault options after the command moved before it, in their order (the last one wins,
    as before the command). `value_options(command)` names the command's options that take a value, or is
    None for a word that is no command (then nothing moves and Typer reports it as usual)."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return argv
        if word in VAULT:
            i += 2
        elif word.startswith("-"):
            i += 1  # --vault=X, -VX, --debug …, or a mistake Typer reports
        else:
            break
    if i >= len(argv):
        return argv
    takes = value_options(argv[i])
    if takes is None:
        return argv
    hoisted: list[str] = []
    rest: list[str] = []
    j = i + 1
    while j < len(argv):
        word = argv[j]
        if word == "--":
            rest.extend(argv[j:])
            break
        if word in VAULT and j + 1 < len(argv):
            hoisted.extend(argv[j:j + 2])
            j += 2
        elif _is_vault(word) and word not in VAULT:
            hoisted.append(word)
            j += 1
        elif word in VAULT:
            rest.append(word)  # a last -V without its value: left in place for Typer to report
            j += 1
        elif word in takes:
            rest.extend(argv[j:j + 2])  # the next word is this option's value, whatever it looks like
            j += 2
        else:
            rest.append(word)
            j += 1
    return argv[:i] + hoisted + [argv[i]] + rest
