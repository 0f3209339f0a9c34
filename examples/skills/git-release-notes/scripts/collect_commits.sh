#!/usr/bin/env bash
# Print the non-merge commits between two refs in a machine-readable format.
#
# Usage: collect_commits.sh FROM_REF [TO_REF]
#   FROM_REF  the previous release (exclusive), e.g. v2.2.0
#   TO_REF    the new release (inclusive), defaults to HEAD
#
# Output: one record per commit, fields separated by the ASCII unit separator (0x1f)
# and records terminated by the ASCII record separator (0x1e):
#   full hash, subject, author name, body
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi

from_ref=$1
to_ref=${2:-HEAD}

if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "error: not inside a git repository" >&2
    exit 2
fi

for ref in "$from_ref" "$to_ref"; do
    if ! git rev-parse --verify --quiet "${ref}^{commit}" >/dev/null; then
        echo "error: unknown ref '${ref}'" >&2
        exit 1
    fi
done

count=$(git rev-list --count --no-merges "${from_ref}..${to_ref}")
if [[ $count -eq 0 ]]; then
    echo "warning: no commits between ${from_ref} and ${to_ref}" >&2
fi

git log --no-merges --reverse \
    --format='%H%x1f%s%x1f%an%x1f%b%x1e' \
    "${from_ref}..${to_ref}"
