#!/bin/sh
# machine-vm.private-paths: a command whose current directory, script and
# data lie in the host's /tmp (a build tree made there) runs in the guest,
# which mounts its own /tmp: machine_vm.py shares such paths read-only at
# the same place, and OUT inside them stays writable. Boots machine A once
# (about a minute under TCG). docs/design.md section 7.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=$(mktemp -d /tmp/topsync-private-paths.XXXXXX)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/bin" "$tree/out"
echo "data-from-the-host's-tmp" > "$tree/data"
cat > "$tree/bin/probe.sh" <<'PROBE'
#!/bin/sh
echo "cwd=$(pwd)"
cat ./data
touch ./written-by-guest 2>/dev/null && echo "the tree is writable" || echo "the tree is read-only"
echo guest-wrote-out > "$1/from-guest"
PROBE
chmod +x "$tree/bin/probe.sh"
cd "$tree" || exit 1
python3 "$here/machine_vm.py" A "$tree/out" -- "$tree/bin/probe.sh" "$tree/out" > "$tree/log" 2>&1
rc=$?
failed=0
check() { # WHAT PATTERN
    if grep -q "$2" "$tree/log"; then
        echo "PASS: $1"
    else
        echo "FAIL: $1 (no '$2' in the run's output)"
        failed=1
    fi
}
[ $rc -eq 0 ] && echo "PASS: the command ran (exit 0)" || { echo "FAIL: exit $rc"; failed=1; }
check "the tree under /tmp is shared" "sharing $tree read-only"
check "the current directory is the host's" "cwd=$tree\$"
check "a file of the tree is read" "data-from-the-host's-tmp"
check "the shared tree is read-only" "the tree is read-only"
if [ "$(cat "$tree/out/from-guest" 2>/dev/null)" = guest-wrote-out ]; then
    echo "PASS: OUT inside the shared tree is writable"
else
    echo "FAIL: OUT inside the shared tree did not get the guest's file"
    failed=1
fi
[ $failed = 0 ] || sed 's/^/  | /' "$tree/log"
exit $failed
