"""The LoopGuard lab: a Django project whose apps are subpackages.

The Celery app (`loopguard_site.celery`) is loaded by `apps.LoopGuardSiteConfig`
when Django starts, not here, so that `loopguard scan` (which imports
`loopguard_site.cli` to list subcommands) does not pay for importing Celery.
"""
