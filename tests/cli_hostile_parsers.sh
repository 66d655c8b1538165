# cli_hostile_parsers.sh - sourced by tests/cli.sh (issue 12): filled by its owner.
