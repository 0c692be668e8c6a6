#!/bin/sh
# A minimal host driving the projectfile CLI from a shell script: acquire a Codex session on a
# workspace, read the lease token from the JSON receipt, run the "CLI" (`cat AGENTS.md`) with the
# receipt's launch arguments, and release.
#
#   PROJECTFILE=target/debug/projectfile sh examples/host.sh [WORKSPACE]
#
# The lease is held by this shell (`--holder-pid $$`): without it, `acquire` names its parent,
# which is this shell too when run from a script, but not when run through a wrapper (env, sudo,
# a process manager). Name the holder explicitly: if the script dies before `release`, the next
# start in the workspace cleans the block up, because its holder is gone.
set -eu

PROJECTFILE=${PROJECTFILE:-projectfile}
WORKSPACE=${1:-$(mktemp -d)}
STATE=${PROJECTFILE_STATE_DIR:-$(mktemp -d)}
export PROJECTFILE_STATE_DIR="$STATE"

receipt=$("$PROJECTFILE" acquire --provider codex --workspace "$WORKSPACE" \
  --prompt 'Answer in one sentence.' --holder-pid $$ --json)
echo "$receipt"

# The token is [A-Za-z0-9-] only, so sed can read it without a JSON parser (python3 -c
# 'import json,sys; print(json.load(sys.stdin)["token"])' is the sturdier choice).
token=$(printf '%s\n' "$receipt" | sed -n 's/.*"token":"\([A-Za-z0-9-]*\)".*/\1/p')
if [ -z "$token" ]; then
  echo "error: no token in the receipt" >&2
  exit 1
fi
# Release even if the CLI fails or the script is interrupted.
trap '"$PROJECTFILE" release --token "$token" --json' EXIT

# The receipt's launch_args go after the CLI's own arguments (Codex has none: its text is in
# AGENTS.md). A host in a richer language reads launch_args and env from the receipt.
(cd "$WORKSPACE" && cat AGENTS.md)
