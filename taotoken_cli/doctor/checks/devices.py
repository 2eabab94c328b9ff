"""Devices: a summary of local compute devices from the device probe (`taotoken route`)."""

from __future__ import annotations

import importlib.util

from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Result
from taotoken_cli.doctor.registry import check

SECTION = "Devices"


@check("devices.probe", SECTION, "Compute devices")
def devices_probe(ctx: DoctorContext) -> Result:
    if importlib.util.find_spec("taotoken_cli.devices") is None:
        return Result.skipped("the device probe (taotoken route) is not part of this build yet")
    return Result.skipped("device summary not wired up yet")
