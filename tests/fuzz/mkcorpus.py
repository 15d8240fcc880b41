#!/usr/bin/env python3
"""mkcorpus.py: write the seed corpus of tests/fuzz (corpus/NAME/seed-*).

The seeds are valid inputs of each target: helper conversations, journals,
launcher environments, rendezvous URLs, durations. Run it after a change of
the protocol (proto.h), the journal records (journal.c) or the fixtures;
the files it writes are committed. Usage: python3 tests/fuzz/mkcorpus.py
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "launcher-env")

# proto.h: frame types and constants (host byte order: little-endian here).
HELLO, WELCOME, ERROR, ARRIVE, ACK, RELEASE, PROGRESS, TIMEOUT, ABORTED, \
    FINISH, ABORT, STATUS, TEXT, STOP, FAILED = range(1, 16)
BARRIER, RESULT = 1, 2
JOB, NODE = 0, 1
WAIT, SOURCE = 0, 1
VERSION = 1


def u8(v): return struct.pack("<B", v)
def u32(v): return struct.pack("<I", v)
def i64(v): return struct.pack("<q", v)
def s(t): b = t.encode() if isinstance(t, str) else t; return u32(len(b)) + b


def frame(t, body=b""):
    return u32(len(body) + 1) + u8(t) + body


def hello(rank, world, lrank, lsize, node=0, nnodes=1, job="fuzz", version=VERSION):
    return frame(HELLO, u32(version) + s(job) + b"".join(
        i64(v) for v in (rank, world, lrank, lsize, node, nnodes)))


def arrive(key, op=BARRIER, scope=JOB, role=WAIT, nonce=1, gen=-1, source=0,
           status=0, timeout=0, progress=0):
    return frame(ARRIVE, u8(op) + u8(scope) + u8(role) + s(key) + b"".join(
        i64(v) for v in (nonce, gen, source, status, timeout, progress)))


def finish(status, payload=b""):
    return frame(FINISH, i64(status) + s(payload))


def rec(client, data=b"", hangup=False, timers=False):
    """A record of fuzz_helper's input: control byte, u16 length, bytes."""
    ctl = client | (4 if hangup else 0) | (8 if timers else 0)
    return u8(ctl) + struct.pack("<H", len(data)) + data


def write(name, seeds):
    d = os.path.join(HERE, "corpus", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for seed, data in seeds.items():
        with open(os.path.join(d, "seed-" + seed), "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)


def main():
    write("frames", {
        "hello": hello(0, 4, 0, 2, 0, 2),
        "welcome": frame(WELCOME, u32(VERSION) + i64(1234)),
        "error": frame(ERROR, s("expected HELLO first")),
        "arrive": arrive("b:epoch", nonce=77, timeout=30000, progress=10000),
        "ack": frame(ACK, i64(3)),
        "release": frame(RELEASE, i64(1) + s("1 (exit 1)") + s(b"payload\n")),
        "progress": frame(PROGRESS, s("1/2 arrived; missing: rank 1 (node 0)")),
        "timeout": frame(TIMEOUT, s("1/2 arrived")),
        "aborted": frame(ABORTED, s("rank 0: boom")),
        "finish": finish(0, b"value"),
        "abort": frame(ABORT, s("boom")),
        "status": frame(STATUS),
        "text": frame(TEXT, s("job fuzz, node 0 of 1\nnothing in flight\n")),
        "stop": frame(STOP),
        "failed": frame(FAILED, s("rendezvous unreachable")),
        "conversation": hello(1, 2, 1, 2) + arrive("c:v", op=RESULT) + frame(STATUS),
    })

    two = rec(0, hello(0, 2, 0, 2)) + rec(1, hello(1, 2, 1, 2))
    write("helper", {
        "barrier1": rec(0, hello(0, 1, 0, 1) + arrive("b:x") + frame(STATUS) + frame(STOP)),
        "barrier2": two + rec(0, arrive("b:step", nonce=5)) + rec(1, frame(STATUS))
        + rec(1, arrive("b:step", nonce=6, status=1)) + rec(0, arrive("b:step", nonce=7)),
        "retry": two + rec(0, arrive("b:r", nonce=9)) + rec(0, b"", hangup=True)
        + rec(0, hello(0, 2, 0, 2) + arrive("b:r", nonce=9)) + rec(1, arrive("b:r", nonce=3)),
        "broadcast": two
        + rec(0, arrive("c:val", op=RESULT, role=SOURCE, nonce=11))
        + rec(1, arrive("c:val", op=RESULT, nonce=12))
        + rec(0, finish(0, b"hello world")),
        "wait-died": two
        + rec(0, arrive("w:upload", op=RESULT, role=SOURCE, nonce=21))
        + rec(1, arrive("w:upload", op=RESULT, nonce=22))
        + rec(0, b"", hangup=True) + rec(1, frame(STATUS)),
        "main-first": two
        + rec(0, arrive("m:prep", op=RESULT, scope=NODE, role=SOURCE))
        + rec(1, arrive("m:prep", op=RESULT, scope=NODE)) + rec(0, finish(0)),
        "abort": two + rec(1, arrive("b:x")) + rec(0, frame(ABORT, s("boom")))
        + rec(0, frame(STATUS)) + rec(1, arrive("b:y")),
        "timers": rec(0, hello(0, 3, 0, 3)) + rec(1, hello(1, 3, 1, 3))
        + rec(0, arrive("b:slow", timeout=1000, progress=500))
        + rec(1, arrive("w:x", op=RESULT, source=2, progress=500)) + rec(0, b"", timers=True),
        "twonodes": rec(0, hello(2, 4, 0, 2, 1, 2)) + rec(1, hello(3, 4, 1, 2, 1, 2))
        + rec(0, arrive("m:local", op=RESULT, scope=NODE, role=SOURCE)) + rec(1, frame(STATUS)),
        "split-frame": rec(0, hello(0, 1, 0, 1)[:7]) + rec(0, hello(0, 1, 0, 1)[7:])
        + rec(0, arrive("b:s")),
        "bad-version": rec(0, hello(0, 1, 0, 1, version=99)),
        "no-hello": rec(0, arrive("b:x")) + rec(1, u32(0) + u8(1)),
    })

    write("journal", {
        "barrier": "J 2 2 0 1\nH 0 0\nH 1 1\nA 0 0 1 0 0 0 0 123 b:x\n"
                   "A 1 0 1 0 0 0 0 456 b:x\nA 0 1 1 0 0 0 1 124 b:x\n",
        "broadcast": "J 2 2 0 1\nH 0 0\nH 1 1\nA 0 0 2 0 1 0 0 1 c:v\nF 0 0 5 c:v\nhello\n"
                     "A 1 0 2 0 0 0 0 2 c:v\n",
        "lost": "J 2 4 1 2\nH 0 2\nH 1 3\nA 0 0 2 0 1 2 0 5 w:up\nA 1 0 2 0 0 2 0 6 w:up\nL 0 w:up\n",
        "abort": "J 3 3 0 1\nH 1 1\nA 1 0 1 0 0 0 0 7 b:x\nX 1 out of memory on GPU 1\n",
        "compacted": "J 2 2 0 1\nH 0 0\nH 1 1\nN 0 40 39 0 b:loop\nN 1 40 39 0 b:loop\n"
                     "A 0 39 1 0 0 0 0 0 b:loop\nA 1 39 1 0 0 0 0 0 b:loop\nX -1 rank 0: stop\n",
        "node-scope": "J 2 4 0 2\nA 0 0 2 1 1 0 0 8 m:prep\nF 0 0 0 m:prep\n\nA 1 0 2 1 0 0 0 9 m:prep\n",
        "torn": "J 1 1 0 1\nA 0 0 1 0 0 0 0 1 b:x\nA 0 1 1 0",
    })

    env = {}
    for launch in sorted(os.listdir(FIXTURES)):
        d = os.path.join(FIXTURES, launch)
        if not os.path.isdir(d):
            continue
        for rank in ("rank0.env", "rank1.env"):
            p = os.path.join(d, rank)
            if os.path.exists(p):
                with open(p) as f:
                    env[launch + "-" + rank[:-4]] = f.read()
    env.update({
        "explicit": "ACCELCTL_RANK=3\nACCELCTL_WORLD_SIZE=8\nACCELCTL_LOCAL_RANK=1\n"
                    "ACCELCTL_LOCAL_WORLD_SIZE=2\nACCELCTL_NODE_RANK=1\nACCELCTL_NNODES=4\n"
                    "ACCELCTL_JOB_ID=my.job-1\n",
        "deepspeed": "RANK=1\nWORLD_SIZE=2\nLOCAL_RANK=1\nLOCAL_SIZE=2\nCROSS_RANK=0\n"
                     "CROSS_SIZE=1\nTORCHELASTIC_RUN_ID=x\nTORCHELASTIC_RESTART_COUNT=2\n",
        "slurm-uneven": "SLURM_PROCID=4\nSLURM_STEP_NUM_TASKS=5\nSLURM_LOCALID=0\n"
                        "SLURM_NODEID=2\nSLURM_STEP_NUM_NODES=3\nSLURM_STEP_ID=0\n"
                        "SLURM_JOB_ID=99\nSLURM_STEP_TASKS_PER_NODE=2(x2),1\n",
        "mpich-in-slurm": "PMI_RANK=1\nPMI_SIZE=4\nSLURM_PROCID=1\nSLURM_NTASKS=4\n"
                          "SLURM_LOCALID=1\nSLURM_NODEID=0\nSLURM_JOB_NUM_NODES=2\n"
                          "SLURM_STEPID=3\nSLURM_JOB_ID=7\nSLURM_TASKS_PER_NODE=2(x2)\n"
                          "PMI_KVSNAME=kvs_1_0\n",
    })
    write("env", env)

    write("rdvurl", {
        "host": "redis://127.0.0.1:6379",
        "password": "redis://:secret@node1:6380/2",
        "user": "redis://acc:secret@redis.example.org:6379/0",
        "ipv6": "redis://[::1]:6379",
        "unix": "unix:///run/redis/redis.sock",
        "file": "redis://h:1\0secret\n",
    })

    write("duration", {
        d: d for d in ("90s", "30m", "2h", "500ms", "10", "1d", "0", "720h")
    })


if __name__ == "__main__":
    main()
