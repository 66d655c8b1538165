# cli_hostile_escape.sh - sourced by tests/cli.sh (issue 12): filled by its owner.
