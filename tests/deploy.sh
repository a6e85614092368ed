#!/usr/bin/env bash
# tests/deploy.sh [BUILD] — the OCI image and deploy/kubernetes/ played on podman, on 127.0.0.1
# only: hostNetwork pods, no bridge, no address or route added anywhere (docs/deploy.md).
#
#   image       tools/oci.sh builds localhost/skiff:latest and BUILD/skiff-oci.tar from BUILD;
#               the image is at most 30 MiB; its config says entry point /usr/bin/skiff, the
#               default command serving /etc/skiff/sites.conf, user 65532; the archive is an OCI
#               layout (oci-layout, index.json) whose config says the same user
#   run         `podman run IMAGE` with a sites file mounted at /etc/skiff (the default command)
#               answers 200 on 127.0.0.1; its process has uid and gid 65532 and no capability
#               (from /proc/PID/status, read on the host); the cold start to the first 200 is
#               printed.  `podman run IMAGE serve --stack linux --port N ...` runs the command
#               given instead, and the unikernel images are in the image (served from
#               /usr/lib/skiff, byte for byte the stripped files)
#   run.skiff-stack
#               the image on skiff's own stack (--dev packet:vs0, in a network namespace of this
#               run, 198.18.0.0/24): with every capability dropped it fails naming CAP_NET_RAW;
#               with NET_RAW alone it answers 200 from the other namespace
#   local.diff  deploy/kubernetes/local/skiff.yaml is ../skiff.yaml with exactly the changes its
#               header lists (this script makes them and compares), so the two cannot drift
#   play        the local manifest played 3 times, on 3 free loopback ports (names and port
#               replaced): each replica answers the ConfigMap's page; each runs read-only, as
#               65532, with no capability and no_new_privs, and has its own control socket
#               (its own /tmp: podman makes the emptyDir a named volume)
#   probes      every probe of ../skiff.yaml (readiness and liveness: path, port) answers 200
#               on each replica
#   kill        `skiff proxy` (127.0.0.1) over the 3 under wrk; one replica is killed (SIGKILL,
#               no drain): wrk sees 0 errors and 0 non-2xx answers (idempotent requests are
#               retried), the proxy marked that upstream down; the replica is started again
#               and answers
#   rolling     under wrk, each replica in turn: stopped (SIGTERM, podman pod stop -t the
#               manifest's terminationGracePeriodSeconds), which drains and exits 0, then played
#               again with release 2 of the page and waited on until /healthz answers; wrk sees
#               0 errors, and every replica serves release 2 afterwards
#   proxy       SIGTERM stops the proxy with status 0
#   cleanup     no pod, container or volume of this run is left
#
# podman runs with deploy/podman/containers.conf (CONTAINERS_CONF: runc, cgroupfs, ulimits);
# the machine's own podman configuration is not read and not changed.  Pods and volumes are named
# skt<pid>-rN, removed by name on exit.  Root (podman's store).  Run it under
# flock /tmp/skiff-nettest.lock (make deploy-test and tests/run-all.sh do).
# Environment: DEPLOY_KILL_SECS (wrk's run around the kill, default 8), DEPLOY_ROLL_SECS (the
# window the rolling update must fit in, default 35).
set -u
cd "$(dirname "$0")/.."
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=deploy
case ${1:-} in
-h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
esac
BUILD=${1:-build}
KILL_SECS=${DEPLOY_KILL_SECS:-8}
ROLL_SECS=${DEPLOY_ROLL_SECS:-35}
IMAGE=localhost/skiff:latest
REAL=deploy/kubernetes/skiff.yaml
LOCAL=deploy/kubernetes/local/skiff.yaml
export CONTAINERS_CONF=$PWD/deploy/podman/containers.conf

[ "$(id -u)" -eq 0 ] || { echo "$0: needs root (podman's system store)" >&2; exit 2; }
skt_need tools podman runc catatonit wrk curl python3 ip || { summary; exit 1; }
[ -x "$BUILD/skiff" ] || { fail setup "$BUILD/skiff is missing (make)"; summary; exit 1; }

TAG=skt$$
WORK=$(mktemp -d /tmp/skiff-deploy.XXXXXX)
PODS=() VOLS=() CTRS=() PX_PID= WRK_PID=
cleanup() {
	local p
	[ -n "$WRK_PID" ] && kill "$WRK_PID" 2>/dev/null
	[ -n "$PX_PID" ] && kill "$PX_PID" 2>/dev/null
	for p in "${CTRS[@]}"; do podman rm -f -t 0 "$p" >/dev/null 2>&1; done
	for p in "${PODS[@]}"; do podman pod rm -f -t 0 "$p" >/dev/null 2>&1; done
	for p in "${VOLS[@]}"; do podman volume rm -f "$p" >/dev/null 2>&1; done
	skt_cleanup
	if [ "$SKT_FAILED" -eq 0 ]; then rm -rf "$WORK"; else echo "deploy: logs kept in $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# What a run that crashed left: pods, containers and volumes named skt<pid>-* whose pid is gone.
stale_cleanup() {
	local name pid
	while read -r kind name; do
		[[ $name =~ ^skt([0-9]+)- ]] || continue
		pid=${BASH_REMATCH[1]}
		[ "$pid" != $$ ] && ! kill -0 "$pid" 2>/dev/null || continue
		echo "deploy: removing $kind $name, left by run $pid"
		case $kind in
		pod) podman pod rm -f -t 0 "$name" ;;
		ctr) podman rm -f -t 0 "$name" ;;
		vol) podman volume rm -f "$name" ;;
		esac >/dev/null 2>&1
	done < <(podman pod ps --format 'pod {{.Name}}'; podman ps -a --format 'ctr {{.Names}}'
		podman volume ls --format 'vol {{.Name}}')
}
stale_cleanup

# code URL: the HTTP status of a GET (000: no answer), within 2 s.
code() { curl -s -o /dev/null -m 2 -w '%{http_code}' "$1"; }
ok200() { [ "$(code "$1")" = 200 ]; }
now_ms() { date +%s%3N; }
# proc_ids PID: "uid gid capeff nonewprivs" of a host process, from /proc.
proc_ids() {
	awk '/^Uid:/ { u = $2 } /^Gid:/ { g = $2 } /^CapEff:/ { c = $2 } /^NoNewPrivs:/ { n = $2 }
	     END { print u, g, c, n }' "/proc/$1/status" 2>/dev/null
}
# wrk_judge NAME FILE: wrk's report must show requests, and no error or non-2xx/3xx answer.
wrk_judge() {
	local name=$1 f=$2 n
	n=$(awk '/requests in/ { print $1 }' "$f")
	if [ -z "$n" ] || [ "$n" -eq 0 ]; then
		fail "$name" "wrk made no request: $(tr '\n' ' ' <"$f" | tail -c 300)"
	elif grep -qE 'Socket errors|Non-2xx' "$f"; then
		fail "$name" "$(grep -E 'Socket errors|Non-2xx' "$f" | tr '\n' ' ')($n requests)"
	else
		pass "$name" "$n requests, 0 errors"
	fi
}

# ---- image ------------------------------------------------------------
if ! tools/oci.sh "$BUILD" >"$WORK/oci.log" 2>&1; then
	fail image "tools/oci.sh failed: $(tail -n 3 "$WORK/oci.log")"
	summary
	exit 1
fi
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
if [ "$size" -le $((30 << 20)) ]; then
	pass image.size "$((size / 1024)) KiB (goal <= 30 MiB)"
else
	fail image.size "$((size / 1024)) KiB, more than 30 MiB"
fi
cfg=$(podman image inspect --format '{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}' "$IMAGE")
want='65532:65532|["/usr/bin/skiff"]|["serve","--config","/etc/skiff/sites.conf"]'
[ "$cfg" = "$want" ] && pass image.config "$cfg" || fail image.config "got $cfg, want $want"
arch=$(python3 - "$BUILD/skiff-oci.tar" <<'EOF'
import json, sys, tarfile
t = tarfile.open(sys.argv[1])
names = set(t.getnames())
if "oci-layout" not in names or "index.json" not in names:
    sys.exit("no oci-layout or index.json")
blob = lambda d: json.load(t.extractfile("blobs/" + d.replace(":", "/")))
man = blob(json.load(t.extractfile("index.json"))["manifests"][0]["digest"])
print(blob(man["config"]["digest"])["config"]["User"])
EOF
)
[ "$arch" = 65532:65532 ] && pass image.archive "$BUILD/skiff-oci.tar: OCI layout, user $arch" ||
	fail image.archive "$BUILD/skiff-oci.tar: $arch"

# ---- run: the default command on a mounted sites file, and a command given -----------------
P0=$(skt_free_port)
mkdir -p "$WORK/etc"
cat >"$WORK/etc/sites.conf" <<EOF
site run.test {
    listen 127.0.0.1:$P0;
    default;
    route = /healthz { return 200 "ok\n"; }
}
EOF
t0=$(now_ms)
CTRS+=("$TAG-run")
if podman run -d --name "$TAG-run" --network host --read-only --cap-drop ALL \
	-v "$WORK/etc:/etc/skiff:ro" "$IMAGE" >"$WORK/run.log" 2>&1 &&
	skt_wait_for 10 ok200 "http://127.0.0.1:$P0/healthz"; then
	pass run.default "200 from the default command, $(($(now_ms) - t0)) ms from podman run (cold start)"
	ids=$(proc_ids "$(podman inspect --format '{{.State.Pid}}' "$TAG-run")")
	# uid gid CapEff: 65532, 65532, none.
	case $ids in
	"65532 65532 0000000000000000 "*) pass run.nonroot "uid gid capeff: $ids" ;;
	*) fail run.nonroot "uid gid capeff nonewprivs: '$ids'" ;;
	esac
else
	fail run.default "no 200 on 127.0.0.1:$P0: $(tail -n 3 "$WORK/run.log"; podman logs "$TAG-run" 2>&1 | tail -n 3)"
fi
podman rm -f -t 0 "$TAG-run" >/dev/null 2>&1

P0=$(skt_free_port)
CTRS+=("$TAG-cmd")
if podman run -d --name "$TAG-cmd" --network host --read-only --cap-drop ALL "$IMAGE" \
	serve --stack linux --ip 127.0.0.1 --port "$P0" --root /usr/lib/skiff >"$WORK/cmd.log" 2>&1 &&
	skt_wait_for 10 ok200 "http://127.0.0.1:$P0/skiff-uk.elf"; then
	curl -s -m 10 -o "$WORK/uk.elf" "http://127.0.0.1:$P0/skiff-uk.elf"
	if cmp -s "$WORK/uk.elf" "$BUILD/oci/root/usr/lib/skiff/skiff-uk.elf"; then
		pass run.command "serve --stack linux --port $P0: the unikernel image, $(stat -c %s "$WORK/uk.elf") bytes"
	else
		fail run.command "/skiff-uk.elf differs from $BUILD/oci/root/usr/lib/skiff/skiff-uk.elf"
	fi
else
	fail run.command "no 200 on 127.0.0.1:$P0: $(podman logs "$TAG-cmd" 2>&1 | tail -n 3)"
fi
podman rm -f -t 0 "$TAG-cmd" >/dev/null 2>&1

# ---- run.skiff-stack: the image on skiff's own stack needs CAP_NET_RAW (packet:), and only it --
# In namespaces of this run (tests/lib.sh skt_topo_veth: cli's vc0 198.18.0.1, srv's vs0 for
# skiff), the container joined to srv's; nothing on the host's network.
stk_said() { podman logs "$TAG-stk" 2>&1 | grep -q "$1"; }
stk_ok() {
	got=$(ip netns exec "$SKT_NS_L" curl -s -o /dev/null -m 2 -w '%{http_code}' \
		"http://$SKT_SKIFF_IP:8080/skiff-uk.elf")
	[ "$got" = 200 ]
}
skt_cleanup_stale
if skt_topo_veth off; then
	for caps in none NET_RAW; do
		add=()
		[ "$caps" = none ] || add=(--cap-add "$caps")
		CTRS+=("$TAG-stk")
		podman run -d --name "$TAG-stk" --network "ns:/run/netns/$SKT_NS_S" --read-only --cap-drop ALL \
			"${add[@]}" "$IMAGE" serve --stack skiff --dev packet:vs0 --ip "$SKT_SKIFF_IP/24" --port 8080 \
			--root /usr/lib/skiff >"$WORK/stk-$caps.log" 2>&1
		got=000
		if [ "$caps" = none ]; then
			# It must fail, and say which capability it lacks.
			skt_wait_for 10 stk_said 'needs CAP_NET_RAW'
			msg=$(podman logs "$TAG-stk" 2>&1 | tail -n 1)
			case $msg in
			*"needs CAP_NET_RAW"*) pass run.skiff-stack.nocap "$msg" ;;
			*) fail run.skiff-stack.nocap "with no capability: '$msg'" ;;
			esac
		elif skt_wait_for 10 stk_ok; then
			ids=$(proc_ids "$(podman inspect --format '{{.State.Pid}}' "$TAG-stk")")
			pass run.skiff-stack "--stack skiff --dev packet:vs0 with NET_RAW only: 200; uid gid capeff: ${ids% *}"
		else
			fail run.skiff-stack "with NET_RAW: $got; $(podman logs "$TAG-stk" 2>&1 | tail -n 2)"
		fi
		podman rm -f -t 0 "$TAG-stk" >/dev/null 2>&1
	done
else
	fail run.skiff-stack "could not make the namespaces"
fi
skt_cleanup

# ---- local.diff: the local manifest is the real one with the changes its header lists -------
if python3 - "$REAL" "$LOCAL" >"$WORK/diff.log" 2>&1 <<'EOF'; then
import difflib, sys
real, local = (open(p).read() for p in sys.argv[1:3])
# The header comments differ; the manifests start at the first apiVersion.
body = lambda s: s[s.index("apiVersion:"):]
def cut(s, start, indent):
    """s without the block at `indent` spaces that starts with `start` (the line and the
    deeper-indented lines under it)."""
    out, skip = [], False
    for ln in s.split("\n"):
        if skip and ln.strip() and len(ln) - len(ln.lstrip(" ")) > indent:
            continue
        skip = ln == " " * indent + start
        if not skip:
            out.append(ln)
    return "\n".join(out)
want = body(real)
want = want.replace("        listen *:8080;", "        listen 127.0.0.1:8080;")
want = want.replace("  replicas: 3\n", "  replicas: 1\n")
want = want.replace("    spec:\n      terminationGracePeriodSeconds:",
                    "    spec:\n      hostNetwork: true\n      terminationGracePeriodSeconds:")
want = want.replace("imagePullPolicy: IfNotPresent", "imagePullPolicy: Never")
want = cut(want, "ports:", 10)
want = cut(want, "livenessProbe:", 10)
want = want[:want.index("---\napiVersion: v1\nkind: Service")]
got = body(local)
if got != want:
    sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                               "expected", sys.argv[2], n=1))
    sys.exit(1)
EOF
	pass local.diff "$LOCAL = $REAL with the listed changes"
else
	fail local.diff "$(head -c 600 "$WORK/diff.log")"
fi

# ---- play: 3 replicas --------------------------------------------------
GRACE=$(awk '/terminationGracePeriodSeconds:/ { print $2; exit }' "$REAL")
# manifest I PORT RELEASE: the local manifest for replica I: its port, its names (skt<pid>-rI:
# the Deployment, so the pod is skt<pid>-rI-pod-0, its container, the two ConfigMaps and the
# emptyDir, which podman makes named volumes of: left as they are, the replicas would share one
# /tmp and its control socket) and the release of its page.
manifest() {
	sed -e "s/8080/$2/g" -e "s/release 1/release $3/" \
		-e "s/^\\( *\\(- \\)\\{0,1\\}name: \\)skiff\\(-sites\\|-www\\|-tmp\\)\\{0,1\\}\$/\\1$TAG-r$1\\3/" \
		"$LOCAL" >"$WORK/r$1-v$3.yaml"
	echo "$WORK/r$1-v$3.yaml"
}
pod() { echo "$TAG-r$1-pod-0"; }
ctr() { echo "$TAG-r$1-pod-0-$TAG-r$1"; }
# play I RELEASE: play replica I and wait until it answers /healthz; prints ms to the first 200.
play() {
	local f t0
	f=$(manifest "$1" "${PORT[$1]}" "$2")
	PODS+=("$(pod "$1")")
	VOLS+=("$TAG-r$1-sites" "$TAG-r$1-www" "$TAG-r$1-tmp")
	t0=$(now_ms)
	podman kube play "$f" >"$WORK/play-r$1-v$2.log" 2>&1 || return 1
	skt_wait_for 10 ok200 "http://127.0.0.1:${PORT[$1]}/healthz" || return 1
	echo $(($(now_ms) - t0))
}
# unplay I: stop replica I as the kubelet would (SIGTERM, then SIGKILL after the grace period),
# judge its drain, remove its pod and volumes (podman keeps ConfigMap volumes, and would serve
# the old page from them).
unplay() {
	local c rc
	c=$(ctr "$1")
	podman pod stop -t "$GRACE" "$(pod "$1")" >/dev/null 2>&1
	rc=$(podman inspect --format '{{.State.ExitCode}}' "$c")
	podman logs "$c" >"$WORK/r$1-stop.log" 2>&1
	podman pod rm -f -t 0 "$(pod "$1")" >/dev/null 2>&1
	podman volume rm -f "$TAG-r$1-sites" "$TAG-r$1-www" "$TAG-r$1-tmp" >/dev/null 2>&1
	if [ "$rc" != 0 ] || ! grep -q 'drained in' "$WORK/r$1-stop.log"; then
		echo "replica $1: exit $rc; $(tail -n 2 "$WORK/r$1-stop.log" | tr '\n' ' ')"
		return 1
	fi
	grep -o 'draining [0-9]* connections' "$WORK/r$1-stop.log" | tail -n 1
}

declare -A PORT
for i in 1 2 3; do PORT[$i]=$(skt_free_port); done
for i in 1 2 3; do
	if ms=$(play "$i" 1); then
		body=$(curl -s -m 2 "http://127.0.0.1:${PORT[$i]}/")
		case $body in
		*"release 1"*) pass "play.r$i" "127.0.0.1:${PORT[$i]}, first 200 $ms ms after podman kube play" ;;
		*) fail "play.r$i" "GET / answered '$body'" ;;
		esac
	else
		fail "play.r$i" "no 200 on 127.0.0.1:${PORT[$i]}: $(tail -n 3 "$WORK/play-r$i-v1.log"; podman logs "$(ctr "$i")" 2>&1 | tail -n 3)"
	fi
done
c=$(ctr 1)
ro=$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$c" 2>/dev/null)
ids=$(proc_ids "$(podman inspect --format '{{.State.Pid}}' "$c" 2>/dev/null)")
if [ "$ro" = true ] && [ "$ids" = "65532 65532 0000000000000000 1" ]; then
	pass play.security "read-only root; uid gid capeff nonewprivs: $ids"
else
	fail play.security "read-only root: '$ro'; uid gid capeff nonewprivs: '$ids'"
fi

# Each replica's control socket (skiff stat) in its own /tmp: no "control: cannot listen".
bad=
for i in 1 2 3; do
	podman logs "$(ctr "$i")" 2>&1 | grep -q 'control: cannot listen' && bad="$bad r$i"
done
[ -z "$bad" ] && pass play.control "each replica's control socket in its own /tmp" ||
	fail play.control "control socket not made on:$bad ($(podman logs "$(ctr 3)" 2>&1 | grep control | head -n 1))"

# ---- probes: every probe of the real manifest, on every replica -----------------------------
probes=$(awk '/(readiness|liveness|startup)Probe:/ { k = $1 } k && /path:/ { p = $2 }
	k && /port:/ { print k, p, $2; k = "" }' "$REAL")
if [ "$(wc -l <<<"$probes")" -lt 2 ]; then
	fail probes "found only '$probes' in $REAL"
else
	bad=
	while read -r kind path port; do
		[ "$port" = 8080 ] || { bad="$bad $kind port $port is not the listener's (8080)"; continue; }
		for i in 1 2 3; do
			got=$(code "http://127.0.0.1:${PORT[$i]}$path")
			[ "$got" = 200 ] || bad="$bad r$i:$kind$path=$got"
		done
	done <<<"$probes"
	[ -z "$bad" ] && pass probes "$(echo $probes)" || fail probes "$bad"
fi

# ---- kill one replica under load, behind skiff proxy -----------------------------------------
PX=$(skt_free_port)
UPS="127.0.0.1:${PORT[1]},127.0.0.1:${PORT[2]},127.0.0.1:${PORT[3]}"
# fail-timeout 2: a replica taken out is tried again soon, before the rolling update.
"$BUILD/skiff" proxy --stack linux --ip 127.0.0.1 --port "$PX" --upstream "$UPS" \
	--fail-timeout 2 --drain-timeout 5 --stats >"$WORK/proxy.log" 2>&1 &
PX_PID=$!
if ! skt_wait_for 10 ok200 "http://127.0.0.1:$PX/"; then
	fail proxy.start "$(tail -n 3 "$WORK/proxy.log")"
	summary
	exit 1
fi

wrk -t2 -c16 -d"${KILL_SECS}s" "http://127.0.0.1:$PX/" >"$WORK/wrk-kill.log" 2>&1 &
WRK_PID=$!
sleep 3
podman kill -s KILL "$(ctr 2)" >/dev/null 2>&1 || fail kill "podman kill $(ctr 2) failed"
wait "$WRK_PID"
WRK_PID=
wrk_judge kill.wrk "$WORK/wrk-kill.log"
# The kubelet would start it again; so does the test.
t0=$(now_ms)
if podman pod start "$(pod 2)" >/dev/null 2>&1 && skt_wait_for 10 ok200 "http://127.0.0.1:${PORT[2]}/healthz"; then
	pass kill.restart "replica 2 answers again, $(($(now_ms) - t0)) ms after podman pod start"
else
	fail kill.restart "replica 2: $(podman logs "$(ctr 2)" 2>&1 | tail -n 2)"
fi

# ---- rolling update: each replica drained, replaced by release 2 -----------------------------
sleep 2 # the proxy's fail-timeout: replica 2 is back in its rotation
wrk -t2 -c16 -d"${ROLL_SECS}s" "http://127.0.0.1:$PX/" >"$WORK/wrk-roll.log" 2>&1 &
WRK_PID=$!
t0=$(now_ms)
sleep 1
for i in 1 2 3; do
	if drain=$(unplay "$i"); then
		pass "rolling.r$i.drain" "exit 0, $drain"
	else
		fail "rolling.r$i.drain" "$drain"
	fi
	if ms=$(play "$i" 2); then
		pass "rolling.r$i.up" "release 2 answers /healthz $ms ms after podman kube play"
	else
		fail "rolling.r$i.up" "$(tail -n 3 "$WORK/play-r$i-v2.log")"
	fi
	sleep 1 # as readinessProbe's period would: the next goes once this one is in
done
took=$(($(now_ms) - t0))
if kill -0 "$WRK_PID" 2>/dev/null; then
	pass rolling.window "the update took $took ms, inside wrk's ${ROLL_SECS} s"
else
	fail rolling.window "the update took $took ms, longer than wrk's ${ROLL_SECS} s (DEPLOY_ROLL_SECS)"
fi
wait "$WRK_PID"
WRK_PID=
wrk_judge rolling.wrk "$WORK/wrk-roll.log"
bad=
for i in 1 2 3; do
	curl -s -m 2 "http://127.0.0.1:${PORT[$i]}/" | grep -q "release 2" || bad="$bad r$i"
done
b=$(curl -s -m 2 "http://127.0.0.1:$PX/")
case $b in *"release 2"*) ;; *) bad="$bad proxy" ;; esac
[ -z "$bad" ] && pass rolling.release "every replica and the proxy serve release 2" ||
	fail rolling.release "not release 2 on:$bad"

# ---- the proxy: passive health took replica 2 out; SIGTERM ends it ---------------------------
kill -TERM "$PX_PID"
wait "$PX_PID"
rc=$?
PX_PID=
downs=$(awk -v k="proxy.upstream.127.0.0.1:${PORT[2]}.downs" '$1 == k { print $2 }' "$WORK/proxy.log")
retries=$(awk '$1 == "proxy.retries" { print $2 }' "$WORK/proxy.log")
if [ "${downs:-0}" -ge 1 ]; then
	pass kill.passive "replica 2 marked down $downs times; proxy.retries $retries"
else
	fail kill.passive "proxy.upstream.127.0.0.1:${PORT[2]}.downs is '${downs}' (retries '$retries')"
fi
[ "$rc" = 0 ] && pass proxy.stop "SIGTERM: exit 0" || fail proxy.stop "exit $rc: $(tail -n 2 "$WORK/proxy.log")"

# ---- cleanup -----------------------------------------------------------
for i in 1 2 3; do
	podman pod rm -f -t 0 "$(pod "$i")" >/dev/null 2>&1
	podman volume rm -f "$TAG-r$i-sites" "$TAG-r$i-www" "$TAG-r$i-tmp" >/dev/null 2>&1
done
left=$( (podman pod ps --format '{{.Name}}'; podman ps -a --format '{{.Names}}'
	podman volume ls --format '{{.Name}}') | grep "^$TAG-" | tr '\n' ' ')
[ -z "$left" ] && pass cleanup "no pod, container or volume named $TAG-* left" || fail cleanup "left: $left"
summary
