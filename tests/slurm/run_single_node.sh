#!/usr/bin/env bash
# Starts a single-node Slurm cluster (munged, slurmctld, slurmd) on loopback in a temporary
# folder, runs the given command with SLURM_CONF pointing at it, then stops the daemons and
# removes the folder. Needs Debian's slurm-wlm and munge packages (not their services: no
# system-wide configuration, key or daemon is used or changed) and root or a user who may run
# slurmd. Exit 77 (ctest: skipped) when the packages are missing. GPUMUX_SLURM_KEEP=1 keeps
# the folder (configuration and daemon logs) for a look after a failure.
# Usage: tests/slurm/run_single_node.sh COMMAND [ARGS...]   (exit status: the command's)
set -euo pipefail
for tool in munged slurmctld slurmd sbatch squeue; do
  command -v "$tool" >/dev/null || { echo "run_single_node: $tool not found (apt-get install slurm-wlm munge)" >&2; exit 77; }
done
tmp=$(mktemp -d /tmp/gpumux-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ "${GPUMUX_SLURM_KEEP:-0}" == 1 ]]; then echo "run_single_node: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# Free TCP ports for slurmctld and slurmd (asked of the kernel, so parallel runs do not clash).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1",0))
print(*[x.getsockname()[1] for x in s])')

mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool"
chmod 700 "$tmp/munge"
head -c 1024 /dev/urandom > "$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
user=$(id -un)
# -F: foreground (its pid is ours to stop); --force: root and a key in /tmp are accepted.
munged -F --force --socket="$tmp/munge/munge.sock" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/munged.seed" > "$tmp/munge/munged.out" 2>&1 &
pids+=($!)

cpus=$(nproc)
cat > "$tmp/slurm.conf" <<CONF
ClusterName=gpumuxtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MaxArraySize=1001
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$tmp/slurm.conf"
for i in $(seq 50); do [[ -S "$tmp/munge/munge.sock" ]] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" > "$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" > "$tmp/slurmd.out" 2>&1 &
pids+=($!)
# Ready when the node is idle.
for i in $(seq 100); do
  if sinfo -h -o '%t' 2>/dev/null | grep -q '^idle'; then break; fi
  sleep 0.2
done
if ! sinfo -h -o '%t' 2>/dev/null | grep -q '^idle'; then
  echo "run_single_node: the node did not become idle in 20 s; logs:" >&2
  tail -n 20 "$tmp"/*.log "$tmp"/*.out "$tmp/munge/munged.out" >&2 || true
  exit 1
fi
rc=0
"$@" || rc=$?
exit $rc
