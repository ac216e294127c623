#!/usr/bin/env bash
# Keeps the chart's CRDs identical to the repository's crds/ (the single source of truth).
#
#   helm/sync-crds.sh           copy crds/*.yaml into helm/roomkeeper/crds/ and drop stale copies
#   helm/sync-crds.sh --check   change nothing; exit 1 and name every difference if they drift
#
# Paths are taken relative to this script, so it works from any working directory.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${root}/crds"
dst="${root}/helm/roomkeeper/crds"

mode="sync"
case "${1:-}" in
  "") ;;
  --check) mode="check" ;;
  -h|--help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "sync-crds: unknown argument '$1' (expected --check or nothing)" >&2; exit 2 ;;
esac

shopt -s nullglob
sources=("${src}"/*.yaml)
if [ "${#sources[@]}" -eq 0 ]; then
  echo "sync-crds: no CRDs found in ${src}" >&2
  exit 2
fi
mkdir -p "${dst}"

drift=0
for file in "${sources[@]}"; do
  name="$(basename "${file}")"
  if [ "${mode}" = "check" ]; then
    if [ ! -f "${dst}/${name}" ]; then
      echo "sync-crds: helm/roomkeeper/crds/${name} is missing" >&2; drift=1
    elif ! cmp -s "${file}" "${dst}/${name}"; then
      echo "sync-crds: helm/roomkeeper/crds/${name} differs from crds/${name}" >&2; drift=1
    fi
  else
    cp "${file}" "${dst}/${name}"
  fi
done

for copy in "${dst}"/*.yaml; do
  name="$(basename "${copy}")"
  if [ ! -f "${src}/${name}" ]; then
    if [ "${mode}" = "check" ]; then
      echo "sync-crds: helm/roomkeeper/crds/${name} has no source in crds/" >&2; drift=1
    else
      rm -f "${copy}"
    fi
  fi
done

if [ "${mode}" = "check" ]; then
  if [ "${drift}" -ne 0 ]; then
    echo "sync-crds: run helm/sync-crds.sh to copy crds/ into the chart" >&2
    exit 1
  fi
  echo "sync-crds: chart CRDs match crds/"
else
  echo "sync-crds: copied ${#sources[@]} CRD(s) into helm/roomkeeper/crds/"
fi
