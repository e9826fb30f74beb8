"""`loopguard` subcommands that need Django (`lab`, `import`): each imports
Django only inside its `run()`, see detector.cli."""
