"""The one exception type commands raise for expected failures.

The CLI layer prints `message` and `fix` (never a traceback) and exits with `exit_code`.
"""

from __future__ import annotations

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Fix


class TaotokenError(Exception):
    def __init__(self, message: str, fix: str | Fix | None = None, exit_code: int = Exit.FAILURE,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.exit_code = int(exit_code)
        self.code = code  # catalogue code when one applies


class InputError(TaotokenError):
    """A value the user typed or pasted cannot be used."""

    def __init__(self, message: str, fix: str | Fix | None = None) -> None:
        super().__init__(message, fix, Exit.USAGE, code="input.invalid")


class ConfigFileError(TaotokenError):
    """A file we must read or edit does not parse. Nothing is written when this is raised."""

    def __init__(self, path: str, line: int | None, column: int | None, detail: str, fix: str | Fix) -> None:
        where = f"{path}:{line}:{column}" if line else path
        super().__init__(f"{where}: {detail}", fix, Exit.CONFIG, code="config.unparsable")
        self.path, self.line, self.column, self.detail = path, line, column, detail
