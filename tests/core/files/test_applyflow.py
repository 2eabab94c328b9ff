"""The one apply flow on real files in a temporary HOME: show → confirm → apply → report, dry run, refusal
without a terminal, Ctrl-D at the question, a blocker, and the own-file write of `config set`/`route set`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taotoken_cli.core.base.errors import InputError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.files import applyflow, fileplan
from taotoken_cli.core.files.applyflow import Flow, Step
from taotoken_cli.core.files.fileplan import FileChange, Plan
from taotoken_cli.core.term.iostreams import ConfirmationNeeded, IOStreams
from tests.conftest import SENTINEL_KEY, write


@pytest.fixture
def own(home: Path) -> Path:
    return home / ".config" / "taotoken"


def plan_for(home: Path) -> tuple[Plan, Path, Path]:
    """An edit of an existing file that puts the key in, and a new file: one note and one warning."""
    edited = write(home / "client" / "settings.json", '{"model": "old"}\n', 0o644)
    created = home / "client" / "new.env"
    plan = Plan([FileChange(edited, edited.read_bytes(), f'{{"key": "{SENTINEL_KEY}"}}\n'.encode(), secret=True,
                            target="client", summary=["set key"]),
                 FileChange(created, None, b"NEW=1\n", target="other", summary=["create it"])],
                notes=["what the change means"], warnings=["something to know"])
    return plan, edited, created


def io_for(home: Path, answer: str | None = None) -> IOStreams:
    """Memory streams; `answer` is typed at the question on a terminal (None: no terminal)."""
    return IOStreams.memory(answer or "", env={"HOME": str(home), "COLUMNS": "1000"}, cwd=home,
                            tty=answer is not None)


def test_yes_shows_the_changes_applies_with_a_backup_and_undo_restores(home: Path, own: Path) -> None:
    plan, edited, created = plan_for(home)
    io = io_for(home)
    outcome = applyflow.run(io, plan, Flow("taotoken test", yes=True), own)
    assert outcome.step is Step.APPLIED and outcome.exit_code == Exit.OK
    assert SENTINEL_KEY in edited.read_text() and created.read_text() == "NEW=1\n"
    assert oct(edited.stat().st_mode & 0o777) == "0o600"  # holds the key
    out, err = io.written()
    lines = out.splitlines()
    assert lines[0] == "changes:" and lines[1].startswith(f"  update {edited}  [client]")
    assert "      set key" in lines and "note: what the change means" in lines
    assert "warning: something to know" in err.splitlines()
    assert "---" not in out  # no diff without --dry-run
    assert f"wrote {edited}" in lines and f"wrote {created}" in lines
    assert f"backups of the previous versions: {outcome.result.backup_dir}" in lines
    assert "undo everything this run changed: taotoken init --undo" in lines
    assert SENTINEL_KEY not in out + err
    undone = fileplan.undo_last(own)
    assert undone.command == "taotoken test"  # the manifest names the command that ran
    assert edited.read_text() == '{"model": "old"}\n' and not created.exists()


def test_dry_run_shows_the_masked_diff_and_writes_nothing(home: Path, own: Path) -> None:
    plan, edited, created = plan_for(home)
    io = io_for(home)
    outcome = applyflow.run(io, plan, Flow("taotoken test", dry_run=True, offers_dry_run=True), own)
    assert outcome.step is Step.DRY_RUN and outcome.exit_code == Exit.OK
    out, err = io.written()
    assert f"+++ {edited}" in out and "sk-SE…WXYZ" in out and SENTINEL_KEY not in out + err
    assert out.index("changes:") < out.index(f"+++ {edited}") < out.index("dry run: nothing was written")
    assert edited.read_text() == '{"model": "old"}\n' and not created.exists() and not own.exists()


def test_no_terminal_without_yes_refuses_and_names_dry_run_only_where_the_command_has_it(home: Path,
                                                                                     own: Path) -> None:
    plan, edited, created = plan_for(home)
    with pytest.raises(ConfirmationNeeded) as refused:
        applyflow.run(io_for(home), plan, Flow("taotoken test", offers_dry_run=True), own)
    assert "--dry-run" in refused.value.fix and refused.value.exit_code == Exit.USAGE
    with pytest.raises(ConfirmationNeeded) as refused:
        applyflow.run(io_for(home), plan, Flow("taotoken test"), own)
    assert "--dry-run" not in refused.value.fix
    assert edited.read_text() == '{"model": "old"}\n' and not created.exists()


def test_a_no_at_the_question_writes_nothing_and_says_the_commands_words(home: Path, own: Path) -> None:
    plan, edited, created = plan_for(home)
    io = io_for(home, "n\n")
    outcome = applyflow.run(io, plan, Flow("taotoken test"), own)
    assert outcome.step is Step.DECLINED and outcome.exit_code == Exit.FAILURE
    assert io.written()[0].rstrip().endswith("cancelled: nothing was written")
    assert "Apply these changes? [y/N] " in io.written()[1]
    io = io_for(home, "no\n")
    outcome = applyflow.run(io, plan, Flow("taotoken test", declined="--fix: nothing changed"), own)
    assert io.written()[0].rstrip().endswith("--fix: nothing changed")
    assert edited.read_text() == '{"model": "old"}\n' and not created.exists() and not own.exists()


def test_ctrl_d_at_the_question_is_an_interruption_with_nothing_written(home: Path, own: Path) -> None:
    plan, edited, created = plan_for(home)
    io = io_for(home, "")  # a terminal whose input ends at the question
    outcome = applyflow.run(io, plan, Flow("taotoken test"), own)
    assert outcome.step is Step.INTERRUPTED and outcome.exit_code == Exit.INTERRUPTED == 130
    assert io.written()[1].rstrip().endswith("cancelled: nothing was written")
    assert edited.read_text() == '{"model": "old"}\n' and not created.exists()


def test_doctors_texts_and_an_always_shown_diff(home: Path, own: Path) -> None:
    plan, edited, _created = plan_for(home)
    seen = []
    io = io_for(home)
    flow = Flow("taotoken doctor --fix", yes=True, diff=True, notes=False, heading="--fix will change 2 file(s):",
                report=lambda out, result: seen.append(len(result.written)))
    assert applyflow.run(io, plan, flow, own).step is Step.APPLIED
    out, _err = io.written()
    assert out.startswith("--fix will change 2 file(s):\n") and f"+++ {edited}" in out
    assert "note:" not in out and "wrote " not in out and seen == [2]


def test_a_blocker_stops_the_run_after_the_plan_is_shown_but_not_a_dry_run(home: Path, own: Path) -> None:
    plan, edited, _created = plan_for(home)
    blocker = InputError("choose first", "say which")
    io = io_for(home)
    with pytest.raises(InputError):
        applyflow.run(io, plan, Flow("taotoken test", yes=True), own, blocker=blocker)
    assert "changes:" in io.written()[0] and edited.read_text() == '{"model": "old"}\n'
    dry = io_for(home)
    assert applyflow.run(dry, plan, Flow("taotoken test", dry_run=True), own, blocker=blocker).step is Step.DRY_RUN


def test_a_plan_that_changes_nothing_shows_only_its_warnings(home: Path, own: Path) -> None:
    edited = write(home / "client" / "settings.json", "{}\n")
    plan = Plan([FileChange(edited, b"{}\n", b"{}\n", summary=["nothing"])], notes=["n"], warnings=["w"])
    io = io_for(home, "y\n")
    assert applyflow.run(io, plan, Flow("taotoken test"), own).step is Step.NOOP
    assert io.written() == ("", "warning: w\n") and not own.exists()


def test_the_report_names_where_a_symlink_led_the_write(home: Path, own: Path) -> None:
    real = write(home / "dotfiles" / "settings.json", "{}\n")
    link = home / "settings.json"
    link.symlink_to(real)
    io = io_for(home)
    plan = Plan([FileChange(link, b"{}\n", b'{"a": 1}\n', summary=["set a"])])
    applyflow.run(io, plan, Flow("taotoken test", yes=True), own)
    assert f"wrote {link} -> {os.path.realpath(link)}" in io.written()[0].splitlines()
    assert link.is_symlink() and real.read_text() == '{"a": 1}\n'


def test_write_own_writes_at_once_0600_and_says_when_nothing_changes(home: Path, own: Path) -> None:
    path = own / "config.toml"
    change = FileChange(path, None, f'api_key = "{SENTINEL_KEY}"\n'.encode(), secret=True)
    assert applyflow.write_own(change) is True
    assert oct(path.stat().st_mode & 0o777) == "0o600" and not (own / fileplan.BACKUPS_DIR).exists()
    assert applyflow.write_own(FileChange(path, path.read_bytes(), path.read_bytes(), secret=True)) is False


def test_write_own_on_a_full_disk_names_the_fix_and_leaves_the_file(home: Path, own: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(own / "config.toml", 'model = "old"\n')

    def full_disk(*_args, **_kwargs):  # the outermost boundary: the disk refuses the write
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(applyflow, "atomic_write", full_disk)
    with pytest.raises(TaotokenError) as failed:
        applyflow.write_own(FileChange(path, path.read_bytes(), b'model = "new"\n', secret=True))
    assert failed.value.exit_code == Exit.FAILURE and failed.value.code == "init.write_failed"
    assert "No space left on device" in failed.value.message and str(own) in failed.value.fix
    assert path.read_text() == 'model = "old"\n'
