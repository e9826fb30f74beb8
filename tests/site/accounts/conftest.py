from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures for the browser tests)
