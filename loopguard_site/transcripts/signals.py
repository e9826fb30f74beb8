"""What transcripts announce to the layers above it, which it may not import."""

from django.dispatch import Signal

# Sent once an upload's sessions are stored (the files that failed are not
# among them), with `sessions` (a list, at least one) and `user` (the
# uploader, None for the command line without one): replay scans them.
sessions_imported = Signal()
