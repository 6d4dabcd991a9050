"""One module per subcommand of CLI.md; each exposes `run(args) -> exit code`."""
