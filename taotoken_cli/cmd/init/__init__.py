"""`taotoken init`: write the triple into every client's real config (plan, confirm, apply, undo)."""
