"""`taotoken completion`: the shell completion scripts (printed, or installed for this user with the man pages)."""
