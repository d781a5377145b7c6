# Sourced by the scripts that build CUDA C with nvcc (`nvcc-lecture/compare.sh`,
# `cub-sliding/compare.sh`), which define `die`. `find_nvcc` sets `nvcc` (NVCC, else nvcc on
# PATH, else /usr/local/cuda/bin/nvcc), `arch` (NVCC_ARCH, default sm_90: H100 and H200) and
# `nvcc_version` (its "release X, VY", or empty).
find_nvcc() {
  nvcc=${NVCC:-}
  if [[ -z $nvcc ]]; then
    if command -v nvcc >/dev/null; then
      nvcc=$(command -v nvcc)
    elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
      nvcc=/usr/local/cuda/bin/nvcc
    else
      die "nvcc not found: put the CUDA toolkit's bin/ on PATH, or set NVCC=/path/to/nvcc"
    fi
  fi
  [[ -x $nvcc ]] || die "NVCC '$nvcc' is not executable"
  arch=${NVCC_ARCH:-sm_90}
  nvcc_version=$("$nvcc" --version | grep -o 'release [0-9.]*, V[0-9.]*' || true)
}
