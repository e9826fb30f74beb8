"""Accounts: API tokens now; roles and projects come with issue 9."""
