# Sourced by the scripts that build CUDA C with nvcc (`nvcc-lecture/compare.sh`,
# `cub-sliding/compare.sh`), which define `die`. `find_nvcc` sets `nvcc` (NVCC, else nvcc on
# PATH, else /usr/local/cuda/bin/nvcc), `arch` (NVCC_ARCH, default sm_90: H100 and H200) and
# `nvcc_version` (its "release X, VY", or empty); `nvcc_build` builds a comparison's binary.
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

# `nvcc_build SRC NAME [FLAG...]`: checks that SRC and python3 (which reads the JSON rows)
# are there, finds nvcc, makes `work` (a temporary directory, removed on exit) and builds SRC
# into $work/NAME with -O3, the FLAGs and -arch=$arch.
nvcc_build() {
  local src=$1 name=$2
  shift 2
  [[ -f $src ]] || die "$src is missing"
  command -v python3 >/dev/null || die "python3 is needed to read the JSON rows and print the table"
  find_nvcc
  work=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "compare.sh: building $src with $nvcc ($nvcc_version) -O3 ${*:+$* }-arch=$arch" >&2
  "$nvcc" -O3 "$@" -arch="$arch" -o "$work/$name" "$src" || die "nvcc failed to build $(basename "$src")"
}
