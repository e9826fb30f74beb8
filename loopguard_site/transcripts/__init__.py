"""Transcripts: stored sessions, their normalised events and raw uploads."""
