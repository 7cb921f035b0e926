#!/usr/bin/env bash
# Build the derived image FROM the locked release digest, then (optionally) an enroot .sqsh for pyxis.
#   bash containers/build.sh [IMAGE_NAME] [SQSH_PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
LOCK=containers/nemo-rl.lock.json
read -r TAG DIGEST < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["tag"], d["digest"] or "")' "$LOCK")
if [ -z "${DIGEST:-}" ]; then
  echo "$LOCK has no digest: run 'recipe cluster lock' on a machine that reaches nvcr.io, commit the lock, retry" >&2
  exit 1
fi
IMAGE="${1:-nemotron-cascade2-nemo-rl:${TAG}-$(git rev-parse --short HEAD)}"
docker build -f containers/Dockerfile --build-arg NEMO_RL_TAG="$TAG" --build-arg NEMO_RL_DIGEST="$DIGEST" -t "$IMAGE" .
echo "built $IMAGE FROM nvcr.io/nvidia/nemo-rl:$TAG@$DIGEST"
if [ -n "${2:-}" ]; then
  enroot import --output "$2" "dockerd://$IMAGE"
  echo "wrote $2 (set cluster.container.sqsh to it)"
fi
