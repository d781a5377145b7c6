#!/usr/bin/env bash
# Compares two builds of a PTX module function by function, after normalising what changes
# between builds of the same code, and prints the entries and functions that differ.
#
#   scripts/ptx-diff.sh [-d] OLD.ptx NEW.ptx
#   scripts/ptx-diff.sh [-d] OLD_DIR NEW_DIR    (every *.ptx of OLD_DIR against NEW_DIR's)
#
# Normalised away: comments (`// begin inline asm`, `// callseq`, the launch-bounds markers),
# blank lines and trailing blanks; the function number in branch labels (`$L__BB12_7` is
# `$L__BB_7`, so reordered functions compare); the names of static shared arrays, which
# `shared_array!` takes from the call site's file, line and column (`__shared_<file>_l23_c14`
# is `__shared_<n>`, `n` counting first uses within the function). Everything else counts,
# register numbers and declared register counts included.
#
# -d prints the unified diff of each function that differs. Exit status: 0 if every function
# is the same, 1 if any differs (or is only in one module), 2 on a usage error.
set -euo pipefail

show_diff=0
if [[ ${1:-} == -d ]]; then
    show_diff=1
    shift
fi
if [[ $# -ne 2 ]]; then
    sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Splits module $1 into one normalised file per function under directory $2, named after the
# function (`#2` and on for a name seen before, such as a `.func` declared, then defined);
# what precedes the first function is `(header)`.
split_module() {
    local module=$1 out=$2 piece name
    mkdir -p "$out/raw"
    sed -e 's://.*$::' -e 's/[[:space:]]*$//' -e '/^$/d' \
        -e 's/\$L__BB[0-9]*_/$L__BB_/g' "$module" > "$out/all"
    csplit -s -z -f "$out/raw/p" -n 5 "$out/all" \
        '/^\.\(visible \.\)\{0,1\}\(entry\|func\)/' '{*}'
    for piece in "$out"/raw/p*; do
        name=$(head -n 1 "$piece" | sed -n \
            -e 's/^\.\(visible \.\)\{0,1\}\(entry\|func\) *\(([^)]*) *\)\{0,1\}\([A-Za-z0-9_$.]*\).*/\4/p')
        [[ -n $name ]] || name='(header)'
        local file="$out/$name" n=2
        while [[ -e $file ]]; do
            file="$out/$name#$n"
            n=$((n + 1))
        done
        # Static shared arrays, numbered in order of first use.
        grep -o '__shared_[0-9]*_l[0-9]*_c[0-9]*' "$piece" | cat -n | sort -k2,2 -u | sort -n \
            | cut -f2 | cat -n | sed 's/^ *\([0-9]*\)\t\(.*\)$/s\/\\<\2\\>\/__shared_\1\/g/' \
            > "$out/rename.sed"
        sed -f "$out/rename.sed" "$piece" > "$file"
    done
    rm -rf "$out/raw" "$out/all" "$out/rename.sed"
}

# Compares modules $1 and $2; prints what differs; returns 1 if anything does.
compare() {
    local old=$1 new=$2 tag=$3 status=0 f name
    rm -rf "$work/old" "$work/new"
    split_module "$old" "$work/old"
    split_module "$new" "$work/new"
    for f in "$work"/old/* "$work"/new/*; do
        basename "$f"
    done | sort -u > "$work/names"
    local same=0 total=0
    while IFS= read -r name; do
        total=$((total + 1))
        if [[ ! -e $work/old/$name ]]; then
            echo "$tag: only in $new: $name"
            status=1
        elif [[ ! -e $work/new/$name ]]; then
            echo "$tag: only in $old: $name"
            status=1
        elif cmp -s "$work/old/$name" "$work/new/$name"; then
            same=$((same + 1))
        else
            echo "$tag: differs: $name"
            if [[ $show_diff -eq 1 ]]; then
                diff -u "$work/old/$name" "$work/new/$name" || true
            fi
            status=1
        fi
    done < "$work/names"
    echo "$tag: $same of $total functions the same"
    return $status
}

old=$1
new=$2
status=0
if [[ -d $old && -d $new ]]; then
    shopt -s nullglob
    modules=("$old"/*.ptx)
    if [[ ${#modules[@]} -eq 0 ]]; then
        echo "no .ptx files in $old" >&2
        exit 2
    fi
    for module in "${modules[@]}"; do
        base=$(basename "$module")
        if [[ ! -e $new/$base ]]; then
            echo "$base: not in $new"
            status=1
            continue
        fi
        compare "$module" "$new/$base" "$base" || status=1
    done
elif [[ -f $old && -f $new ]]; then
    compare "$old" "$new" "$(basename "$new")" || status=1
else
    echo "OLD and NEW must be two files or two directories" >&2
    exit 2
fi
exit $status
