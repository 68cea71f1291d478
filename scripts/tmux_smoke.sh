#!/usr/bin/env bash
# End-to-end smoke test of the live app in a real terminal (tmux), as a user drives it:
#
#   1. start `kscope COPY --device cpu` on a copy of samples/add_relu.py, in a detached tmux
#      session of a given size, and wait for the first report (cpp_fused_add_relu_0, "done in");
#   2. save an edit the way editors do (write a temp file, mv it over the target):
#      (a + b).relu() -> (a + b).relu() * 2; wait for cpp_fused_add_mul_relu_0, eager 2 -> 3;
#   3. revert with a plain in-place save (same inode); wait for cpp_fused_add_relu_0, eager 3 -> 2;
#   4. press q: the app must exit within 5 s, leaving none of the processes it started.
#
# Every screen that matters is printed, so a human can read what the user saw. Run this before
# calling UI work done, at both sizes:
#
#   scripts/tmux_smoke.sh                 # 120x40
#   scripts/tmux_smoke.sh --size 80x24    # the SSH-laptop size: narrow layout
#
# Environment:
#   KSCOPE   command that starts kscope (default: "${PYTHON:-python3} -m kscope")
#   PYTHON   interpreter for the default command and for nothing else (default: python3)
#   SMOKE_TIMEOUT   seconds to wait for each run (default: 90)
#   SMOKE_KEEP=1    keep the temp dir (it is printed) instead of deleting it
#
# Exit status: 0 all steps passed; 1 a step failed (the message names it); 2 usage / no tmux.
# samples/ is never touched: everything happens on a copy in a fresh temp dir. The tmux server is
# a private one (its own socket, no user config), killed on exit whatever happens.

set -u -o pipefail

SIZE="120x40"
POLL_S=0.5
RUN_TIMEOUT_S="${SMOKE_TIMEOUT:-90}"
QUIT_TIMEOUT_S=5

# What the screens must show; the app's wording, in one place.
OLD_KERNEL="cpp_fused_add_relu_0"
NEW_KERNEL="cpp_fused_add_mul_relu_0"
DONE="done in"
OLD_LINE="(a + b).relu()"
NEW_LINE="(a + b).relu() * 2"

usage() {
    sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"
    echo "usage: $0 [--size WIDTHxHEIGHT]"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --size) [ $# -ge 2 ] || { usage >&2; exit 2; }; SIZE="$2"; shift 2 ;;
        --size=*) SIZE="${1#--size=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "tmux_smoke: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
done
if ! [[ "$SIZE" =~ ^([0-9]+)x([0-9]+)$ ]]; then
    echo "tmux_smoke: --size wants WIDTHxHEIGHT, e.g. 80x24; got '$SIZE'" >&2
    exit 2
fi
WIDTH="${BASH_REMATCH[1]}"
HEIGHT="${BASH_REMATCH[2]}"
if ! command -v tmux >/dev/null 2>&1; then
    echo "tmux_smoke: tmux is not installed" >&2
    exit 2
fi

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SAMPLE="$REPO/samples/add_relu.py"
KSCOPE_CMD="${KSCOPE:-${PYTHON:-python3} -m kscope}"
TAG="[$SIZE]"
T0=$SECONDS

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kscope-smoke.XXXXXX")" || { echo "tmux_smoke: mktemp failed" >&2; exit 2; }
TARGET="$WORK/add_relu.py"
ORIGINAL="$WORK/original/add_relu.py"  # outside the watched folder
SOCKET="kscope-smoke-$$-$RANDOM"
SESSION="smoke"
SEEN="$WORK/descendants"  # "PID ARGS" of every process kscope started, as seen while it ran
# Processes started by this run carry KSCOPE_SMOKE_RUN=$SOCKET in their environment (see marked).
: >"$SEEN"
APP_PID=""  # kscope (or the wrapper $KSCOPE names): the child of the pane's shell
EXIT_FILE="$WORK/exit_status"  # the pane's shell writes kscope's exit status here
STEP="setup"
SCREEN=""

tm() { tmux -L "$SOCKET" -f "$WORK/tmux.conf" "$@"; }

cleanup() {
    local rc=$?
    tm kill-server >/dev/null 2>&1
    # A failed run must not leak workers either: kill what we saw, if it is still the same process.
    if [ -s "$SEEN" ]; then
        while read -r pid args; do
            [ "$(args_of "$pid")" = "$args" ] && kill -KILL "$pid" 2>/dev/null
        done <"$SEEN"
    fi
    if [ "${SMOKE_KEEP:-0}" = 1 ]; then
        echo "$TAG temp dir kept: $WORK"
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

log() { printf '%s %3ds  %s\n' "$TAG" $((SECONDS - T0)) "$*"; }

show() {  # show TITLE: print the screen as captured last
    printf '\n%s ===== %s =====\n' "$TAG" "$1"
    printf '%s\n' "$SCREEN"
    printf '%s ===== end =====\n\n' "$TAG"
}

fail() {
    echo
    echo "$TAG FAIL [$STEP]: $*"
    if [ -n "$SCREEN" ]; then show "last screen ($STEP)"; fi
    exit 1
}

capture() { SCREEN="$(tm capture-pane -p -t "$SESSION" 2>/dev/null)"; }

has() { grep -qF -- "$1" <<<"$SCREEN"; }

# The kernel named as a current kernel: on a line of its own, not in a pane's "gone: …" note.
shows_kernel() { grep -F -- "$1" <<<"$SCREEN" | grep -vqF "gone:"; }

descendants() {  # descendants PID -> "PID ARGS" lines, every generation
    ps -A -o pid= -o ppid= -o args= 2>/dev/null | awk -v root="$1" '
        { pid[NR] = $1; ppid[NR] = $2; $1 = ""; $2 = ""; sub(/^  /, ""); args[NR] = $0 }
        END {
            want[root] = 1; changed = 1
            while (changed) {
                changed = 0
                for (i = 1; i <= NR; i++) if ((ppid[i] in want) && !(pid[i] in want)) { want[pid[i]] = 1; changed = 1 }
            }
            for (i = 1; i <= NR; i++) if (pid[i] != root && (pid[i] in want)) print pid[i], args[i]
        }'
}

# Linux: every process that carries this run's marker in its environment (kscope and all it
# started, even one re-parented away from it), as "PID ARGS" lines.
marked() {
    local f pid
    for f in $(grep -lsaF "KSCOPE_SMOKE_RUN=$SOCKET" /proc/[0-9]*/environ 2>/dev/null); do
        pid="${f#/proc/}"; pid="${pid%/environ}"
        [ "$pid" = "$APP_PID" ] || echo "$pid $(args_of "$pid")"
    done
}

record_descendants() {
    [ -n "$APP_PID" ] || return 0
    { descendants "$APP_PID"; marked; } | grep -v ' $' >>"$SEEN"
    sort -u -o "$SEEN" "$SEEN"
}

args_of() { ps -o args= -p "$1" 2>/dev/null | awk '{ $1 = $1; print }'; }

app_alive() { [ -n "$APP_PID" ] && kill -0 "$APP_PID" 2>/dev/null; }

exit_status() { cat "$EXIT_FILE" 2>/dev/null; }

pane_dead() { [ "$(tm display-message -p -t "$SESSION" '#{pane_dead}' 2>/dev/null)" = 1 ]; }

# wait_for SECONDS WHAT CONDITION: poll the screen until `eval CONDITION` holds; fail, saying
# what was awaited, on a timeout or if kscope dies meanwhile.
wait_for() {
    local timeout="$1" what="$2" cond="$3" start=$SECONDS
    while :; do
        capture
        record_descendants
        if eval "$cond"; then return 0; fi
        if pane_dead || ! app_alive; then
            fail "kscope exited (status $(exit_status)) while waiting for $what"
        fi
        if [ $((SECONDS - start)) -ge "$timeout" ]; then
            fail "timed out after ${timeout}s waiting for $what"
        fi
        sleep "$POLL_S"
    done
}

# At narrow sizes the layout stacks and the whole screen scrolls: the compiled kernels pane is
# below the fold. Reach it the way a user would (tab to the next pane, which scrolls it into
# view), check, then tab back and press Home so the next step starts from the top again.
expect_kernel() {
    local name="$1" tabs=0
    if shows_kernel "$name"; then
        return 0
    fi
    log "NOTE: $name is not on the visible screen at $SIZE; pressing tab to scroll to the next pane"
    while [ $tabs -lt 4 ]; do
        tm send-keys -t "$SESSION" Tab
        tabs=$((tabs + 1))
        local i=0
        while [ $i -lt 4 ]; do
            sleep 0.25
            capture
            if shows_kernel "$name"; then break 2; fi
            i=$((i + 1))
        done
    done
    shows_kernel "$name" || fail "$name is nowhere on screen, even after $tabs tab(s)"
    log "$name visible after $tabs tab(s)"
    show "$STEP: after $tabs tab(s), scrolled to the kernel"
    while [ $tabs -gt 0 ]; do
        tm send-keys -t "$SESSION" BTab
        tabs=$((tabs - 1))
        sleep 0.2
    done
    tm send-keys -t "$SESSION" Home
    local i=0
    while [ $i -lt 12 ]; do  # scrolling is animated: give it up to 3 s
        sleep 0.25
        capture
        if has "╭─ launches / call"; then return 0; fi
        i=$((i + 1))
    done
    log "NOTE: shift+tab ×$tabs and Home did not scroll back to the top (no 'launches / call' title on screen)"
}

# --- setup -----------------------------------------------------------------------------------------

[ -f "$SAMPLE" ] || fail "no sample at $SAMPLE"
grep -qF -- "$OLD_LINE" "$SAMPLE" || fail "$SAMPLE no longer contains '$OLD_LINE'; update this script"
mkdir -p "$WORK/original"
cp "$SAMPLE" "$TARGET" && cp "$SAMPLE" "$ORIGINAL" || fail "could not copy the sample to $WORK"
cat >"$WORK/tmux.conf" <<'EOF'
set -g status off
set -g remain-on-exit on
set -g default-shell /bin/sh
set -g history-limit 5000
EOF

log "kscope command: $KSCOPE_CMD"
log "target: $TARGET"
# faulthandler: if kscope hangs on quit, SIGABRT makes it print where (see step 4).
export PYTHONFAULTHANDLER="${PYTHONFAULTHANDLER:-1}"
# The pane runs a shell that runs kscope and records its exit status: the shell reaps kscope, so
# "kscope has exited" is plain to see (tmux 3.3 was seen to leave its own direct child a zombie).
tm new-session -d -s "$SESSION" -x "$WIDTH" -y "$HEIGHT" -c "$REPO" \
    "KSCOPE_SMOKE_RUN=$SOCKET $KSCOPE_CMD '$TARGET' --device cpu; echo \$? >'$EXIT_FILE'" ||
    fail "tmux could not start a session"
got_size="$(tm display-message -p -t "$SESSION" '#{pane_width}x#{pane_height}')"
[ "$got_size" = "$SIZE" ] || fail "the tmux pane is $got_size, not $SIZE"
PANE_PID="$(tm display-message -p -t "$SESSION" '#{pane_pid}')"
for _ in $(seq 50); do
    APP_PID="$(pgrep -P "$PANE_PID" | head -1)"
    [ -n "$APP_PID" ] && break
    [ -s "$EXIT_FILE" ] && { capture; fail "kscope exited at once (status $(exit_status))"; }
    sleep 0.1
done
[ -n "$APP_PID" ] || { capture; fail "no kscope process under the pane's shell (pid $PANE_PID)"; }
log "kscope running as pid $APP_PID in a ${got_size} tmux pane"

# --- 1. first run ----------------------------------------------------------------------------------

STEP="first run"
wait_for "$RUN_TIMEOUT_S" "'$DONE' and 'launches 2 → 1'" 'has "$DONE" && has "launches 2 → 1"'
log "first report on screen"
show "first run: top of the screen"
expect_kernel "$OLD_KERNEL"

# --- 2. atomic save (temp file + mv) ---------------------------------------------------------------

STEP="edit (atomic save)"
tmp="$WORK/.add_relu.py.tmp$$"
sed "s/(a + b)\.relu()\$/(a + b).relu() * 2/" "$TARGET" >"$tmp" || fail "could not write $tmp"
grep -qF -- "$NEW_LINE" "$tmp" || fail "the edit did not apply to $TARGET"
inode_before="$(ls -i "$TARGET" | awk '{print $1}')"
mv -f "$tmp" "$TARGET" || fail "mv over $TARGET failed"
[ "$(ls -i "$TARGET" | awk '{print $1}')" != "$inode_before" ] || fail "mv kept the inode: not an atomic save"
log "saved '$NEW_LINE' by mv (new inode)"
wait_for "$RUN_TIMEOUT_S" "'$DONE', 'Δ eager: launches 2→3' and 'launches 3 → 1'" \
    'has "$DONE" && has "Δ eager: launches 2→3" && has "launches 3 → 1"'
log "edited report on screen"
show "after the edit: top of the screen"
expect_kernel "$NEW_KERNEL"
shows_kernel "$OLD_KERNEL" && fail "$OLD_KERNEL is still shown as a current kernel after the edit"

# --- 3. in-place save reverting it ---------------------------------------------------------------------

STEP="revert (in-place save)"
inode_before="$(ls -i "$TARGET" | awk '{print $1}')"
cat "$ORIGINAL" >"$TARGET" || fail "could not write $TARGET"
[ "$(ls -i "$TARGET" | awk '{print $1}')" = "$inode_before" ] || fail "the in-place save changed the inode"
log "saved the original back in place (same inode)"
wait_for "$RUN_TIMEOUT_S" "'$DONE', 'Δ eager: launches 3→2' and 'launches 2 → 1'" \
    'has "$DONE" && has "Δ eager: launches 3→2" && has "launches 2 → 1"'
log "reverted report on screen"
show "after the revert: top of the screen"
expect_kernel "$OLD_KERNEL"
shows_kernel "$NEW_KERNEL" && fail "$NEW_KERNEL is still shown as a current kernel after the revert"
capture
show "final screen before quitting"

# --- 4. quit ---------------------------------------------------------------------------------------

STEP="quit"
record_descendants
workers="$(grep -F "kscope.worker.forkserver" "$SEEN" | awk '{print $1}' | tr '\n' ' ')"
[ -n "$workers" ] || fail "never saw a kscope.worker.forkserver process (the fork server, its workers) under pid $APP_PID"
log "processes kscope started during the run (kscope.worker.forkserver pids: $workers):"
cut -c1-150 "$SEEN" | sed 's/^/        /'
tm send-keys -t "$SESSION" q
quit_start=$(date +%s.%N 2>/dev/null || date +%s)
deadline=$((SECONDS + QUIT_TIMEOUT_S))
left=""
while :; do
    left=""
    while read -r pid args; do
        [ "$(args_of "$pid")" = "$args" ] && left="$left$pid $args"$'\n'
    done <"$SEEN"
    left="$(printf '%s\n%s' "$left" "$(marked)" | sort -u | grep -v '^$')"  # + any started since the last look
    if ! app_alive && [ -s "$EXIT_FILE" ] && pane_dead && [ -z "$left" ]; then break; fi
    if [ $SECONDS -ge $deadline ]; then
        capture
        if app_alive; then
            # Where is it stuck? Its threads (Linux), then every Python thread's stack: faulthandler
            # (PYTHONFAULTHANDLER=1 above) prints them to the pane on SIGABRT.
            log "kscope (pid $APP_PID) still running ${QUIT_TIMEOUT_S}s after q:"
            for task in /proc/"$APP_PID"/task/*; do
                [ -e "$task/stat" ] && printf '        thread %s %s state=%s wchan=%s\n' "${task##*/}" \
                    "$(cat "$task/comm" 2>/dev/null)" "$(awk '{print $3}' "$task/stat" 2>/dev/null)" "$(cat "$task/wchan" 2>/dev/null)"
            done
            descendants "$APP_PID" | cut -c1-160 | sed 's/^/        child /'
            kill -ABRT "$APP_PID" 2>/dev/null
            sleep 1
            tm capture-pane -p -t "$SESSION" -S - 2>/dev/null | grep -v '^[[:space:]]*$'
            SCREEN=""
            fail "kscope (pid $APP_PID) still running ${QUIT_TIMEOUT_S}s after q (its threads above)"
        fi
        [ -s "$EXIT_FILE" ] && pane_dead || fail "kscope exited but the tmux pane is still alive ${QUIT_TIMEOUT_S}s after q"
        fail "kscope exited but left processes behind after ${QUIT_TIMEOUT_S}s:"$'\n'"$left"
    fi
    sleep 0.25
done
quit_s="$(awk -v a="$quit_start" -v b="$(date +%s.%N 2>/dev/null || date +%s)" 'BEGIN { printf "%.1f", b - a }')"
status="$(exit_status)"
log "kscope exited (status $status) and every process it started is gone, ${quit_s}s after q"
[ "$status" = 0 ] || fail "kscope exited with status $status after q"
capture
# What the app left on the terminal (tmux's own "Pane is dead" line aside): normally nothing.
SCREEN="$(grep -v '^Pane is dead' <<<"$SCREEN")"
if [ -n "$(tr -d '[:space:]' <<<"$SCREEN")" ]; then show "terminal after quitting"; fi

STEP="done"
log "PASS: all steps passed at $SIZE in $((SECONDS - T0))s"
exit 0
