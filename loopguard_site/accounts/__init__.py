"""Accounts: login, projects and their members' roles, the access rules
(access.py), API tokens per project (page, hashed at rest, revocable), the
API's daily quota per token, WebSocket authentication and limits, the CSP."""
