"""Entry point for `taotoken` and `python -m taotoken_cli`."""

from __future__ import annotations


def main() -> None:
    from taotoken_cli.cli import run

    run()


if __name__ == "__main__":
    main()
