"""Entry point of the `memvault` command and of `python -m memvault`.

`memvault search …` is the command people run most, and `memvault mcp` (stdio) the one agents wait for at every
session start, so plain command lines of the two are served by memvault.cli.fast without building the Typer app
(~100-150 ms saved per call); everything else, and any command line fast.py does not fully understand, goes to
memvault.cli.app unchanged.
"""

import sys


def main() -> None:
    from memvault.cli.fast import try_mcp, try_search

    code = try_search(sys.argv[1:])
    if code is None:
        code = try_mcp(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from memvault.cli.app import app

    app(prog_name="memvault")


if __name__ == "__main__":
    main()
