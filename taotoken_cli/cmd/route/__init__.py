"""`taotoken route`: the model for this machine's devices or a task, and verifying what answers.

`run` holds the command's work, `verify` the sampling of the gateway, `view` the rendering; the routing
table itself (`taotoken_cli.core.devices.routing`) and the device probe (`taotoken_cli.core.devices.probe`)
are shared with doctor.
"""

PROBE_TIMEOUT_S = 15.0  # a device probe is killed after this (with --verify: also the limit per request)
