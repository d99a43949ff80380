# Sourced by scripts/window-check and scripts/shots: an X server of our own.
#
#   start_xvfb WIDTHxHEIGHT WORKDIR
#
# Xvfb picks a free display itself (-displayfd) and writes its number once it accepts connections,
# so no other X server on this machine (a stale lock, a socket in the abstract namespace, another
# CI job's server) can be mistaken for ours. It never resets (-noreset): by default an X server
# resets when its last client leaves, and a client that connects meanwhile is refused ("Failed to
# open connection to X server"); the probe below is such a last client, and the window came right
# after it, one start in four. Sets DISPLAY (exported) and xvfb_pid; exits loudly,
# with Xvfb's own log, if the server does not come up or is not the one answering.
start_xvfb() {
    local size="$1" work="$2"
    Xvfb -displayfd 3 -noreset -screen 0 "${size}x24" -nolisten tcp 3>"$work/xvfb.display" >"$work/xvfb.log" 2>&1 &
    xvfb_pid=$!
    local number=""
    for _ in $(seq 200); do
        number="$(head -1 "$work/xvfb.display" 2>/dev/null || true)"
        [[ "$number" =~ ^[0-9]+$ ]] && break
        kill -0 "$xvfb_pid" 2>/dev/null || break
        sleep 0.1
    done
    if ! [[ "$number" =~ ^[0-9]+$ ]]; then
        echo "$(basename "$0"): Xvfb did not start" >&2
        cat "$work/xvfb.log" >&2
        exit 1
    fi
    export DISPLAY=":$number"
    xdotool getdisplaygeometry >/dev/null || {
        echo "$(basename "$0"): Xvfb said $DISPLAY but it does not answer" >&2
        cat "$work/xvfb.log" >&2
        exit 1
    }
}

# Why the app could not reach the X server, for the log of a failed check.
explain_xvfb() {
    local work="$1"
    if kill -0 "$xvfb_pid" 2>/dev/null; then
        echo "$(basename "$0"): Xvfb ($xvfb_pid) is still running on $DISPLAY" >&2
    else
        echo "$(basename "$0"): Xvfb ($xvfb_pid) has exited" >&2
    fi
    cat "$work/xvfb.log" >&2
}
