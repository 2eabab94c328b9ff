"""The values shell completion offers for options and arguments, each taken from the code that accepts them.

Attached with `autocompletion=`; scripts/gen_docs.py writes them into the static completion scripts, so
pressing Tab never starts Python. Options whose metavar is FILE (or DIR) complete file (directory) names.
Imports happen only when a list is asked for.
"""

from __future__ import annotations


def init_targets() -> list[str]:
    from taotoken_cli.init.plan import TARGETS

    return list(TARGETS)


def init_scopes() -> list[str]:
    from taotoken_cli.init.plan import SCOPES

    return list(SCOPES)


def codex_auth_modes() -> list[str]:
    from taotoken_cli.clients.codex import AUTH_MODES

    return list(AUTH_MODES)


def ccswitch_apps() -> list[str]:
    from taotoken_cli.clients.ccswitch_store import APPS

    return list(APPS)


def failure_codes() -> list[str]:
    from taotoken_cli.diagnosis.catalogue import CATALOGUE

    return list(CATALOGUE)


def config_keys() -> list[str]:
    from taotoken_cli.config.edit import SETTABLE_KEYS

    return list(SETTABLE_KEYS)


def config_values(ctx) -> list[str]:
    """VALUE of `config set KEY VALUE`, where KEY's values are a fixed list (`lang`); `ctx` is Click's context
    (Typer passes it by this name), holding the KEY typed before."""
    if ctx.params.get("key") == "lang":
        from taotoken_cli.i18n import LANG_SETTINGS

        return list(LANG_SETTINGS)
    return []


def doctor_checks() -> list[str]:
    """Check ids, their prefixes (`gateway`) and the sections, as `--check` takes them."""
    from taotoken_cli.doctor.model import SECTIONS
    from taotoken_cli.doctor.registry import all_checks

    ids = [c.id for c in all_checks()]
    prefixes = {i.split(".")[0] for i in ids}
    return sorted(prefixes | {s.lower() for s in SECTIONS}) + ids


def demo_steps() -> list[str]:
    from taotoken_cli.demo.steps import STEP_NAMES

    return list(STEP_NAMES)


def mock_styles() -> list[str]:
    from taotoken_cli.mock.options import FAIL_STYLES

    return list(FAIL_STYLES)


def mock_faults() -> list[str]:
    from taotoken_cli.mock.options import FAULTS

    return list(FAULTS)


def mock_failures() -> list[str]:
    from taotoken_cli.mock.options import COMMON_STATUSES, NAMED_FAILURES

    return [*map(str, COMMON_STATUSES), *NAMED_FAILURES]


def mock_languages() -> list[str]:
    from taotoken_cli.mock.options import LANGUAGES

    return list(LANGUAGES)


def device_kinds() -> list[str]:
    from taotoken_cli.routing import DEVICE_KINDS, KNOWN_VENDORS

    return [*DEVICE_KINDS, *KNOWN_VENDORS]


def route_keys() -> list[str]:
    """`route set KIND=MODEL`: the device kinds and vendors, each ready for its model."""
    return [f"{kind}=" for kind in device_kinds()]


def arrivals() -> list[str]:
    from taotoken_cli.bench.workload import ARRIVAL_EXAMPLES

    return list(ARRIVAL_EXAMPLES)
