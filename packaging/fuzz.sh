#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (preset "fuzz": clang 14,
# ASan + UBSan, in build-fuzz/) and runs each one in turn.
#
# usage: packaging/fuzz.sh [--merge] [--keep-going] [--runs N] [SECONDS] [TARGET...]
#                          [-- LIBFUZZER_OPTION...]
#
#   SECONDS    how long each target runs (default 60)
#   TARGET     json, pickle, zip, load_archive, load_directory, load_file,
#              torch_pickle, http_headers, sharded_index, dcp_metadata, dcp_stream,
#              consolidated, s3_listing (default: all)
#   --runs N   also stop a target after N inputs
#   --merge    merge what each run found back into tests/fuzz/corpus/<target>
#              (minimized: only inputs that add coverage)
#   --keep-going  do not stop a target at its first finding (libFuzzer's
#              -fork=1 -ignore_crashes=1 ...): every failing input is kept in
#              the work directory, one per distinct finding in regressions/;
#              findings.txt there lists each input with its signature
#   -- ...     more libFuzzer options for every target (-malloc_limit_mb=8192, -seed=1)
#
# Each target first replays tests/fuzz/regressions/<target>/: an input that
# still fails is reported (and left out of the run, which it would stop at
# once). Then it fuzzes from a copy of tests/fuzz/corpus/<target>/ plus the
# passing regressions, with its dictionary, in build-fuzz/fuzz-work/<target>/
# (log: fuzz.log there). A crash, leak, UBSan report, timeout or
# out-of-memory input is copied into tests/fuzz/regressions/<target>/ (which
# ctest replays). The script exits non-zero, once every target has run, if
# any target failed. Installs clang-14 and the build dependencies first if
# they are missing (root, or sudo).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$(dirname "$here")"
fuzz_dir="$source_dir/tests/fuzz"
build_dir="$source_dir/build-fuzz"
all_targets=(json pickle zip load_archive load_directory load_file torch_pickle http_headers
             sharded_index dcp_metadata dcp_stream consolidated s3_listing deflate_blocks)

seconds=60
runs=""
merge=0
keep_going=0
targets=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --) shift; extra=("$@"); break ;;
        --merge) merge=1 ;;
        --keep-going) keep_going=1 ;;
        --runs) runs="$2"; shift ;;
        --runs=*) runs="${1#--runs=}" ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        [0-9]*) seconds="$1" ;;
        *)
            if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
                echo "error: unknown target or option: $1 (targets: ${all_targets[*]})" >&2
                exit 2
            fi
            targets+=("$1") ;;
    esac
    shift
done
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

# --- the toolchain and the core's dependencies (no libtorch: the fuzz build does not use it)
packages=(clang-14 libclang-rt-14-dev build-essential cmake ninja-build pkg-config qt6-base-dev
          libisal-dev libdeflate-dev liblzma-dev libbz2-dev zlib1g-dev rapidjson-dev)
"$source_dir/packaging/install-deps.sh" "${packages[@]}"

# --- build
cd "$source_dir"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake --preset fuzz
fi
cmake --build --preset fuzz

# --- run
# Reporting only: UBSan prints a stack with its finding (it aborts either way).
export UBSAN_OPTIONS=print_stacktrace=1
work_root="$build_dir/fuzz-work"
# fuzz_load_directory unpacks every input into a temporary directory: on
# tmpfs it runs some 20 times faster than on ext4.
tmp_root="$work_root"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    tmp_root="$(mktemp -d /dev/shm/tdstudio-fuzz.XXXXXX)"
    trap 'rm -rf "$tmp_root"' EXIT
fi
final_stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -1; }  # LOG NAME: from -print_final_stats
failed=()
summary=()
# What a failing input breaks: its first sanitizer or target message and the
# first frame in the library, addresses and pids left out (to tell findings apart).
signature() {
    TMPDIR="$tmp_root/$target" "$exe" -rss_limit_mb=4096 -timeout=25 "${extra[@]}" "$1" 2>&1 |
        grep -E -m2 'runtime error|ERROR: [A-Za-z]+|^fuzz_[a-z_]+: |#[0-9]+ .* in tensordict::' |
        sed -E 's/0x[0-9a-f]+//g; s/==[0-9]+==//g; s/#[0-9]+ +//; s/\(BuildId[^)]*\)//' |
        tr -s ' \n' ' ' || true
}

for target in "${targets[@]}"; do
    exe="$build_dir/tests/fuzz/fuzz_$target"
    work="$work_root/$target"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts" "$tmp_root/$target"
    cp -r "$fuzz_dir/corpus/$target/." "$work/corpus/"
    regressions="$fuzz_dir/regressions/$target"
    mkdir -p "$regressions"
    case "$target" in
        json|load_directory|sharded_index|consolidated) dict="$fuzz_dir/json.dict" ;;
        pickle|dcp_metadata) dict="$fuzz_dir/pickle.dict" ;;
        zip|load_archive|dcp_stream) dict="$fuzz_dir/zip.dict" ;;
        torch_pickle) dict="$fuzz_dir/torch_pickle.dict" ;;
        load_file) dict="$fuzz_dir/files.dict" ;;
        http_headers) dict="$fuzz_dir/http.dict" ;;
        s3_listing) dict="$fuzz_dir/xml.dict" ;;
    esac
    args=(-max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=4096 -timeout=25
          -dict="$dict" -artifact_prefix="$work/artifacts/")
    [ -n "$runs" ] && args+=(-runs="$runs")
    [ $keep_going -eq 1 ] && args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    args+=("${extra[@]}")
    echo "=== fuzz_$target: ${seconds} s${runs:+ or $runs runs} (log: $work/fuzz.log)" >&2

    # The regression inputs first, one by one: those that still fail are
    # reported (and left out of the run, which they would stop at once); the
    # others join the seeds.
    still_failing=()
    known=()  # signatures of the failing regressions
    for input in "$regressions"/*; do
        [ -f "$input" ] && [[ "$input" != *.md ]] || continue
        if TMPDIR="$tmp_root/$target" "$exe" -rss_limit_mb=4096 -timeout=25 "${extra[@]}" "$input" \
            >>"$work/regressions.log" 2>&1; then
            cp "$input" "$work/corpus/"
        else
            still_failing+=("$(basename "$input")")
            [ $keep_going -eq 1 ] && known+=("$(signature "$input")")
        fi
    done

    status=0
    started=$SECONDS
    # New inputs go to the work copy only, never to the repository.
    TMPDIR="$tmp_root/$target" "$exe" "${args[@]}" "$work/corpus" >"$work/fuzz.log" 2>&1 ||
        status=$?
    elapsed=$((SECONDS - started))

    # Status lines: "#N<tab>NEW cov: C ft: F corp: U/SIZE ..." or, forked, "#N: cov: C ft: F corp: U ...".
    last=$(grep -E '^#[0-9]+(:|[[:space:]])' "$work/fuzz.log" | tail -1 || true)
    execs=$(final_stat "$work/fuzz.log" number_of_executed_units)
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last")
    rate=$(final_stat "$work/fuzz.log" average_exec_per_sec)
    [ -n "$rate" ] || rate=$(( ${execs:-0} / (elapsed > 0 ? elapsed : 1) ))
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")

    result="ok"
    shopt -s nullglob
    artifacts=("$work"/artifacts/{crash,leak,timeout,oom}-*)
    slow=("$work"/artifacts/slow-unit-*)
    shopt -u nullglob
    [ ${#slow[@]} -gt 0 ] && result="ok, slow inputs in $work/artifacts"
    if [ $status -ne 0 ] || [ ${#artifacts[@]} -gt 0 ]; then
        result="FAILED (exit $status)"
        kept=0
        seen=("${known[@]}")
        for artifact in "${artifacts[@]}"; do
            if [ $keep_going -eq 1 ]; then
                # Forked runs keep every failing input: one per new finding is enough.
                sig="$(signature "$artifact")"
                printf '%s\t%s\n' "$(basename "$artifact")" "$sig" >>"$work/findings.txt"
                is_known=0
                for other in "${seen[@]}"; do
                    [ "$other" = "$sig" ] && is_known=1
                done
                [ $is_known -eq 1 ] && continue
                seen+=("$sig")
            fi
            cp "$artifact" "$regressions/"
            kept=$((kept + 1))
        done
        result="$result, ${#artifacts[@]} failing inputs, $kept new kept in regressions/$target/"
        grep -oE '(SUMMARY: |ERROR: |runtime error: |Assertion ).*' "$work/fuzz.log" | cut -c1-200 |
            sort -u | head -5 >&2 || true
        failed+=("$target")
    fi
    if [ ${#still_failing[@]} -gt 0 ]; then
        result="$result; regressions still failing: ${still_failing[*]}"
        [[ " ${failed[*]} " == *" $target "* ]] || failed+=("$target")
    fi
    summary+=("$(printf '%-15s %10s execs %8s exec/s  corpus %-12s cov %-6s ft %-7s %s' \
        "$target" "${execs:-?}" "${rate:-?}" "${corp:-?}" "${cov:-?}" "${ft:-?}" "$result")")
    echo "${summary[-1]}" >&2

    if [ $merge -eq 1 ] && [ $status -eq 0 ]; then
        "$exe" -merge=1 -rss_limit_mb=4096 -timeout=25 "$fuzz_dir/corpus/$target" "$work/corpus" \
            >"$work/merge.log" 2>&1
        echo "merged into tests/fuzz/corpus/$target: $(tail -1 "$work/merge.log")" >&2
    fi
done

echo
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}: inputs kept in tests/fuzz/regressions/<target>/ (replayed by ctest)" >&2
    exit 1
fi
