"""Shell start-up files (Environment section): whether new shells get the variables of env.sh that `init --target
shell` wrote. A line the user commented out or removed stays so (the user's choice: `init` and `config set` never
bring it back); doctor says that new shells lack the variables and how to bring the line back."""

from __future__ import annotations

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.clients import shell

SECTION = "Environment"


@check("env.startup_line", SECTION, N_("Shell start-up line for env.sh"))
def startup_line(ctx: DoctorContext) -> Result:
    where = shell.paths(ctx.machine)
    if not where.env_sh.exists():
        return Result.skipped(_("no {path}: `taotoken init --target shell` was not run").format(path=where.env_sh))
    files = [path for path in (where.bashrc, where.zshrc) if path.exists()]
    texts = {path: path.read_text(encoding="utf-8", errors="replace") for path in files}
    active = [path for path, text in texts.items() if shell.MARKER in text and not shell.commented_out(text)]
    if active:
        return Result.ok(_("new shells source {env} ({files})").format(
            env=where.env_sh, files=", ".join(str(p) for p in active)))
    off = [path for path, text in texts.items() if shell.commented_out(text)]
    if off:
        return Result.warn(_("the line that sources {env} is commented out in {files}: new shells lack "
                             "OPENAI_BASE_URL and OPENAI_API_KEY").format(env=where.env_sh,
                                                                          files=", ".join(str(p) for p in off)),
                           fixes=[_("remove the leading # from the line marked {marker} in {path}").format(
                               marker=shell.MARKER, path=off[0])])
    return Result.warn(_("no start-up file sources {env}: new shells lack OPENAI_BASE_URL and OPENAI_API_KEY").format(
        env=where.env_sh), fixes=[_("taotoken init --target shell   (adds the one marked line back)")])
