#!/usr/bin/env bash
# Fails (exit 1) when gsql/bigquery_functions.txt is stale against its
# sources: sql-formatter's BigQuery function list (npm, installed once into
# the test cache by tools/npm/ensure.sh) and gsql/gen/bqfunctions/bigquery_docs.txt.
# Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
go run ./gsql/gen/bqfunctions -check
echo "gsql/gen/bqfunctions/check.sh: gsql/bigquery_functions.txt is up to date" >&2
