#!/usr/bin/env python3
"""tools/slurm/ end to end on a real one-node Slurm cluster started on localhost (CTest
`tools.slurm_cluster`): Debian's munged, slurmctld and slurmd (tools/install-deps.sh installs them),
each with its own configuration, key, socket, ports and state in a temporary folder, stopped at the
end whatever happens. On it, tools/slurm/submit.sh runs a 3-task job array of `vkspec bench
--shard I/3` on the shipped 8x8 model and the dependent merge job; the merged table, every image's
tokens and forwards, and the merged .npz must equal a one-process run's. Then one shard's samples
are deleted (a failed task): the merge must fail naming that shard, and after the shard is
submitted again the merge succeeds with the same result.

Skipped (77) when the Slurm or munge programs are missing, or when the daemons cannot bring the
node up (their logs are printed): what this container allows is outside the test's control.

usage: test_slurm_cluster.py VKSPEC_BINARY ASSETS_DIR
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = ["munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "scancel"]
IMAGES, SHARDS = 6, 3
# Per-image and per-run numbers that must not depend on how the seeds were split (times do).
SAME = ["images", "nfe_mean", "draft_forwards_mean", "head_forwards_mean", "all_forwards_mean",
        "accepted_length_mean", "islands_mean", "class_accuracy", "dispatches_per_image"]
RECORD = ["seed", "class", "tokens", "nfe", "draft_forwards", "islands"]


def find(name):
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no file)\n"


class Cluster:
    """munged + slurmctld + slurmd in the foreground as children of this process, in folder d."""

    def __init__(self, d):
        self.d, self.procs = d, []
        self.env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"))

    def path(self, name):
        return os.path.join(self.d, name)

    def start(self):
        # munged refuses a socket in a folder (or under one) that others cannot enter.
        for folder in (os.path.dirname(self.d), self.d):
            os.chmod(folder, 0o755)
        with open(self.path("munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.path("munge.key"), 0o400)
        sock = self.path("munge.sock")
        self.spawn("munged", [find("munged"), "-F", "--key-file", self.path("munge.key"), "--socket", sock,
                              "--pid-file", self.path("munged.pid"), "--log-file", self.path("munged.log"),
                              "--seed-file", self.path("munged.seed")])
        self.wait_for(lambda: os.path.exists(sock), 10, "munged's socket")
        host = socket.gethostname()
        for sub in ("state", "spool"):
            os.mkdir(self.path(sub))
        # Containers have no cgroups to give Slurm: processes are tracked by parent id, tasks are not
        # bound, nothing is accounted. CPUs=2 lets two array tasks run at once.
        conf = f"""ClusterName=vkspectest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={self.path("state")}
SlurmdSpoolDir={self.path("spool")}
SlurmctldPidFile={self.path("slurmctld.pid")}
SlurmdPidFile={self.path("slurmd.pid")}
SlurmctldLogFile={self.path("slurmctld.log")}
SlurmdLogFile={self.path("slurmd.log")}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=vkspecnode NodeHostname={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.path("slurm.conf"), "w") as f:
            f.write(conf)
        self.spawn("slurmctld", [find("slurmctld"), "-D", "-c"])
        self.spawn("slurmd", [find("slurmd"), "-D", "-N", "vkspecnode"])
        self.wait_for(lambda: self.run(["sinfo", "-h", "-o", "%T"], check=False).stdout.strip() == "idle", 30,
                      "the node to be idle")

    def spawn(self, name, argv):
        out = open(self.path(f"{name}.out"), "w")
        self.procs.append((name, subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=self.env)))

    def wait_for(self, ready, seconds, what):
        end = time.time() + seconds
        while time.time() < end:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise NodeDown(f"{name} exited ({p.returncode}) while waiting for {what}")
            if ready():
                return
            time.sleep(0.3)
        raise NodeDown(f"no {what} after {seconds} s")

    def logs(self):
        return "".join(f"--- {n}\n{tail(self.path(n))}" for n in
                       ("munged.out", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"))

    def run(self, argv, check=True, **kw):
        r = subprocess.run(argv, capture_output=True, text=True, env=kw.pop("env", self.env), timeout=60, **kw)
        if check and r.returncode:
            raise RuntimeError(f"{' '.join(argv)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
        return r

    def state(self, job):
        """The states of a job's tasks: {"123_0": "COMPLETED", ...} (slurmctld keeps them MinJobAge s)."""
        r = self.run(["scontrol", "-o", "show", "job", str(job)], check=False)
        states = {}
        for line in r.stdout.splitlines():
            f = dict(w.split("=", 1) for w in line.split() if "=" in w)
            task = f.get("ArrayTaskId")
            states[f["JobId"] if task is None else f"{f['ArrayJobId']}_{task}"] = f.get("JobState")
        return states

    def wait_jobs(self, jobs, seconds):
        end = time.time() + seconds
        while time.time() < end:
            states = {k: v for j in jobs for k, v in self.state(j).items()}
            if states and all(s not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING") for s in states.values()):
                return states
            time.sleep(1)
        raise RuntimeError(f"jobs {jobs} not done after {seconds} s: {states}\n{self.logs()}")

    def stop(self):
        if any(name == "slurmctld" and p.poll() is None for name, p in self.procs):
            self.run(["scancel", "--user", "root", "--full"], check=False)  # jobs left by a failure
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


class NodeDown(Exception):
    pass


def read_samples(path):
    """A sample file's per-image columns (safetensors: u64 header size, JSON header, raw tensors)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    types = {"I64": np.int64, "I32": np.int32, "F32": np.float32}
    cols = {}
    for name, t in header.items():
        if name != "__metadata__":
            b, e = t["data_offsets"]
            cols[name] = np.frombuffer(data[b:e], dtype=types[t["dtype"]]).reshape(t["shape"])
    return header["__metadata__"], cols


def records(folder):
    """method -> seed -> the columns of RECORD, over every sample file in folder."""
    out = {}
    for name in sorted(os.listdir(folder)):
        meta, cols = read_samples(os.path.join(folder, name))
        for i, seed in enumerate(cols["seed"]):
            out.setdefault(meta["method"], {})[int(seed)] = [cols[c][i].tolist() for c in RECORD]
    return out


def compare(one, merged, where):
    failures = []
    a = {r["method"]: r for r in one["results"]}
    b = {r["method"]: r for r in merged["results"]}
    if sorted(a) != sorted(b):
        return [f"{where}: methods {sorted(a)} != {sorted(b)}"]
    for m in a:
        for key in SAME:
            if a[m][key] != b[m][key]:
                failures.append(f"{where}: {m} {key}: one process {a[m][key]!r}, merged {b[m][key]!r}")
    return failures


def main():
    vkspec, assets = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    missing = [p for p in PROGRAMS if not find(p)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed (tools/install-deps.sh installs slurmctld, slurmd, "
              "slurm-client and munge)")
        return 77
    bench = ["--model", os.path.join(assets, "fmnist_gpt8.safetensors"), "--classifier", "none",
             "--methods", "ar,scd-mc", "--images", str(IMAGES), "--warmup", "0"]
    failures = []
    with tempfile.TemporaryDirectory(prefix="vkspec-slurm-") as d:
        cluster = Cluster(os.path.join(d, "cluster"))
        os.mkdir(cluster.d)
        try:
            t0 = time.time()
            try:
                cluster.start()
            except NodeDown as e:
                print(f"SKIP: the one-node Slurm cluster did not come up in this environment: {e}\n{cluster.logs()}")
                return 77
            print(f"cluster up in {time.time() - t0:.1f} s")

            # The one-process run to compare with, outside Slurm.
            one = os.path.join(d, "one")
            os.mkdir(one)
            t0 = time.time()
            cluster.run([vkspec, "bench"] + bench + ["--samples", one, "--json", os.path.join(d, "one.json"),
                                                    "--npz", os.path.join(d, "one.npz")])
            print(f"one-process run: {time.time() - t0:.1f} s")

            out = os.path.join(d, "out")
            t0 = time.time()
            ids = cluster.run([os.path.join(HERE, "submit.sh"), out, str(SHARDS), "--"] + bench,
                              env=dict(cluster.env, VKSPEC=vkspec), cwd=d).stdout.split()
            array, merge = ids
            states = cluster.wait_jobs([array, merge], 240)
            print(f"array {array} + merge {merge}: {time.time() - t0:.1f} s, {states}")
            if set(states.values()) != {"COMPLETED"} or len(states) != SHARDS + 1:
                failures.append(f"jobs did not all complete: {states}")
            for name in sorted(os.listdir(os.path.join(out, "logs"))):
                text = open(os.path.join(out, "logs", name), errors="replace").read()
                if any(w in text for w in ("Validation Error", "Validation Warning", "VUID-", "SYNC-HAZARD")):
                    failures.append(f"validation message in logs/{name}:\n{text[-2000:]}")
            if failures:
                print("\n".join(failures) + "\n" + "".join(
                    f"--- {n}\n{tail(os.path.join(out, 'logs', n))}" for n in sorted(os.listdir(os.path.join(out, "logs")))))
                return 1
            one_json = json.load(open(os.path.join(d, "one.json")))
            failures += compare(one_json, json.load(open(os.path.join(out, "report.json"))), "merged table")
            mine, theirs = records(one), records(os.path.join(out, "samples"))
            if mine != theirs:
                failures.append("per-image seeds, classes, tokens or forwards differ between the one-process run and "
                                "the shards")
            shard_files = sorted(os.listdir(os.path.join(out, "samples")))
            if len(shard_files) != 2 * SHARDS:
                failures.append(f"expected one sample file per method and shard, found {shard_files}")
            for m in ("ar", "scd-mc"):
                a = np.load(os.path.join(d, f"one_{m}.npz"))
                b = np.load(os.path.join(out, f"images_{m}.npz"))
                for key in ("arr_0", "tokens", "labels"):
                    if not np.array_equal(a[key], b[key]):
                        failures.append(f"images_{m}.npz: {key} differs from the one-process run's")
            print(open(os.path.join(out, "report.txt")).read())

            # A failed task: shard 1's samples are gone. The merge names it; running it again mends it.
            for name in shard_files:
                if name.endswith(f"_seed{IMAGES // SHARDS}.safetensors"):
                    os.remove(os.path.join(out, "samples", name))
            os.remove(os.path.join(out, "report.json"))
            merge2 = cluster.run(["sbatch", "--parsable", "--output", os.path.join(out, "logs", "merge2.out"),
                                  os.path.join(HERE, "merge.sbatch"), out], cwd=d).stdout.strip()
            states = cluster.wait_jobs([merge2], 60)
            said = tail(os.path.join(out, "logs", "merge.log"), 20)
            if states.get(merge2) != "FAILED" or f"shard 1/{SHARDS}" not in said:
                failures.append(f"merge without shard 1: {states}, said:\n{said}")
            else:
                print(f"merge without shard 1 failed as it should:\n{said}")
            t0 = time.time()
            again = cluster.run(["sbatch", "--parsable", "--array=1", "--output",
                                 os.path.join(out, "logs", "slurm_%A_%a.out"), os.path.join(HERE, "bench_array.sbatch"),
                                 out], cwd=d).stdout.strip()
            merge3 = cluster.run(["sbatch", "--parsable", f"--dependency=afterok:{again}", "--output",
                                  os.path.join(out, "logs", "merge3.out"), os.path.join(HERE, "merge.sbatch"), out],
                                 cwd=d).stdout.strip()
            states = cluster.wait_jobs([again, merge3], 120)
            print(f"shard 1 again + merge: {time.time() - t0:.1f} s, {states}")
            if set(states.values()) != {"COMPLETED"}:
                failures.append(f"shard 1 again and the merge: {states}\n{tail(os.path.join(out, 'logs', 'merge.log'))}")
            else:
                failures += compare(one_json, json.load(open(os.path.join(out, "report.json"))), "merged after the rerun")
                if records(os.path.join(out, "samples")) != mine:
                    failures.append("after the rerun of shard 1 the images differ from the one-process run")
        except Exception:
            print(cluster.logs())
            raise
        finally:
            cluster.stop()
    if failures:
        print("FAILED:\n" + "\n".join(failures))
        return 1
    print(f"OK: {SHARDS}-task Slurm array + merge equals the one-process run; a lost shard is named and mended")
    return 0


if __name__ == "__main__":
    sys.exit(main())
