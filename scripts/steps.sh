# Sourced by the set-up scripts (setup.sh, build.sh, demo.sh, test.sh): each step that can take
# more than a few seconds says what it does when it starts, shows its progress where it can
# (ninja's [n/m]: one updating line on a terminal, a line every 10 % otherwise), and its time when
# it ends. A failed step ends with one line naming it and the log that holds its output, and the
# script stops with status 1. The command a user ran (demo.sh, test.sh) sets KOB_STEPS_LOG and
# prints every step's time at the end (steps_report), also those of the scripts it called.

_step_name=""
_step_t0=0

step_start() {
    _step_name=$1
    _step_t0=$(date +%s)
    printf '==> %s\n' "$1"
}

step_end() {
    local s=$(( $(date +%s) - _step_t0 ))
    printf '    %s: done in %s\n' "$_step_name" "$(_step_time "$s")"
    if [ -n "${KOB_STEPS_LOG:-}" ]; then printf '%s\t%s\n' "$s" "$_step_name" >>"$KOB_STEPS_LOG"; fi
    _step_name=""
}

# step_fail LOG: the one line that ends a failed step (after the log's last lines), and status 1.
step_fail() {
    local log=$1
    if [ -n "$log" ] && [ -f "$log" ]; then
        printf -- '--- the last lines of %s ---\n' "$log" >&2
        tail -n 40 "$log" >&2
    fi
    printf 'FAILED: %s (its output: %s)\n' "${_step_name:-a step}" "${log:-none}" >&2
    exit 1
}

_step_time() {
    local s=$1
    if [ "$s" -ge 60 ]; then printf '%d min %02d s' $((s / 60)) $((s % 60)); else printf '%d s' "$s"; fi
}

# run_step NAME LOG COMMAND...: the command's output goes to LOG.
run_step() {
    local name=$1 log=$2; shift 2
    step_start "$name"
    "$@" >>"$log" 2>&1 || step_fail "$log"
    step_end
}

# progress LOG: copies its input (a build's output) to LOG and shows the [n/m] lines in it.
progress() {
    local log=$1 line n m pct shown=-1 tty=0
    [ -t 1 ] && tty=1
    while IFS= read -r line; do
        printf '%s\n' "$line" >>"$log"
        if [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
            n=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]}
            pct=$(( m > 0 ? n * 100 / m : 100 ))
            if [ "$tty" = 1 ]; then
                printf '\r    [%d/%d] %d %%' "$n" "$m" "$pct"
            elif [ $((pct / 10)) -ne "$shown" ]; then
                shown=$((pct / 10))
                printf '    [%d/%d] %d %%\n' "$n" "$m" "$pct"
            fi
        fi
    done
    if [ "$tty" = 1 ]; then printf '\n'; fi
}

# build_step NAME LOG COMMAND...: a build (ninja, or cmake --build with the Ninja generator) with its
# progress shown.
build_step() {
    local name=$1 log=$2; shift 2
    step_start "$name"
    local rc errexit=0
    case $- in *e*) errexit=1 ;; esac
    set +e
    "$@" 2>&1 | progress "$log"
    rc=${PIPESTATUS[0]}
    [ "$errexit" = 1 ] && set -e
    [ "$rc" -eq 0 ] || step_fail "$log"
    step_end
}

# steps_begin: the command a user ran starts the list of step times (unless a caller did).
steps_begin() {
    if [ -z "${KOB_STEPS_LOG:-}" ]; then
        mkdir -p build
        export KOB_STEPS_LOG=$PWD/build/steps.log
        : >"$KOB_STEPS_LOG"
        _steps_owner=1
        _steps_t0=$(date +%s)
    fi
}

# steps_report: every step's time, and the whole command's (by the command that began the list).
steps_report() {
    [ "${_steps_owner:-0}" = 1 ] || return 0
    printf '\ntime taken:\n'
    local s name
    while IFS=$'\t' read -r s name; do
        printf '  %14s  %s\n' "$(_step_time "$s")" "$name"
    done <"$KOB_STEPS_LOG"
    printf '  %14s  %s\n' "$(_step_time $(( $(date +%s) - _steps_t0 )))" "in all"
}
