#!/usr/bin/env bash
# check.sh [CACHE]: generate a TypeScript client from couponsvc's OpenAPI
# document with openapi-typescript and type-check checkout.ts against it
# (tsc --noEmit). The pinned packages (package-lock.json) are installed with
# npm ci into CACHE (default ~/.cache/couponsvc-ci/typescript), once per
# lock file; nothing is written under client/. Run from anywhere in the
# repository; exits non-zero, saying why, when npm is missing or a step fails.
# Everything it says goes to stderr: CI's hygiene steps pass with an empty
# stdout.
set -euo pipefail
exec 1>&2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/couponsvc-ci/typescript}
command -v npm >/dev/null || { echo "check.sh: npm is not installed: cannot check the TypeScript client" >&2; exit 1; }
LOCK_SUM=$(sha256sum "$HERE/package-lock.json" | cut -c1-16)
WORK="$CACHE/$LOCK_SUM"
if [ ! -x "$WORK/node_modules/.bin/tsc" ]; then
	rm -rf "$WORK"
	mkdir -p "$WORK"
	cp "$HERE/package.json" "$HERE/package-lock.json" "$WORK/"
	(cd "$WORK" && npm ci --no-audit --no-fund --loglevel=error) || { echo "check.sh: npm ci failed" >&2; rm -rf "$WORK"; exit 1; }
fi
cp "$HERE/tsconfig.json" "$HERE/checkout.ts" "$WORK/"
(cd "$ROOT" && go run ./cmd/couponsvc openapi) >"$WORK/openapi.json"
"$WORK/node_modules/.bin/openapi-typescript" "$WORK/openapi.json" -o "$WORK/couponsvc.d.ts" --silent
(cd "$WORK" && node_modules/.bin/tsc -p tsconfig.json)
echo "check.sh: the TypeScript client generated from the document type-checks checkout.ts"
