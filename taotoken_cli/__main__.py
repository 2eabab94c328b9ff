"""Entry point for `taotoken` and `python -m taotoken_cli`."""

from __future__ import annotations


def main() -> None:
    import sys

    from taotoken_cli.core.base import i18n

    # The language first: help texts are built when the command modules are imported. The config file's `lang`
    # is read only when neither --json nor TAOTOKEN_LANG decides.
    from taotoken_cli.core.platform.language import display_language
    from taotoken_cli.core.settings.loader import configured_language

    lang = i18n.setup(config_lang=configured_language, argv=tuple(sys.argv[1:]), os_lang=display_language)
    # No write may crash on a code page (a redirected stdout on Windows is cp1252 or cp936): see core.term.encoding.
    from taotoken_cli.core.term.encoding import prepare_std_streams

    prepare_std_streams((sys.stdout, sys.stderr), lang)
    # `check` runs at shell start-up: plain invocations skip Typer (see taotoken_cli.cmd.check.fastpath).
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        from taotoken_cli.cmd.check.fastpath import main_fast

        if main_fast(sys.argv[2:]):
            return
    from taotoken_cli.app import run

    run()


if __name__ == "__main__":
    main()
