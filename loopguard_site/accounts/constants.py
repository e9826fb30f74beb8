"""Names the accounts app shares with code that runs before Django is set up
(the `loopguard` command's options) and with its migrations."""

DEFAULT_PROJECT = "default"  # where existing data moved, and `loopguard import`'s default
