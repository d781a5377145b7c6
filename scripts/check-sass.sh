#!/usr/bin/env bash
# Assembles a PTX module for a GPU architecture and checks, in the SASS, that the tiled
# kernels reach shared memory with LDS/STS only (no generic LD/ST), as the PTX promises.
# Needs the CUDA toolkit (ptxas, cuobjdump); run it on a GPU machine or any CUDA install.
# Usage: scripts/check-sass.sh KERNELS.ptx [sm_90]
set -euo pipefail
ptx=${1:?usage: $0 KERNELS.ptx [sm_arch]}
arch=${2:-sm_90}
work=$(mktemp -d)
ptxas -arch="$arch" -O3 "$ptx" -o "$work/kernels.cubin"
cuobjdump -sass "$work/kernels.cubin" > "$work/kernels.sass"
status=0
for fn in $(grep -o 'Function : [a-z_0-9]*' "$work/kernels.sass" | awk '{print $3}'); do
  body=$(awk -v f="$fn" '$0 ~ "Function : "f"$" {on=1; next} /Function :/ {on=0} on' "$work/kernels.sass")
  lds=$(grep -c ' LDS' <<<"$body" || true)
  sts=$(grep -c ' STS' <<<"$body" || true)
  generic=$(grep -Ec ' (LD|ST)(\.[A-Z0-9.]+)? ' <<<"$body" || true)
  printf '%-34s LDS %3d  STS %3d  generic LD/ST %d\n' "$fn" "$lds" "$sts" "$generic"
  if [[ $fn == *tiled* ]] && { [[ $lds -eq 0 || $sts -eq 0 || $generic -ne 0 ]]; }; then status=1; fi
done
[[ $status -eq 0 ]] && echo "SASS check passed: shared memory via LDS/STS only" || echo "SASS check FAILED"
exit $status
