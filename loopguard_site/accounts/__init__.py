"""Accounts: login, API tokens (page, hashed at rest, revocable), the API's
daily quota per token, WebSocket authentication and limits, the CSP."""
