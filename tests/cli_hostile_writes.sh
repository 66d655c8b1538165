# cli_hostile_writes.sh - sourced by tests/cli.sh (issue 12): filled by its owner.
