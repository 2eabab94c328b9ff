"""`taotoken route`: the model for this machine's devices or a task, and verifying what answers."""
