"""The user's choices stand (issue 22, item 8): a `source env.sh` line the user commented out in ~/.bashrc was
silently re-enabled by `config set`, and one the user deleted was added back by `config sync`. Both now stay so,
the run says how to bring the line back, and only `init --target shell`, asked again, does.

Real parts: a real ~/.bashrc in a temporary HOME, the real CLI in-process.
"""

from __future__ import annotations

from tests.conftest import SENTINEL_KEY, flat

NEW_KEY = "sk-ROTATEDrotated0123456789abcdEFGH"
BASHRC = "# my bashrc\nalias ll='ls -l'\n"


def init_shell(run, home):
    """~/.bashrc with the user's own lines, then `init --target shell` (nothing sent: --allow-unlisted)."""
    bashrc = home / ".bashrc"
    bashrc.write_text(BASHRC)
    result = run("init", "--allow-unlisted",
                 "--target", "shell", "--yes", "--base-url", "https://taotoken.net/api", "--model", "m",
                 "--key-stdin", input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    return bashrc


def test_a_commented_out_start_up_line_stays_so(run, home) -> None:
    bashrc = init_shell(run, home)
    text = bashrc.read_text()
    line = next(line for line in text.splitlines() if "taotoken-env" in line)
    bashrc.write_text(text.replace(line, "# " + line))  # the user turns it off
    before = bashrc.read_bytes()
    changed = run("config", "set", "api_key", "-", "--yes", input=NEW_KEY).assert_clean(NEW_KEY)
    assert changed.returncode == 0, changed.output
    assert bashrc.read_bytes() == before
    again = run("init", "--allow-unlisted",
                "--target", "shell", "--yes", "--key-stdin", input=NEW_KEY).assert_clean(NEW_KEY)
    assert again.returncode == 0 and bashrc.read_bytes() == before, again.output
    assert "is commented out in" in flat(again.output) and "remove the leading # to bring them back" in \
        flat(again.output)


def test_a_removed_start_up_line_stays_removed_until_init_is_asked_again(run, home) -> None:
    bashrc = init_shell(run, home)
    bashrc.write_text(BASHRC)  # the user deletes the marked line
    env_sh = home / ".config" / "taotoken" / "env.sh"
    changed = run("config", "set", "api_key", "-", "--yes", input=NEW_KEY).assert_clean(NEW_KEY)
    assert changed.returncode == 0 and "~/.bashrc" not in flat(changed.output), changed.output
    assert bashrc.read_text() == BASHRC and NEW_KEY in env_sh.read_text()
    synced = run("config", "sync", "--yes").assert_clean(NEW_KEY)
    assert synced.returncode == 0 and bashrc.read_text() == BASHRC, synced.output
    assert "no longer has the line that sources" in flat(synced.output) and \
        "taotoken init --target shell` adds it back" in flat(synced.output)
    fixed = run("doctor", "--fix", "--yes", "--offline").assert_clean(NEW_KEY)
    assert "taotoken-env" not in bashrc.read_text(), fixed.output
    again = run("init", "--allow-unlisted", "--target", "shell", "--yes", "--key-stdin",
                input=NEW_KEY).assert_clean(NEW_KEY)
    assert again.returncode == 0 and "taotoken-env" in bashrc.read_text(), again.output


def test_doctor_says_new_shells_lack_the_variables_and_how_to_bring_the_line_back(run, home) -> None:
    import json

    bashrc = init_shell(run, home)

    def finding() -> dict:
        result = run("doctor", "--json", "--offline", "--check", "env.startup_line").assert_clean()
        return {c["id"]: c for c in json.loads(result.stdout)["checks"]}["env.startup_line"]

    assert finding()["status"] == "ok"
    text = bashrc.read_text()
    line = next(line for line in text.splitlines() if "taotoken-env" in line)
    bashrc.write_text(text.replace(line, "# " + line))
    off = finding()
    assert off["status"] == "warn" and "is commented out in" in off["message"], off
    assert off["fixes"][0].startswith("remove the leading # from the line marked # taotoken-env")
    bashrc.write_text("alias ll='ls -l'\n")  # removed
    gone = finding()
    assert gone["status"] == "warn" and gone["fixes"][0].startswith("taotoken init --target shell"), gone
