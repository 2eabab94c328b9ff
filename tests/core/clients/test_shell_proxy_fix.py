"""The NO_PROXY fix for a gateway on this machine (core.clients.shellproxy.no_proxy_command) is a command, in the user's
shell: it keeps the entries a new shell has (a start-up file's export, else this shell's; NO_PROXY's, else
no_proxy's, as env.sh does), and sets no_proxy to the same list where a new shell sets it (Qwen Code and OpenClaw read
it before NO_PROXY). Real start-up files in a temporary HOME."""

from __future__ import annotations

from taotoken_cli.core.clients import shellproxy
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.platform import shells
from tests.conftest import write


def test_the_command_keeps_a_new_shells_entries_and_both_spellings(home) -> None:
    machine = Machine.of({"HOME": str(home), "NO_PROXY": "from.this.shell"}, home)
    assert shellproxy.no_proxy_command(machine, "127.0.0.1").line == "export NO_PROXY=from.this.shell,127.0.0.1"
    write(home / ".bashrc", "export no_proxy='*.corp, localhost'\n", 0o644)
    command = shellproxy.no_proxy_command(Machine.of({"HOME": str(home)}, home), "127.0.0.1")
    assert command.line == ("export NO_PROXY='*.corp,localhost,127.0.0.1'; "
                            "export no_proxy='*.corp,localhost,127.0.0.1'"), command.line
    assert shells.in_shell(command.line, shells.FISH) == ("set -gx NO_PROXY '*.corp,localhost,127.0.0.1'; "
                                                          "set -gx no_proxy '*.corp,localhost,127.0.0.1'")
    assert shells.in_shell(command.line, shells.POWERSHELL) == ("$env:NO_PROXY = '*.corp,localhost,127.0.0.1'; "
                                                                "$env:no_proxy = '*.corp,localhost,127.0.0.1'")


def test_the_host_already_listed_is_not_added_twice(home) -> None:
    machine = Machine.of({"HOME": str(home), "NO_PROXY": "127.0.0.1,corp"}, home)
    assert shellproxy.no_proxy_command(machine, "127.0.0.1").line == "export NO_PROXY=127.0.0.1,corp"
