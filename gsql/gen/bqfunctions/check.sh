#!/usr/bin/env bash
# Fails (exit 1) when gsql/bigquery_functions.txt (or its copy for
# source/highlight) is stale against its
# sources: sql-formatter's BigQuery function list (npm, installed once into
# the test cache by tools/npm/ensure.sh) and gsql/gen/bqfunctions/bigquery_docs.txt.
# Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
go run ./gsql/gen/bqfunctions -check
echo "gsql/gen/bqfunctions/check.sh: gsql/bigquery_functions.txt and source/highlight/bigquery_functions.txt are up to date" >&2
