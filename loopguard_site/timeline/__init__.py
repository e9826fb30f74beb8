"""The session page: a session's text with its loops highlighted, its tool
calls, and a Plotly timeline of channels, detectors and checkpoints."""
