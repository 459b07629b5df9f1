#!/bin/bash
# Two processes under the preload, connected only by the RoCE bridge (bridge.h): server and
# client of ibv_rc/ud/srq_pingpong and of the perftest programs that work (tools/exec/README.md),
# each pair with small counts and a timeout, exchanging their QP data over TCP on 127.0.0.1.
# Skips (and says why) without the programs or without a loopback to bind 127.10.x.y on.
set -u
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-qptwin}/tools/exec"
lib="$(cd "$dir" && pwd)/libqptwin_verbs.so"
tmp="${TEST_TMPDIR:-/tmp}/two_process.$$"
mkdir -p "$tmp"
# Under --config=asan the preload links libasan, which must come first (verbs_loopback_test.sh).
asan=$(ldd "$lib" | awk '/libasan/ { print $3; exit }')
if [ -n "$asan" ]; then
  lib="$asan:$lib"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
if [ ! -x /usr/bin/ibv_rc_pingpong ]; then
  echo "SKIPPED: /usr/bin/ibv_rc_pingpong missing (Debian's ibverbs-utils)"; exit 0
fi
if ! LD_PRELOAD="$lib" QPTWIN_BRIDGE=on ibv_devinfo -v 2>&1 | grep -q '::ffff:127\.10\.'; then
  echo "SKIPPED: the bridge cannot bind 127.10.x.y:4791 here (no loopback?):"
  LD_PRELOAD="$lib" QPTWIN_BRIDGE=on ibv_devinfo -v 2>&1 | grep -E 'GID|qptwin' | head -5
  exit 0
fi

# A TCP port nobody listens on now (the kernel picks it; pingpong then binds it again).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
    2>/dev/null || echo $((20000 + ($$ * 7 + RANDOM) % 20000))
}

failed=0
# pair NAME SERVER_ENV -- PROGRAM ARGS...: runs server and client; both must exit 0 and the
# client's output must match the pattern $expect.
pair() {
  local name=$1 env=$2; shift 3
  local port; port=$(free_port)
  env LD_PRELOAD="$lib" QPTWIN_PROFILE=rxe $env timeout 60 "$@" -p "$port" >"$tmp/$name.srv" 2>&1 &
  local spid=$!
  local crc=1 try
  # The server listens once it has set up; retry the client's connect until it does.
  for try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    sleep 0.3
    env LD_PRELOAD="$lib" QPTWIN_PROFILE=rxe $env timeout 60 "$@" -p "$port" 127.0.0.1 \
      >"$tmp/$name.cli" 2>&1
    crc=$?
    if [ $crc -eq 0 ] || ! grep -qiE "couldn't connect|connect.*refused|Unable to open file descriptor" "$tmp/$name.cli"; then
      break
    fi
  done
  wait $spid
  local src=$?
  if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -qE "$expect" "$tmp/$name.cli"; then
    echo "ok    $name: $(grep -E "$expect" "$tmp/$name.cli" | tail -1 | tr -s ' \t' ' ')"
  else
    echo "FAIL  $name: server exit $src, client exit $crc"
    echo "--- server:"; tail -15 "$tmp/$name.srv"; echo "--- client:"; tail -15 "$tmp/$name.cli"
    failed=1
  fi
}

expect='iters in'
pair rc_pingpong "" -- ibv_rc_pingpong -g 0 -d qptwin0 -n 200
pair ud_pingpong "" -- ibv_ud_pingpong -g 0 -d qptwin0 -n 200
pair srq_pingpong "" -- ibv_srq_pingpong -g 0 -d qptwin0 -n 100
if [ -x /usr/bin/ib_write_bw ]; then
  expect='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+'
  pair write_bw "" -- ib_write_bw -d qptwin0 -x 0 -s 8 -n 2000
  pair send_bw "" -- ib_send_bw -d qptwin0 -x 0 -s 4096 -n 200
  pair read_bw "" -- ib_read_bw -d qptwin0 -x 0 -s 4096 -n 200
  pair atomic_bw "" -- ib_atomic_bw -d qptwin0 -x 0 -n 200
  # The UD server only receives: the first datagram turns its bridge on.
  pair send_bw_ud "" -- ib_send_bw -d qptwin0 -x 0 -c UD -s 1024 -n 200
  pair send_lat "" -- ib_send_lat -d qptwin0 -x 0 -n 200
  pair read_lat "" -- ib_read_lat -d qptwin0 -x 0 -n 200
  # ib_write_lat spins on memory between verbs calls: the model needs its own thread.
  pair write_lat "QPTWIN_MODEL_THREAD=dedicated" -- ib_write_lat -d qptwin0 -x 0 -n 200
else
  echo "perftest not installed: its pairs not run"
fi
rm -rf "$tmp"
if [ $failed -ne 0 ]; then exit 1; fi
echo "PASS: every pair completed"
